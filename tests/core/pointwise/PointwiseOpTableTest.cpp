// The pointwise op table: lookups by op, overload and attribute, in-place forms, refusals, and the
// formulas eager's semantics fix (scalar division by reciprocal, pow's special exponents, NaN rules).

#include "pointwise/PointwiseOpTable.h"

#include <gtest/gtest.h>

using namespace kforge::core;

namespace {

ArgSpec value(const char* name, nlohmann::json v)
{
    ArgSpec a;
    a.name = name;
    a.kind = v.is_null() ? ArgKind::None : ArgKind::Value;
    a.value = std::move(v);
    return a;
}

std::string formula(const PointwiseOpRow& row, std::vector<FormulaOperand> operands)
{
    return row.formula(operands);
}

} // namespace

TEST(PointwiseOpTable, FindsOverloadsAndInPlaceForms)
{
    auto add = findPointwiseOp("aten::add", "Tensor", {});
    ASSERT_TRUE(add) << add.error().message;
    EXPECT_EQ(add.value()->name, "add");
    EXPECT_EQ(add.value()->operands.size(), 3u);
    EXPECT_FALSE(add.value()->operands[2].promoted); // alpha
    auto addInPlace = findPointwiseOp("aten::add_", "Scalar", {});
    ASSERT_TRUE(addInPlace);
    EXPECT_EQ(addInPlace.value()->overload, "Scalar");
    EXPECT_TRUE(isInPlaceOpName("relu_"));
    EXPECT_FALSE(isInPlaceOpName("relu"));
    EXPECT_FALSE(isInPlaceOpName("_to_copy"));
    EXPECT_TRUE(isInPlaceOpName("aten::relu_"));
    EXPECT_FALSE(isInPlaceOpName("aten::__iand__"));
    for (const char* op : {"aten::relu_", "aten::sigmoid", "aten::hardswish_", "aten::erf", "aten::_to_copy",
                           "aten::type_as", "aten::minimum", "aten::clamp_min"})
        EXPECT_TRUE(findPointwiseOp(op, "", {}) || findPointwiseOp(op, "Tensor", {})) << op;
    EXPECT_EQ(findPointwiseOp("aten::to", "dtype", {}).value()->result, PointwiseResult::Cast);
    EXPECT_EQ(findPointwiseOp("aten::exp", "", {}).value()->result, PointwiseResult::PromoteToFloat);
}

TEST(PointwiseOpTable, AttributesPickTheRow)
{
    auto exact = findPointwiseOp("aten::gelu", "", {value("approximate", "none")});
    auto tanh = findPointwiseOp("aten::gelu", "", {value("approximate", "tanh")});
    auto missing = findPointwiseOp("aten::gelu", "", {});
    ASSERT_TRUE(exact && tanh && missing);
    EXPECT_NE(exact.value(), tanh.value());
    EXPECT_EQ(missing.value(), exact.value());
    EXPECT_NE(formula(*tanh.value(), {{"x", {}}}).find("tanhf"), std::string::npos);
    EXPECT_TRUE(findPointwiseOp("aten::div", "Tensor_mode", {value("rounding_mode", nullptr)}));
    auto odd = findPointwiseOp("aten::div", "Tensor_mode", {value("rounding_mode", "ceil")});
    ASSERT_FALSE(odd);
    EXPECT_EQ(odd.error().message, "aten::div.Tensor_mode: rounding_mode \"ceil\" not covered by the pointwise table");
    for (const char* mode : {"trunc", "floor"})
        for (const char* overload : {"Tensor_mode", "Scalar_mode"}) {
            auto row = findPointwiseOp("aten::div_", overload, {value("rounding_mode", mode)});
            ASSERT_TRUE(row) << mode;
            EXPECT_EQ(row.value()->attributeValue, std::string("\"") + mode + "\"");
            EXPECT_EQ(row.value()->result, PointwiseResult::Promote); // integers stay integers in eager
        }
    // round: decimals 0 is the default round; other decimals are refused.
    EXPECT_EQ(findPointwiseOp("aten::round", "decimals", {value("decimals", 0)}).value()->formula({{"v", {}}}),
              "nearbyintf(v)");
    EXPECT_EQ(findPointwiseOp("aten::round", "decimals", {value("decimals", 2)}).error().message,
              "aten::round.decimals: decimals 2 not covered by the pointwise table");
}

