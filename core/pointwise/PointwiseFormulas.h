#pragma once
// The fp32 formulas of the pointwise table's activation, rounding, comparison and logical rows
// (pointwise/PointwiseOpTable.cpp holds the rows), each with eager's CUDA semantics as its comment
// says, and the device helpers they call. Internal to kforge_pointwise.

#include "pointwise/PointwiseOpTable.h"

#include <string>
#include <string_view>

namespace kforge::core::formulas {

using A = const std::vector<FormulaOperand>&;

// Activations.
std::string elu(A a);
std::string selu(A a);
std::string celu(A a);
std::string softplus(A a);
std::string hardtanh(A a);
std::string relu6(A a);
std::string mish(A a);
std::string softshrink(A a);
std::string hardshrink(A a);
std::string threshold(A a);

// Other unary math.
std::string erfinv(A a);
std::string expm1(A a);
std::string log1p(A a);
std::string log2(A a);
std::string log10(A a);
std::string exp2(A a);
std::string square(A a);
std::string sign(A a);
std::string floor(A a);
std::string ceil(A a);
std::string round(A a);
std::string trunc(A a);
std::string frac(A a);

// Selection and interpolation.
std::string maskedFill(A a);
std::string lerp(A a);
std::string addcmul(A a);
std::string addcdiv(A a);
std::string divTrunc(A a);
std::string fmod(A a);
std::string remainder(A a);
std::string erfc(A a);
std::string divFloor(A a);

// Normalization with fixed statistics: batch_norm in inference (per-channel operands).
std::string batchNormInference(A a);

// Bool results (1.0f / 0.0f).
std::string eq(A a);
std::string ne(A a);
std::string lt(A a);
std::string le(A a);
std::string gt(A a);
std::string ge(A a);
/// `condition ? 1.0f : 0.0f`: how every formula writes a bool result.
std::string boolOf(const std::string& condition);
/// `op` ("&&", "||", "!=" for xor, or "not") of the operands' truth, each compared with `zero`
/// ("0.0f" for fp32 values, "0" for integers), as a bool result.
std::string logicalOf(A a, std::string_view op, const char* zero);
std::string logicalAnd(A a);
std::string logicalOr(A a);
std::string logicalXor(A a);
std::string logicalNot(A a);

/// The device helpers of these formulas (kfDivFloor, kfLerp, kfSign, ...), CUDA source.
std::string helpers();

/// The integer form of row `name` (with `attributeValue`, div's rounding mode), or nullptr when the
/// row has none (PointwiseIntegerFormulas.cpp): its operands are C++ integer expressions already in
/// the op's common dtype, its value an integer expression (a bool result: 1.0f / 0.0f) whose low
/// bits the node's dtype keeps.
PointwiseFormula integerFormula(std::string_view name, std::string_view attributeValue);
/// The device helpers of the integer forms (kfIntAdd, kfIntDivFloor, ...), CUDA source.
std::string integerHelpers();

} // namespace kforge::core::formulas
