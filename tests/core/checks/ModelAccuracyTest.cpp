// The whole-model accuracy criterion (core/checks/ModelAccuracy.h): relative RMSE against a float64
// reference, and the bound relative to eager's own error.

#include "checks/ModelAccuracy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace kforge::core {
namespace {

TEST(ModelAccuracy, RelativeRmse)
{
    const std::vector<double> reference{3.0, -4.0}; // rms 3.5355
    const std::vector<double> same = reference;
    const std::vector<double> off{3.0, -3.0}; // one error of 1
    EXPECT_EQ(relativeRmse(same.data(), reference.data(), 2), 0.0);
    EXPECT_NEAR(relativeRmse(off.data(), reference.data(), 2), std::sqrt(0.5) / std::sqrt(12.5), 1e-12);
    const std::vector<double> zeros{0.0, 0.0};
    EXPECT_EQ(relativeRmse(zeros.data(), zeros.data(), 2), 0.0);
    EXPECT_TRUE(std::isinf(relativeRmse(reference.data(), zeros.data(), 2)));
}

TEST(ModelAccuracy, NonFiniteValuesMustFaceTheSame)
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> reference{1.0, nan, inf};
    const std::vector<double> same{1.0, nan, inf};
    const std::vector<double> nanForInf{1.0, nan, nan};
    const std::vector<double> nanForFinite{nan, nan, inf};
    EXPECT_EQ(relativeRmse(same.data(), reference.data(), 3), 0.0);
    EXPECT_TRUE(std::isinf(relativeRmse(nanForInf.data(), reference.data(), 3)));
    EXPECT_TRUE(std::isinf(relativeRmse(nanForFinite.data(), reference.data(), 3)));
}

TEST(ModelAccuracy, CandidateMayBeAtMostTwiceAsFarAsEagerPlusOneRounding)
{
    // float32: unit roundoff 6e-8.
    EXPECT_TRUE(judgeAgainstGolden(1.9e-4, 1e-4, "float32").passed);
    EXPECT_FALSE(judgeAgainstGolden(2.1e-4, 1e-4, "float32").passed);
    // Eager exact by luck: one rounding of the output dtype is still allowed, not more.
    EXPECT_TRUE(judgeAgainstGolden(3e-3, 0.0, "bfloat16").passed);
    EXPECT_FALSE(judgeAgainstGolden(5e-3, 0.0, "bfloat16").passed);
    EXPECT_FALSE(judgeAgainstGolden(std::numeric_limits<double>::infinity(), 1.0, "float32").passed);
    const GoldenVerdict v = judgeAgainstGolden(1e-3, 1e-3, "float16");
    EXPECT_DOUBLE_EQ(v.bound, 2e-3 + 4.9e-4);
}

} // namespace
} // namespace kforge::core