TEST(PointwiseOpTable, RefusalsSayWhy)
{
    auto softmax = findPointwiseOp("aten::_softmax", "", {});
    ASSERT_FALSE(softmax);
    EXPECT_EQ(softmax.error().code, ErrorCode::Unsupported);
    EXPECT_EQ(softmax.error().message, "aten::_softmax: a reduction, norm or softmax, not pointwise (not covered yet)");
    EXPECT_NE(findPointwiseOp("aten::mean", "dim", {}).error().message.find("reduction"), std::string::npos);
    EXPECT_NE(findPointwiseOp("aten::native_layer_norm", "", {}).error().message.find("norm"), std::string::npos);
    EXPECT_EQ(findPointwiseOp("aten::atan2", "", {}).error().message, "aten::atan2: not in the pointwise table");
    EXPECT_EQ(findPointwiseOp("aten::pow", "Tensor_Scalar_out", {}).error().message,
              "aten::pow.Tensor_Scalar_out: overload not in the pointwise table");
}

TEST(PointwiseOpTable, FormulasFollowEagerSemantics)
{
    const auto row = [](const char* op, const char* overload) { return findPointwiseOp(op, overload, {}).value(); };
    // Division by a Python scalar multiplies by its float reciprocal, as eager's CUDA kernel.
    EXPECT_EQ(formula(*row("aten::div", "Scalar"), {{"v0", {}}, {"static_cast<float>(4.0)", 4.0}}),
              "(v0 * static_cast<float>(0.25))");
    EXPECT_EQ(formula(*row("aten::div", "Tensor"), {{"v0", {}}, {"v1", {}}}), "(v0 / v1)");
    // pow's special exponents.
    EXPECT_EQ(formula(*row("aten::pow", "Tensor_Scalar"), {{"v0", {}}, {"3", 3.0}}), "(v0 * v0 * v0)");
    EXPECT_EQ(formula(*row("aten::pow", "Tensor_Scalar"), {{"v0", {}}, {"-0.5", -0.5}}), "rsqrtf(v0)");
    EXPECT_EQ(formula(*row("aten::pow", "Tensor_Scalar"), {{"v0", {}}, {"c", 1.7}}), "powf(v0, c)");
    // alpha 1 drops out; another alpha scales other (rsub: self).
    EXPECT_EQ(formula(*row("aten::add", "Tensor"), {{"v0", {}}, {"v1", {}}, {"1", 1.0}}), "(v0 + v1)");
    EXPECT_EQ(formula(*row("aten::rsub", "Scalar"), {{"v0", {}}, {"c", 1.0}, {"a", 2.0}}), "(c - a * v0)");
    // clamp with one bound absent; NaN handling sits in the helpers.
    EXPECT_EQ(formula(*row("aten::clamp", ""), {{"v0", {}}, {}, {"m", 6.0}}), "kfClampMax(v0, m)");
    EXPECT_NE(pointwiseHelpers().find("kfMaximum(float a, float b) { return a != a ? a"), std::string::npos);
    EXPECT_EQ(formula(*row("aten::relu", ""), {{"v0", {}}}), "(v0 < 0.0f ? 0.0f : v0)");
}

