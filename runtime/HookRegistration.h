#pragma once
// Installs the dispatcher hooks of libkforge_runtime for the operators that have kernels in the
// registry being built (HookRegistry.h): plain operators through OpHooks.h, composite ones through
// CompositeHooks.h. Called under the runtime's load lock.

#include "cast/RuntimeOps.h"

#include <torch/library.h>

#include <memory>
#include <vector>

namespace kforge::runtime {

/// Whether this build has a typed hook for `hook` (region kernels: kforge::region_call).
bool hookSupported(const core::RuntimeHook& hook);
/// Registers the hooks of every operator that has kernels and publishes the registry; destroying
/// the libraries restores the original kernels.
std::vector<std::unique_ptr<torch::Library>> registerHooks();

} // namespace kforge::runtime
