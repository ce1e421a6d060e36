#pragma once
// The registry of libkforge_runtime: the packaged kernels of the loaded packages, filed under the
// ATen operator they serve ("aten::add.Tensor"), and serving a call from them. The typed hooks
// (OpHooks.h for plain operators, CompositeHooks.h for composite ones) offer each call here;
// HookRegistration.h installs those hooks for the operators that have kernels.
//
// Counters: a kernel's `hits` counts calls it served; its `fallbacks` counts calls of its operator
// that no packaged kernel served (so with one kernel per operator, the calls that fell back).
//
// Thread: serveCall and countFallback run on any thread; they read an immutable snapshot of the
// registry, so unloading while a call is in flight frees nothing that call uses. Adding, publishing
// and clearing happen under the runtime's load lock.

#include "cast/RuntimeOps.h"
#include "runtime/PackagedKernel.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kforge::runtime {

/// The registry key of `hook`: "aten::<op>[.<overload>]".
std::string hookKey(const core::RuntimeHook& hook);
/// Offers `call` to the kernels registered for `hook` ("aten::add.Tensor"): the first whose guard
/// and baked-in arguments match serves it and its outputs come back; otherwise nullopt (counted as
/// a fallback of every kernel of the hook, with the reason) and the caller runs the original.
std::optional<std::vector<at::Tensor>> serveCall(const char* hook, const HookCall& call);
/// Offers a fused region's call (its inputs as "in0", "in1", ...) to the region kernels named by
/// `kernelIds`, in that order, as serveCall does; nullopt when none serves it (or none of them is
/// loaded) and the caller runs the region's original ops.
std::optional<std::vector<at::Tensor>> serveRegionCall(const std::vector<std::string>& kernelIds, const HookCall& call);
/// Counts a region call that none of `kernelIds` may serve, for `reason`.
void countRegionFallback(const std::vector<std::string>& kernelIds, const std::string& reason);
/// Counts a call of `hook` that no packaged kernel may serve, for `reason` (e.g. autograd must
/// record the original's graph).
void countFallback(const char* hook, const std::string& reason);
/// Files `kernel` under `hook` in the registry being built (not served until publishRegistry()).
void addToRegistry(const core::RuntimeHook& hook, std::unique_ptr<PackagedKernel> kernel);
/// The keys of the operators that have kernels in the registry being built.
std::vector<std::string> pendingHookKeys();
/// Makes the registry being built the one served, and starts a new empty one.
void publishRegistry();
void clearRegistry();
/// Enables or disables kernel `id` (every kernel when `id` is empty); false when none has that id.
bool setRegistryKernelEnabled(const std::string& id, bool enabled);
/// {"kernels": [...], "fallback_reasons": {...}} for runtimeStats().
nlohmann::json registryStats();
/// The loaded region kernels, each {"id", "card"} with its card as cards.json writes it (arguments
/// in0.., outputs, and `region`: the chain): what a graph pass needs to find where each can serve.
nlohmann::json registryRegionKernels();

} // namespace kforge::runtime