TEST(PointwiseOpTable, CoversTheCommonPointwiseOps)
{
    const std::vector<std::pair<const char*, const char*>> ops = {{"aten::elu", ""},
                                                                  {"aten::selu", ""},
                                                                  {"aten::celu", ""},
                                                                  {"aten::softplus", ""},
                                                                  {"aten::hardtanh_", ""},
                                                                  {"aten::relu6", ""},
                                                                  {"aten::mish", ""},
                                                                  {"aten::softshrink", ""},
                                                                  {"aten::hardshrink", ""},
                                                                  {"aten::threshold_", ""},
                                                                  {"aten::masked_fill", "Scalar"},
                                                                  {"aten::masked_fill_", "Tensor"},
                                                                  {"aten::lerp", "Scalar"},
                                                                  {"aten::lerp_", "Tensor"},
                                                                  {"aten::addcmul", ""},
                                                                  {"aten::addcdiv_", ""},
                                                                  {"aten::erfinv", ""},
                                                                  {"aten::sign", ""},
                                                                  {"aten::floor", ""},
                                                                  {"aten::ceil", ""},
                                                                  {"aten::round", ""},
                                                                  {"aten::trunc", ""},
                                                                  {"aten::frac", ""},
                                                                  {"aten::expm1", ""},
                                                                  {"aten::log1p", ""},
                                                                  {"aten::log2", ""},
                                                                  {"aten::log10", ""},
                                                                  {"aten::exp2", ""},
                                                                  {"aten::square", ""},
                                                                  {"aten::logical_and", ""},
                                                                  {"aten::logical_or", ""},
                                                                  {"aten::logical_xor", ""},
                                                                  {"aten::logical_not", ""},
                                                                  {"aten::bitwise_not", ""},
                                                                  {"aten::pow", "Tensor_Tensor"},
                                                                  {"aten::pow", "Scalar"}};
    for (const auto& [op, overload] : ops)
        EXPECT_TRUE(findPointwiseOp(op, overload, {})) << op;
    for (const char* op : {"aten::eq", "aten::ne", "aten::lt", "aten::le", "aten::gt", "aten::ge"})
        for (const char* overload : {"Tensor", "Scalar"}) {
            auto row = findPointwiseOp(op, overload, {});
            ASSERT_TRUE(row) << op;
            EXPECT_EQ(row.value()->result, PointwiseResult::Bool);
            EXPECT_TRUE(row.value()->operands[1].inCommonDtype) << op; // a Python other becomes self's dtype
        }
    // `a & b` traces as __and__; bool and integer tensors only, their results promoted (bool & int is int).
    for (const char* op : {"aten::bitwise_and", "aten::__and__", "aten::bitwise_or", "aten::__or__",
                           "aten::bitwise_xor", "aten::__xor__"})
        for (const char* overload : {"Tensor", "Scalar"}) {
            auto row = findPointwiseOp(op, overload, {});
            ASSERT_TRUE(row) << op;
            EXPECT_EQ(row.value()->result, PointwiseResult::Promote);
            EXPECT_NE(row.value()->integer, nullptr) << op;
        }
    EXPECT_EQ(findPointwiseOp("aten::__and__", "Tensor", {}).value()->formula({{"a", {}}, {"b", {}}}),
              findPointwiseOp("aten::logical_and", "", {}).value()->formula({{"a", {}}, {"b", {}}}));
    EXPECT_EQ(findPointwiseOp("aten::__xor__", "Tensor", {}).value()->integer({{"a", {}}, {"b", {}}}), "(a ^ b)");
    // The base of `2 ** x` is a number eager converts to the exponent's dtype first.
    EXPECT_TRUE(findPointwiseOp("aten::pow", "Scalar", {}).value()->operands[0].inCommonDtype);
    EXPECT_EQ(findPointwiseOp("aten::logical_not", "", {}).value()->result, PointwiseResult::Bool);
    EXPECT_EQ(findPointwiseOp("aten::erfinv", "", {}).value()->result, PointwiseResult::PromoteToFloat);
    EXPECT_EQ(findPointwiseOp("aten::sign", "", {}).value()->result, PointwiseResult::Promote);
    EXPECT_TRUE(findPointwiseOp("aten::softshrink", "", {}).value()->operands[1].inCommonDtype);
    EXPECT_FALSE(findPointwiseOp("aten::masked_fill", "Scalar", {}).value()->operands[1].promoted); // the mask
}

