// core/cast/HostNumbers.h: when the runtime may serve a packaged kernel's 0-dim device operand from
// eager Python's host number (runtime/HostScalars.h).

#include "cast/HostNumbers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using kforge::core::hostNumberOutputDtype;
using kforge::core::hostNumberSurvivesRounding;

TEST(HostNumbers, PromotionAgreesOnlyForFloatingDimensionedOperandsOfTheOutputsDtype)
{
    // bf16 tensor * 0-dim float64: both forms give bfloat16.
    EXPECT_EQ(hostNumberOutputDtype({{"bfloat16", false}, {"float64", true}}, "bfloat16"), "bfloat16");
    EXPECT_EQ(hostNumberOutputDtype({{"float64", true}, {"float32", false}}, "float32"), "float32");
    // int64 tensor * 0-dim float64 tensor is float64, * a Python float float32: never.
    EXPECT_EQ(hostNumberOutputDtype({{"int64", false}, {"float64", true}}, "float64"), "");
    EXPECT_EQ(hostNumberOutputDtype({{"int64", false}, {"float64", true}}, "float32"), "");
    // Mixed dimensioned operands, or an output outside the built-in dtypes.
    EXPECT_EQ(hostNumberOutputDtype({{"float16", false}, {"float32", false}, {"float64", true}}, "float32"), "");
    EXPECT_EQ(hostNumberOutputDtype({{"float64", false}, {"float64", true}}, "float64"), "");
}

TEST(HostNumbers, A16BitOutputTakesOnlyValuesItRepresents)
{
    EXPECT_TRUE(hostNumberSurvivesRounding(0.0625, "bfloat16")); // Gemma's 1/sqrt(256)
    EXPECT_TRUE(hostNumberSurvivesRounding(0.0625, "float16"));
    EXPECT_FALSE(hostNumberSurvivesRounding(1.0 / std::sqrt(128.0), "bfloat16")); // Qwen's scale
    EXPECT_FALSE(hostNumberSurvivesRounding(1.0 / std::sqrt(128.0), "float16"));
    EXPECT_TRUE(hostNumberSurvivesRounding(1.0 / std::sqrt(128.0), "float32")); // read into fp32 both ways
    EXPECT_TRUE(hostNumberSurvivesRounding(1e-6, "float32"));                   // an RMSNorm's eps
    EXPECT_FALSE(hostNumberSurvivesRounding(1e-6, "bfloat16"));
    // Precision: bfloat16 keeps 8 significant bits, float16 11.
    EXPECT_TRUE(hostNumberSurvivesRounding(1.0 + 1.0 / 128, "bfloat16"));
    EXPECT_FALSE(hostNumberSurvivesRounding(1.0 + 1.0 / 256, "bfloat16"));
    EXPECT_TRUE(hostNumberSurvivesRounding(1.0 + 1.0 / 1024, "float16"));
    EXPECT_FALSE(hostNumberSurvivesRounding(1.0 + 1.0 / 2048, "float16"));
    EXPECT_TRUE(hostNumberSurvivesRounding(-3.0, "bfloat16"));
    // Range: float16 overflows past 65504, has subnormals down to 2^-24.
    EXPECT_TRUE(hostNumberSurvivesRounding(65504.0, "float16"));
    EXPECT_FALSE(hostNumberSurvivesRounding(65536.0, "float16"));
    EXPECT_TRUE(hostNumberSurvivesRounding(65536.0, "bfloat16"));
    EXPECT_TRUE(hostNumberSurvivesRounding(std::ldexp(1.0, -24), "float16"));
    EXPECT_TRUE(hostNumberSurvivesRounding(3 * std::ldexp(1.0, -24), "float16"));
    EXPECT_FALSE(hostNumberSurvivesRounding(std::ldexp(1.0, -25), "float16"));
    EXPECT_FALSE(hostNumberSurvivesRounding(1.5 * std::ldexp(1.0, -24), "float16"));
    // Zero and infinity convert to themselves; NaN never compares equal.
    EXPECT_TRUE(hostNumberSurvivesRounding(0.0, "bfloat16"));
    EXPECT_TRUE(hostNumberSurvivesRounding(std::numeric_limits<double>::infinity(), "float16"));
    EXPECT_FALSE(hostNumberSurvivesRounding(std::nan(""), "float32"));
    EXPECT_FALSE(hostNumberSurvivesRounding(1.0, "float64"));
}
