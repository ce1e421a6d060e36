#pragma once
// Dispatcher hooks for the statistics and index reductions the built-in proposer's row generator
// covers: var / std / var_mean / std_mean (their `correction` overloads have CUDA kernels, their
// `dim` overloads are CompositeImplicitAutograd and hooked at CUDA and AutogradCUDA as
// CompositeHooks.h explains), logsumexp (CompositeExplicitAutograd: its autograd formula runs above
// the CUDA key), argmax / argmin, max.dim / min.dim (values and indices), max / min of every element, amax / amin,
// prod.dim_int, linalg_vector_norm, and instance_norm (CompositeImplicitAutograd). Each offers the
// call to the registry with the arguments as the capture records them (HookRegistry.h); when no
// packaged kernel serves it, the original runs (at::cuda::<op> or the composite implementation).

#include <torch/library.h>

#include <string>

namespace kforge::runtime {

/// Whether `key` ("aten::var.correction") is a reduction this build hooks.
bool reductionHookKnown(const std::string& key);
/// Registers the hook of `key` on `cuda`, and on `autogradCuda` for CompositeImplicitAutograd
/// operators. False when `key` is not a reduction hook.
bool registerReductionHook(torch::Library& cuda, torch::Library& autogradCuda, const std::string& key);

} // namespace kforge::runtime