TEST(PointwiseOpTable, NewFormulasFollowEagersCudaKernels)
{
    const auto row = [](const char* op, const char* overload = "") {
        return findPointwiseOp(op, overload, {}).value();
    };
    // elu: alpha * scale multiplied in opmath; absent coefficients are 1.
    EXPECT_EQ(formula(*row("aten::elu"), {{"x", {}}, {"a", 2.0}, {}, {}}),
              "(x > 0.0f ? x * static_cast<float>(1.0) : expm1f(x * static_cast<float>(1.0)) * (a * "
              "static_cast<float>(1.0)))");
    // celu's input scale is 1 / alpha taken in double: 1 / 3 rounded once to float.
    EXPECT_NE(formula(*row("aten::celu"), {{"x", {}}, {"static_cast<float>(3.0)", 3.0}})
                  .find("expm1f(x * static_cast<float>(0.33333333333333331))"),
              std::string::npos);
    // softplus: the input itself above the threshold (default beta 1, threshold 20).
    EXPECT_EQ(
        formula(*row("aten::softplus"), {{"x", {}}, {}, {}}),
        "(x * static_cast<float>(1.0) > static_cast<float>(20.0) ? x : log1pf(expf(x * static_cast<float>(1.0))) / "
        "static_cast<float>(1.0))");
    // softshrink keeps NaN; hardshrink's NaN falls through to self.
    EXPECT_EQ(formula(*row("aten::softshrink"), {{"x", {}}, {"l", 0.5}}),
              "(x != x ? x : (x > l ? x - l : (x < (-l) ? x + l : 0.0f)))");
    EXPECT_EQ(formula(*row("aten::hardshrink"), {{"x", {}}, {"l", 0.5}}), "((x >= (-l) && x <= l) ? 0.0f : x)");
    EXPECT_EQ(formula(*row("aten::threshold"), {{"x", {}}, {"t", 0.1}, {"v", 20.0}}), "(x <= t ? v : x)");
    EXPECT_EQ(formula(*row("aten::relu6"), {{"x", {}}}),
              "kfClampMax(kfClampMin(x, static_cast<float>(0.0)), static_cast<float>(6.0))");
    // round is half to even; sign's NaN and -0 rules sit in kfSign.
    EXPECT_EQ(formula(*row("aten::round"), {{"x", {}}}), "nearbyintf(x)");
    EXPECT_NE(pointwiseHelpers().find("kfSign(float a) { return (a > 0.0f ? 1.0f : 0.0f) - (a < 0.0f ? 1.0f : "
                                      "0.0f); }"),
              std::string::npos);
    // Comparisons and logical ops give 1 / 0; a float is true when non-zero (NaN included).
    EXPECT_EQ(formula(*row("aten::ne", "Tensor"), {{"a", {}}, {"b", {}}}), "(a != b ? 1.0f : 0.0f)");
    EXPECT_EQ(formula(*row("aten::logical_xor"), {{"a", {}}, {"b", {}}}), "((a != 0.0f) != (b != 0.0f) ? 1.0f : 0.0f)");
    // Rounding division: by a Python scalar through its float reciprocal; floor by 0 is true division.
    const auto mode = [](const char* m) { return std::vector<ArgSpec>{value("rounding_mode", m)}; };
    const PointwiseOpRow& trunc = *findPointwiseOp("aten::div", "Scalar_mode", mode("trunc")).value();
    const PointwiseOpRow& floor = *findPointwiseOp("aten::div", "Scalar_mode", mode("floor")).value();
    EXPECT_EQ(formula(trunc, {{"x", {}}, {"c", 4.0}}), "truncf(x * static_cast<float>(0.25))");
    EXPECT_EQ(formula(floor, {{"x", {}}, {"c", 4.0}}), "kfDivFloorScalar(x, c, static_cast<float>(0.25))");
    EXPECT_EQ(formula(floor, {{"x", {}}, {"c", 0.0}}), "(x * static_cast<float>(__int_as_float(0x7f800000)))");
    EXPECT_EQ(formula(floor, {{"x", {}}, {"y", {}}}), "kfDivFloor(x, y)");
    EXPECT_EQ(formula(*row("aten::lerp", "Scalar"), {{"s", {}}, {"e", {}}, {"w", 0.3}}), "kfLerp(s, e, w)");
    EXPECT_NE(pointwiseHelpers().find("fabsf(w) < 0.5f ? s + w * (e - s) : e - (e - s) * (1.0f - w)"),
              std::string::npos);
    EXPECT_EQ(formula(*row("aten::addcdiv"), {{"s", {}}, {"a", {}}, {"b", {}}, {}}),
              "(s + static_cast<float>(1.0) * (a / b))");
}
