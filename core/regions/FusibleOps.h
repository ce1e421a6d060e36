#pragma once
// The one table of operators a fused region may hold: native (not vendor-backed) pointwise ops,
// casts, softmax, norms and reductions. Views, vendor ops (convolution, matmul, linear, attention)
// and host ops are never in it.

#include "model/OperatorCard.h"

#include <string>

namespace kforge::core {

/// True when `op` ("aten::add", "aten::relu_") is in the table; an in-place form ("relu_") counts
/// as its out-of-place op.
bool isFusibleOpName(const std::string& op);

/// True when a call of `card` may be a region member: its op is fusible, it is not vendor-backed,
/// it returns a tensor and every tensor it reads and writes is on one device; with `gpuCapture`,
/// a host op (all its tensors on the CPU) is not.
bool isFusibleCard(const OperatorCard& card, bool gpuCapture);

} // namespace kforge::core
