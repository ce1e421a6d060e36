#pragma once
// Eager PyTorch's type promotion for pointwise ops (torch.result_type), on the project's dtype names
// ("float32", "bfloat16", "int64", "bool", ...). Torch-free.
//
// Operands rank by what they are: a tensor with dims > 0 over a 0-dim tensor over a Python scalar.
// Within one rank the dtypes promote as torch.promote_types; across ranks a lower rank only counts
// when its category (bool < integer < floating) is higher than the result so far: a bfloat16 tensor
// times a float32 0-dim tensor or times 2.5 stays bfloat16, an int64 tensor times 2.5 becomes the
// default float32. A Python float scalar stands for float32 (the default dtype), a Python int for
// int64, a Python bool for bool.

#include <string>
#include <vector>

namespace kforge::core {

enum class DtypeCategory { Bool, Integer, Floating, Other };

/// The rank an operand has in promotion.
enum class OperandRank { Dimensioned, ZeroDim, PythonScalar };

struct PromotionOperand {
    std::string dtype; // a Python scalar: "float32" (float), "int64" (int) or "bool"
    OperandRank rank = OperandRank::Dimensioned;
};

DtypeCategory dtypeCategory(const std::string& dtype);
/// torch.promote_types of two dtypes: bool < uint8/int8 < int16 < int32 < int64 < float16/bfloat16 <
/// float32 < float64 (float16 with bfloat16 gives float32; uint8 with int8 gives int16). "" when
/// either is not one of those.
std::string promoteTypes(const std::string& a, const std::string& b);
/// torch.result_type of the operands ("" when none, or a dtype is outside promoteTypes').
std::string resultType(const std::vector<PromotionOperand>& operands);
/// The C type of an integer dtype ("int64" -> "long long", "int32" -> "int", "int16" -> "short",
/// "int8" -> "signed char", "uint8" -> "unsigned char"); nullptr for any other dtype.
const char* integerCType(const std::string& dtype);
/// The dtype eager computes a pointwise op in (its "opmath"): float32 for float16 and bfloat16,
/// otherwise the dtype itself.
std::string opmathDtype(const std::string& dtype);

} // namespace kforge::core
