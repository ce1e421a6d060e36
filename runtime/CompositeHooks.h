#pragma once
// Dispatcher hooks for composite operators: layer_norm, group_norm, batch_norm, rms_norm,
// adaptive_avg_pool2d, avg_pool1d, max_pool1d / 2d / 3d, softmax.int, log_softmax.int, to.dtype
// (CompositeImplicitAutograd) and embedding (CompositeExplicitAutograd).
//
// A packaged kernel computes the whole operator, so the hook sits on the operator itself, not on
// the pieces it decomposes into:
// - CompositeImplicitAutograd operators get their hook at two keys. AutogradCUDA is where normal
//   calls (grad mode on or off) arrive; there a call whose inputs need a gradient never reaches
//   the packaged kernel (it would record no graph) and runs the composite implementation, which
//   records the graph of its pieces as eager does. CUDA is where calls arrive when autograd is
//   excluded (torch.inference_mode()).
// - embedding has its own autograd formula above the CUDA key, so only its CUDA kernel is hooked.
// The original is the composite implementation (at::compositeimplicitautograd::<op>,
// at::compositeexplicitautograd::embedding): what the dispatcher would have run. Counters and reasons as in
// HookRegistry.h.

#include <torch/library.h>

#include <string>

namespace kforge::runtime {

/// Whether `key` ("aten::layer_norm") is a composite operator this build hooks.
bool compositeHookKnown(const std::string& key);
/// Registers the hook of `key` on `cuda`, and on `autogradCuda` for CompositeImplicitAutograd
/// operators. False when `key` is not a composite hook.
bool registerComposite(torch::Library& cuda, torch::Library& autogradCuda, const std::string& key);

} // namespace kforge::runtime
