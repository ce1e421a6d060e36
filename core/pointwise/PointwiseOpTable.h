#pragma once
// THE table of pointwise ATen ops that generated kernels compute (docs/builtin-proposer.md,
// "Pointwise expressions"): for each op and overload, which schema arguments it reads as values
// (tensors or Python scalars alike), how eager picks its result dtype, and its element formula in
// fp32 (eager's opmath for float16 / bfloat16 too) with eager's CUDA semantics, NaN propagation
// included. Region kernels and single-op pointwise cards (as one-member chains) use the same rows.
// Every in-place form ("add_") reads its out-of-place row; its result dtype is self's.
//
// Values are fp32 in the formulas: a bool is 0 / 1, and a bool result is any non-zero value (NaN
// included, as C++ converts a float to bool). An op whose common dtype is an integer type computes
// exactly in it with the row's integer form (PointwiseIntegerFormulas.cpp), never through fp32 (which
// holds neither every int32 / int64 value nor eager's wrap-around); a row without one refuses it.

#include "model/ArgSpec.h"
#include "model/OperatorCard.h" // isInPlaceOpName
#include "util/Result.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::core {

/// How eager picks the dtype of an op's result.
enum class PointwiseResult {
    Promote,        // torch.result_type of the promoted operands
    PromoteToFloat, // the same, then an integer or bool result becomes the default float32 (exp, div)
    Cast,           // the dtype the call asked for (to, _to_copy, type_as): the captured output's
    Bool,           // bool (comparisons, logical ops), computed in the promoted operands' common dtype
};

/// One operand as a formula sees it: a C++ float expression, and the value when it is a constant.
struct FormulaOperand {
    std::string expr;               // "v3", "static_cast<float>(0.5)"; "" for an absent optional
    std::optional<double> constant; // a Python scalar's value
    bool absent() const { return expr.empty(); }
};

/// An op's fp32 expression of its operands (in the row's operand order).
using PointwiseFormula = std::string (*)(const std::vector<FormulaOperand>& a);

/// One schema argument the op reads as a value.
struct PointwiseOperand {
    std::string_view name;
    bool promoted = true;  // takes part in type promotion (alpha, a where's condition do not)
    bool optional = false; // may be None (clamp's min / max)
    // A Python scalar eager converts to the op's common dtype (its scalar_t) before computing, not to
    // opmath: threshold's bounds, the shrink lambdas, a comparison's other. For float16 / bfloat16
    // the expression rounds it so (a bfloat16 `x <= 0.1` compares with 0.10009765625).
    bool inCommonDtype = false;
};

struct PointwiseOpRow {
    std::string_view name;     // without "aten::" and the in-place "_": "add"
    std::string_view overload; // "Tensor", "Scalar", "" for the default
    std::vector<PointwiseOperand> operands;
    PointwiseResult result = PointwiseResult::Promote;
    // A non-operand argument the row is for, and its value as compact JSON ("\"tanh\"", "null");
    // "" when the row takes any value of every other argument.
    std::string_view attribute;
    std::string_view attributeValue;
    PointwiseFormula formula = nullptr;
    std::string_view text; // the formula for people (docs, generated source comments)
    // The integer form, for an integer common dtype (operands already in it); nullptr: not covered.
    // Cast rows have none: a conversion is the expression's own business.
    PointwiseFormula integer = nullptr;
};

/// Every row, in table order.
const std::vector<PointwiseOpRow>& pointwiseOpTable();

/// Whether the table has a row for op `op` ("aten::relu_", "aten::softshrink"; in-place forms
/// read their out-of-place rows), whatever its overload and arguments.
bool isPointwiseOpName(std::string_view op);

/// The row for a call of `op` ("aten::relu_") with `overload` and its captured arguments (schema
/// order). Unsupported with one line when there is none: a reduction, norm or softmax (not
/// pointwise: later work), an op the table does not hold, or an attribute value it does not cover.
Result<const PointwiseOpRow*> findPointwiseOp(const std::string& op, const std::string& overload,
                                              const std::vector<ArgSpec>& args);

/// Device helpers the formulas call (kfMaximum, kfMinimum, kfClamp, ...), as CUDA source that the
/// host emulation compiles too.
std::string pointwiseHelpers();

} // namespace kforge::core
