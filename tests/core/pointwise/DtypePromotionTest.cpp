// torch.result_type's rules on dtype names: tensors over 0-dim tensors over Python scalars, and a
// lower rank counting only with a higher category.

#include "pointwise/DtypePromotion.h"

#include <gtest/gtest.h>

using namespace kforge::core;

namespace {

PromotionOperand dim(const char* dtype)
{
    return {dtype, OperandRank::Dimensioned};
}
PromotionOperand zero(const char* dtype)
{
    return {dtype, OperandRank::ZeroDim};
}
PromotionOperand scalar(const char* dtype)
{
    return {dtype, OperandRank::PythonScalar};
}

} // namespace

TEST(DtypePromotion, PromoteTypesAsTorch)
{
    EXPECT_EQ(promoteTypes("float16", "bfloat16"), "float32");
    EXPECT_EQ(promoteTypes("bfloat16", "float32"), "float32");
    EXPECT_EQ(promoteTypes("float16", "float16"), "float16");
    EXPECT_EQ(promoteTypes("uint8", "int8"), "int16");
    EXPECT_EQ(promoteTypes("int64", "float16"), "float16");
    EXPECT_EQ(promoteTypes("bool", "int32"), "int32");
    EXPECT_EQ(promoteTypes("float64", "float32"), "float64");
    EXPECT_EQ(promoteTypes("complex64", "float32"), "");
}

TEST(DtypePromotion, DimensionedTensorsWinWithinACategory)
{
    // bf16 activations times a float32 0-dim scale, or a Python float: bf16.
    EXPECT_EQ(resultType({dim("bfloat16"), zero("float32")}), "bfloat16");
    EXPECT_EQ(resultType({dim("bfloat16"), scalar("float32")}), "bfloat16");
    EXPECT_EQ(resultType({dim("float16"), zero("float64")}), "float16");
    // Two dimensioned tensors promote.
    EXPECT_EQ(resultType({dim("bfloat16"), dim("float32")}), "float32");
    EXPECT_EQ(resultType({dim("float16"), dim("bfloat16")}), "float32");
}

TEST(DtypePromotion, AHigherCategoryFromALowerRankCounts)
{
    // int tensor * 2.5 is the default float; int tensor * a half 0-dim tensor is half.
    EXPECT_EQ(resultType({dim("int64"), scalar("float32")}), "float32");
    EXPECT_EQ(resultType({dim("int32"), zero("float16")}), "float16");
    EXPECT_EQ(resultType({dim("int32"), scalar("int64")}), "int32");
    EXPECT_EQ(resultType({dim("bool"), scalar("int64")}), "int64");
    EXPECT_EQ(resultType({dim("bool"), dim("bool")}), "bool");
    // Three ranks: the 0-dim half wins over the Python float against an int tensor.
    EXPECT_EQ(resultType({dim("int64"), zero("float16"), scalar("float32")}), "float16");
    // Only lower ranks: 0-dim tensors decide, then scalars.
    EXPECT_EQ(resultType({zero("bfloat16"), scalar("float32")}), "bfloat16");
    EXPECT_EQ(resultType({scalar("int64"), scalar("float32")}), "float32");
}

TEST(DtypePromotion, OpmathIsFloatForSixteenBitTypes)
{
    EXPECT_EQ(opmathDtype("bfloat16"), "float32");
    EXPECT_EQ(opmathDtype("float16"), "float32");
    EXPECT_EQ(opmathDtype("float32"), "float32");
    EXPECT_EQ(dtypeCategory("int8"), DtypeCategory::Integer);
    EXPECT_EQ(dtypeCategory("qint8"), DtypeCategory::Other);
}

TEST(DtypePromotion, IntegerTensorsAndScalarsAsTorch)
{
    // Checked with torch.result_type: a Python int or a 0-dim int64 tensor keeps an int8 / uint8
    // tensor's dtype; a Python float or a 0-dim float tensor makes it floating.
    EXPECT_EQ(promoteTypes("uint8", "int8"), "int16");
    EXPECT_EQ(promoteTypes("uint8", "int16"), "int16");
    EXPECT_EQ(promoteTypes("int8", "bool"), "int8");
    EXPECT_EQ(resultType({dim("uint8"), scalar("int64")}), "uint8");
    EXPECT_EQ(resultType({dim("int8"), zero("int64")}), "int8");
    EXPECT_EQ(resultType({dim("int16"), scalar("float32")}), "float32");
    EXPECT_EQ(resultType({dim("int64"), zero("bfloat16")}), "bfloat16");
    EXPECT_EQ(resultType({dim("int32"), dim("int64")}), "int64");
    EXPECT_EQ(resultType({dim("bool"), dim("uint8")}), "uint8");
}
