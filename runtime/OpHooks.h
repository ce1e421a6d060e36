#pragma once
// Typed CUDA-key overrides of the plain ATen operators named in core/cast/RuntimeOps.h (relu,
// add.Tensor, _softmax, sum.dim_IntList, cat, cumsum, avg_pool2d, ...). Each hook offers the call to the registry
// (HookRegistry.h); when no packaged kernel serves it, the original kernel runs through its
// per-backend function (at::cuda::<op>). Composite operators have their hooks in CompositeHooks.h.

#include <torch/library.h>

#include <string>

namespace kforge::runtime {

/// Whether `key` ("aten::add.Tensor") is a plain operator this build hooks.
bool plainHookKnown(const std::string& key);
/// Registers the hook of `key` on `cuda` (namespace aten, CUDA key). False when `key` is not a
/// plain hook.
bool registerPlainHook(torch::Library& cuda, const std::string& key);

} // namespace kforge::runtime
