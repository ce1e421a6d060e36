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
    auto floor = findPointwiseOp("aten::div", "Tensor_mode", {value("rounding_mode", "floor")});
    ASSERT_FALSE(floor);
    EXPECT_EQ(floor.error().message,
              "aten::div.Tensor_mode: rounding_mode \"floor\" not covered by the pointwise table");
}

TEST(PointwiseOpTable, RefusalsSayWhy)
{
    auto softmax = findPointwiseOp("aten::_softmax", "", {});
    ASSERT_FALSE(softmax);
    EXPECT_EQ(softmax.error().code, ErrorCode::Unsupported);
    EXPECT_EQ(softmax.error().message, "aten::_softmax: a reduction, norm or softmax, not pointwise (not covered yet)");
    EXPECT_NE(findPointwiseOp("aten::mean", "dim", {}).error().message.find("reduction"), std::string::npos);
    EXPECT_NE(findPointwiseOp("aten::native_layer_norm", "", {}).error().message.find("norm"), std::string::npos);
    EXPECT_EQ(findPointwiseOp("aten::lerp", "Scalar", {}).error().message,
              "aten::lerp.Scalar: not in the pointwise table");
    EXPECT_EQ(findPointwiseOp("aten::pow", "Tensor_Tensor", {}).error().message,
              "aten::pow.Tensor_Tensor: overload not in the pointwise table");
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
