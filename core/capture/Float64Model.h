#pragma once
// A TorchScript model run entirely in float64: the reference ("golden") that export's in-model
// check and `kforge run` judge both eager and the custom kernels against (core/checks/ModelAccuracy.h).
//
// Converting parameters and inputs is not enough for a traced mixed-precision model: the trace
// bakes every dtype it saw into constants (`h.to(torch.float32)` ... `.to(x.dtype)` in an RMSNorm,
// `softmax(..., dtype=torch.float32)`, `torch.full(..., dtype=x.dtype)` for a mask), so a model
// traced in bfloat16 would cast back to bfloat16 inside, or fail on a matmul of float64 with
// bfloat16. The run here works on an inlined copy of forward's graph in which every floating dtype
// constant and every floating tensor constant is float64. The module passed in is not changed.

#include "util/Result.h"

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/module.h>

#include <vector>

namespace kforge::core {

/// forward(inputs) of a float64 copy of `module` (parameters, buffers, floating inputs and the
/// graph's floating dtype and tensor constants all float64), on the device of the inputs.
/// Gradients are not recorded. Errors: an op without a float64 kernel, or any other failure of
/// the run (BadModel, one line).
Result<c10::IValue> runModelInFloat64(const torch::jit::Module& module, const std::vector<c10::IValue>& inputs);

} // namespace kforge::core
