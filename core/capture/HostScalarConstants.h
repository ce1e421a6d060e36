#pragma once
// Keeps a loaded TorchScript model's integer scalar constants on the host, as eager Python does.
// Internal to core (includes LibTorch).
//
// Why: torch::jit::load(path, cuda) maps every tensor of the archive to the GPU, the graph's
// constants included. A trace turns each Python int of shape arithmetic into a 0-dim int64 constant
// (`x.shape[-1] // 2` in transformers' rotate_half, `num_key_value_heads * n_rep` in repeat_kv);
// mapped to the GPU, the arithmetic runs as a CUDA kernel and the aten::Int that turns the result
// back into a size copies it to the host: one device synchronization per use (12 per forward in two
// Gemma decoder layers, seen in the suite's capture as aten::item of a CUDA tensor). A model that
// waits for the GPU mid-forward is measured neither like eager Python (wall time) nor at all by the
// GPU timer (its enqueue waits behind the spin). As 0-dim CPU tensors the same constants stay host
// arithmetic; a CUDA op takes a 0-dim CPU tensor as a scalar operand, with the same type promotion
// as a 0-dim CUDA tensor.
//
// Floating constants (an attention scale, an RMSNorm eps) stay where the load put them: the built-in
// binary kernels read such an operand from the GPU (BinaryFamily). An integer constant kept here is a
// host number of the cards that read it: their kernels take its value (docs/kernel-contract.md).

#include <torch/csrc/jit/api/module.h>

#include <c10/core/Device.h>

namespace kforge::core {

/// Moves every 0-dim integer or bool tensor constant in the code of `module` (every function of its
/// compilation unit, nested blocks included) that is not on `host` to `host`; returns how many moved.
/// Call it right after loading, before the first forward (an executor copies its graph on first run).
int keepIntegerScalarConstantsOn(torch::jit::Module& module, c10::Device host = c10::Device(c10::kCPU));

} // namespace kforge::core
