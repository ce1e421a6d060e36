#pragma once
// The dispatcher side of libkforge_runtime: typed CUDA-key overrides of the ATen operators named in
// core/cast/RuntimeOps.h. Each hook offers the call to the packaged kernels registered for its
// operator; the first whose guard and baked-in arguments match serves it, otherwise the original
// kernel runs through its per-backend function (at::cuda::<op>).
//
// Counters: a kernel's `hits` counts calls it served; its `fallbacks` counts calls of its operator
// that no packaged kernel served (so with one kernel per operator, the calls that fell back).
//
// Thread: hooks run on any thread; they read an immutable snapshot of the registry, so unloading
// while a call is in flight frees nothing that call uses. add/clear are called under the runtime's
// load lock.

#include "PackagedKernel.h"
#include "cast/RuntimeOps.h"

#include <torch/library.h>

#include <memory>
#include <vector>

namespace kforge::runtime {

/// Whether this build has a typed hook for `hook`.
bool hookSupported(const core::RuntimeHook& hook);
void addToRegistry(const core::RuntimeHook& hook, std::unique_ptr<PackagedKernel> kernel);
/// Registers the hooks of every operator that has kernels; destroying the libraries restores the
/// original kernels.
std::vector<std::unique_ptr<torch::Library>> registerHooks();
void clearRegistry();
/// {"kernels": [...], "fallback_reasons": {...}} for runtimeStats().
nlohmann::json registryStats();

} // namespace kforge::runtime
