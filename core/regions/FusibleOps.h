#pragma once
// The one table of operators a fused region may hold: native (not vendor-backed) pointwise ops,
// casts, softmax, norms and reductions, and cat (rotary's cat of the halves) where its tensors share
// the result's dtype and rank. Views, vendor ops (convolution, matmul, linear, attention)
// and host ops are never in it.

#include "model/OperatorCard.h"

#include <string>

namespace kforge::core {

/// True when `op` ("aten::add", "aten::relu_") is in the table; an in-place form ("relu_") counts
/// as its out-of-place op.
bool isFusibleOpName(const std::string& op);

/// True when a call of `card` may be a region member: its op is fusible, it is not vendor-backed,
/// it returns a tensor and every tensor it reads and writes is on one device; with `gpuCapture`,
/// a host op (all its tensors on the CPU) is not. A cat must join two non-empty tensors or more, each
/// of its result's dtype and rank.
/// True when `op` is aten::cat: a region member that only a region of pointwise ops takes (the
/// region finder keeps it out of a group with a member that is not a row of the pointwise table).
bool isConcatenationOp(const std::string& op);
bool isFusibleCard(const OperatorCard& card, bool gpuCapture);

} // namespace kforge::core
