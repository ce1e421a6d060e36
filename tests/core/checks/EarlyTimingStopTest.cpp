#include "checks/EarlyTimingStop.h"

#include <gtest/gtest.h>

using namespace kforge::core;

TEST(EarlyTimingStop, ThirdQuartileInterpolatesBetweenRanks)
{
    EXPECT_EQ(thirdQuartile({}), 0);
    EXPECT_EQ(thirdQuartile({2.0}), 2.0);
    EXPECT_DOUBLE_EQ(thirdQuartile({4, 1, 3, 2, 5}), 4.0); // rank 3 of 0..4
    EXPECT_DOUBLE_EQ(thirdQuartile({1, 2, 3, 4}), 3.25);   // rank 2.25
}

TEST(EarlyTimingStop, StopsOnlyAClearlySlowerCandidateAfterEnoughBrackets)
{
    const std::vector<double> slow(kEarlyLookRepetitions, 1.0); // every bracket 1.0x
    EXPECT_TRUE(clearlySlowerThanBest(slow, 1.2));              // the best is 1.2x: 1.0 < 0.9 * 1.2
    EXPECT_FALSE(clearlySlowerThanBest(slow, 1.1));             // 1.0 >= 0.99: could still be close
    EXPECT_FALSE(clearlySlowerThanBest(slow, 0));               // no best node yet
    EXPECT_FALSE(clearlySlowerThanBest(slow, -1));
    const std::vector<double> tooFew(kEarlyLookRepetitions - 1, 0.5);
    EXPECT_FALSE(clearlySlowerThanBest(tooFew, 2.0)); // too few brackets to judge
}

TEST(EarlyTimingStop, ANoisyCandidateThatSometimesWinsIsTimedInFull)
{
    // Six brackets far behind, four at the best's pace: its third quartile is the best's.
    std::vector<double> ratios(6, 0.8);
    ratios.insert(ratios.end(), 4, 1.5);
    EXPECT_FALSE(clearlySlowerThanBest(ratios, 1.5));
    // Eight behind and two ahead: three brackets of four lose more than 10%.
    std::vector<double> mostlyBehind(8, 0.8);
    mostlyBehind.insert(mostlyBehind.end(), 2, 1.6);
    EXPECT_TRUE(clearlySlowerThanBest(mostlyBehind, 1.5));
}
