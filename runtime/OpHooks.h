#pragma once
// The dispatcher side of libkforge_runtime: typed CUDA-key overrides of the ATen operators named in
// core/cast/RuntimeOps.h. Each hook offers the call to the packaged kernels registered for its
// operator; the first whose guard and baked-in arguments match serves it, otherwise the original
// kernel runs through its per-backend function (at::cuda::<op>). Composite operators have their
// hooks in CompositeHooks.h.
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
#include <optional>
#include <string>
#include <vector>

namespace kforge::runtime {

/// Offers `call` to the kernels registered for `hook` ("aten::add.Tensor"): the first whose guard
/// and baked-in arguments match serves it and its outputs come back; otherwise nullopt (counted as
/// a fallback of every kernel of the hook, with the reason) and the caller runs the original.
std::optional<std::vector<at::Tensor>> serveCall(const char* hook, const HookCall& call);
/// Counts a call of `hook` that no packaged kernel may serve, for `reason` (e.g. autograd must
/// record the original's graph).
void countFallback(const char* hook, const std::string& reason);

/// Whether this build has a typed hook for `hook`.
bool hookSupported(const core::RuntimeHook& hook);
void addToRegistry(const core::RuntimeHook& hook, std::unique_ptr<PackagedKernel> kernel);
/// Registers the hooks of every operator that has kernels; destroying the libraries restores the
/// original kernels.
std::vector<std::unique_ptr<torch::Library>> registerHooks();
void clearRegistry();
/// Enables or disables kernel `id` (every kernel when `id` is empty); false when none has that id.
bool setRegistryKernelEnabled(const std::string& id, bool enabled);
/// {"kernels": [...], "fallback_reasons": {...}} for runtimeStats().
nlohmann::json registryStats();

} // namespace kforge::runtime
