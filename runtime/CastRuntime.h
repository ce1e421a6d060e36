#pragma once
// libkforge_runtime's C++ API (docs/runtime.md): load a verified .cast package into the running
// process so that PyTorch's dispatcher sends matching calls to its kernels, query the per-kernel
// hit and fallback counters, unload (which restores the original kernels).
//
// One package at a time. Loading verifies the whole package first (checksums, format, manifest,
// compatibility with this GPU); nothing is registered unless every custom kernel loads. A call
// whose guard does not hold, or whose launch the driver refuses, runs the original PyTorch kernel.
//
// Thread: load/unload/stats may be called from any thread (serialized internally); the hooks run
// on whatever thread PyTorch dispatches on.

#include "util/Result.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kforge::core {
struct CastPackage;       // cast/CastPackage.h
struct RegionKernelChain; // region_rewrite/RegionRewrite.h
} // namespace kforge::core

namespace kforge::runtime {

/// Loads `path` on the current CUDA device. Returns a handle for unload(). AlreadyExists when a
/// package is loaded; the verifier's or loader's one-line error otherwise.
core::Result<int> loadPackage(const std::string& path);

/// loadPackage of a package this process already opened and verified with core::openCast (from
/// `path`, named in errors and stats): the whole-model runs open a package once and load it once
/// per timed block, without reading and checksumming the archive (its model included) each time.
core::Result<int> loadOpenedPackage(const core::CastPackage& package, const std::string& path);

/// Unregisters every hook of the package and frees its modules. NotFound for an unknown handle.
core::Result<void> unloadPackage(int handle);

/// Lets kernel `id` of the loaded package serve calls again (true) or sends every call of its
/// operator to the original (false); an empty id means every kernel. NotFound for an unknown id.
/// Counters keep counting (a disabled kernel's calls are fallbacks with reason "disabled").
core::Result<void> setKernelEnabled(const std::string& id, bool enabled);

/// The loaded package's region kernels and their chains (RegionMethod.h prepares a model for
/// them). NotFound when no package is loaded.
core::Result<std::vector<core::RegionKernelChain>> loadedRegionKernels();

/// {"package": path or null, "kernels": [{"id", "card", "op", "hook", "hits", "fallbacks", "enabled"}, ...],
///  "fallback_reasons": {"<kernel id>": "last mismatch", ...}}
nlohmann::json runtimeStats();

} // namespace kforge::runtime
