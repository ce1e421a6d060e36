#pragma once
// How close a candidate's output must be to eager PyTorch's (docs/validation.md explains the table).
// A value passes when |got - expected| <= atol + rtol * |expected|, NaN/Inf positions match exactly,
// and integer/bool outputs are equal.

#include "model/OperatorCard.h"

#include <string>

namespace kforge::core {

enum class OpClass {
    Elementwise, // one output element from one input element per operand (relu, gelu, add)
    Reduction,   // sums or means over many elements (softmax, norms, pools, mean/sum)
    Other,
};

/// Classifies an ATen op name ("aten::softmax") for tolerance purposes.
OpClass opClassOf(const std::string& op);
/// The class a card's outputs are judged by: its op's, or for a region card its loosest member's
/// (Reduction if any member reduces, else Other if any member is not elementwise).
OpClass opClassOf(const OperatorCard& card);
const char* opClassName(OpClass opClass);
/// Whether eager's CUDA kernel for `op` accumulates in the tensor's own dtype, rounding after every
/// step (cumsum, cumprod: a 16-bit scan's error grows with the row), so that a kernel accumulating
/// in fp32 lies nearer the exact value than eager and may still differ from eager beyond the
/// tolerance. Such a single-op card is judged like a chain when that happens: against the op run in
/// float64, within twice eager's own error (docs/validation.md).
bool eagerRoundsEveryStep(const std::string& op);

struct Tolerance {
    double atol = 0;
    double rtol = 0;
    bool exact = false; // integers and bool: bit-equal

    std::string describe() const;
};

/// The tolerance for an output of dtype `dtype` (canonical name) produced by an op of `opClass`.
Tolerance toleranceFor(const std::string& dtype, OpClass opClass);

} // namespace kforge::core
