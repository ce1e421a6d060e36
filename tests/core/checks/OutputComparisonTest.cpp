#include "checks/OutputComparison.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace kforge::core;

TEST(Tolerance, PerDtypeAndOpClass)
{
    EXPECT_TRUE(toleranceFor("int64", OpClass::Elementwise).exact);
    EXPECT_TRUE(toleranceFor("bool", OpClass::Reduction).exact);
    const Tolerance f32 = toleranceFor("float32", OpClass::Elementwise);
    const Tolerance bf16 = toleranceFor("bfloat16", OpClass::Elementwise);
    const Tolerance f16 = toleranceFor("float16", OpClass::Reduction);
    EXPECT_LT(f32.rtol, f16.rtol);
    EXPECT_LT(f16.rtol, bf16.rtol);
    EXPECT_LE(toleranceFor("float32", OpClass::Elementwise).rtol, toleranceFor("float32", OpClass::Reduction).rtol);
    EXPECT_EQ(opClassOf("aten::softmax"), OpClass::Reduction);
    EXPECT_EQ(opClassOf("aten::group_norm"), OpClass::Reduction);
    EXPECT_EQ(opClassOf("aten::relu"), OpClass::Elementwise);
    EXPECT_EQ(opClassOf("aten::frobnicate"), OpClass::Other);
}

TEST(Tolerance, RegionCardsTakeTheirLoosestMembersClass)
{
    const auto regionOf = [](std::vector<std::string> ops) {
        OperatorCard card;
        card.op = kRegionOp;
        RegionChain chain;
        for (const std::string& op : ops) {
            ChainMember member;
            member.op = op;
            chain.members.push_back(member);
        }
        card.region = chain;
        return card;
    };
    EXPECT_EQ(opClassOf(regionOf({"aten::mul", "aten::tanh", "aten::add"})), OpClass::Elementwise);
    // Every op of the pointwise table is elementwise (a cast rounds once, as eager does).
    EXPECT_EQ(opClassOf(regionOf({"aten::mul", "aten::to", "aten::softshrink", "aten::add_"})), OpClass::Elementwise);
    EXPECT_EQ(opClassOf(regionOf({"aten::mul", "aten::log_sigmoid", "aten::add"})), OpClass::Other);
    EXPECT_EQ(opClassOf(regionOf({"aten::to", "aten::softmax", "aten::relu"})), OpClass::Reduction);
    OperatorCard op;
    op.op = "aten::relu";
    EXPECT_EQ(opClassOf(op), OpClass::Elementwise);
}

TEST(Tolerance, ScansAreReductionsThatEagerRoundsEveryStep)
{
    for (const std::string op : {"aten::cumsum", "aten::cumprod"}) {
        EXPECT_EQ(opClassOf(op), OpClass::Reduction) << op;
        EXPECT_TRUE(eagerRoundsEveryStep(op)) << op;
    }
    // Eager accumulates these in fp32 and rounds once: an element-wise comparison judges them.
    for (const std::string op : {"aten::sum", "aten::softmax", "aten::add"})
        EXPECT_FALSE(eagerRoundsEveryStep(op)) << op;
}

TEST(OutputComparison, PassesWithinToleranceAndReportsMaxError)
{
    const double expected[4] = {1.0, -2.0, 0.0, 1000.0};
    const double got[4] = {1.0 + 5e-6, -2.0, 5e-7, 1000.0 + 5e-3};
    const Tolerance t{1e-6, 1e-5, false};
    const ComparisonResult r = compareOutputs(got, expected, {2, 2}, t);
    EXPECT_TRUE(r.passed) << r.describe(t);
    EXPECT_EQ(r.elements, 4);
    EXPECT_NEAR(r.maxAbsError, 5e-3, 1e-12);
}

TEST(OutputComparison, ReportsFirstMismatchWithCoordinatesAndMagnitude)
{
    std::vector<double> expected(12, 0.5);
    std::vector<double> got = expected;
    got[7] = 0.75; // [1,3] in a 3x4 tensor
    got[10] = 0.25;
    const Tolerance t{1e-5, 1e-4, false};
    const ComparisonResult r = compareOutputs(got.data(), expected.data(), {3, 4}, t);
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.mismatches, 2);
    EXPECT_EQ(r.firstBadIndex, 7);
    EXPECT_EQ(r.firstBadCoordinates, (std::vector<std::int64_t>{1, 3}));
    const std::string text = r.describe(t);
    EXPECT_NE(text.find("2 of 12 elements differ; first at [1,3]: got 0.75, expected 0.5"), std::string::npos) << text;
}

TEST(OutputComparison, NanAndInfinityPositionsMustMatch)
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const Tolerance loose{1.0, 1.0, false};
    const double expected[3] = {nan, inf, 1.0};
    const double same[3] = {nan, inf, 1.0};
    EXPECT_TRUE(compareOutputs(same, expected, {3}, loose).passed);
    const double poisonLeft[3] = {nan, inf, nan}; // an unwritten (poisoned) output element
    ComparisonResult r = compareOutputs(poisonLeft, expected, {3}, loose);
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.firstBadIndex, 2);
    EXPECT_EQ(r.reason, "NaN where eager has a number");
    const double wrongInf[3] = {nan, -inf, 1.0};
    EXPECT_FALSE(compareOutputs(wrongInf, expected, {3}, loose).passed);
    const double numberForNan[3] = {0.0, inf, 1.0};
    EXPECT_EQ(compareOutputs(numberForNan, expected, {3}, loose).reason, "a number where eager has NaN");
}

TEST(OutputComparison, ExactForIntegers)
{
    const double expected[2] = {3, 4};
    const double got[2] = {3, 4.0000001};
    const Tolerance exact = toleranceFor("int64", OpClass::Elementwise);
    EXPECT_FALSE(compareOutputs(got, expected, {2}, exact).passed);
    EXPECT_TRUE(compareOutputs(expected, expected, {2}, exact).passed);
}

// The ResNet case seen on the H200: a float16 batch_norm output near 10 (spacing 0.0078) plus a
// residual near -9.5. The exact intermediate lay near a rounding midpoint: eager rounded it down,
// the kernel (another formula order) up, each about half a spacing from the exact result.
TEST(OutputComparison, AChainKernelAsCloseToFloat64AsEagerPasses)
{
    const Tolerance f16 = toleranceFor("float16", OpClass::Other);
    const std::vector<std::int64_t> sizes{3};
    const double golden[] = {0.50395, 1.25, -3.0};
    const double eager[] = {0.5, 1.25, -3.0};
    const double got[] = {0.5078125, 1.25, -3.0};
    EXPECT_FALSE(compareOutputs(got, eager, sizes, f16).passed); // element-wise against eager: "wrong"
    const ComparisonResult result = compareWithGolden(got, eager, golden, sizes, f16, 2.0);
    EXPECT_TRUE(result.passed) << result.describe(f16);
    EXPECT_EQ(result.elements, 3);
    EXPECT_NE(describeGoldenComparison(result, f16, 2.0).find("float64"), std::string::npos);
}

TEST(OutputComparison, AChainKernelFartherFromFloat64ThanEagerFails)
{
    const Tolerance f16 = toleranceFor("float16", OpClass::Other);
    const std::vector<std::int64_t> sizes{2, 2};
    const double golden[] = {0.5078125, 1.25, -3.0, 7.0};
    const double eager[] = {0.5, 1.25, -3.0, 7.0};
    // Element 0: beyond twice eager's error plus the tolerance; element 3: eager is exact there,
    // so the kernel gets only the tolerance.
    const double got[] = {0.54, 1.25, -3.0, 7.25};
    const ComparisonResult result = compareWithGolden(got, eager, golden, sizes, f16, 2.0);
    EXPECT_FALSE(result.passed);
    EXPECT_EQ(result.mismatches, 2);
    EXPECT_EQ(result.firstBadIndex, 0);
    EXPECT_EQ(result.firstBadCoordinates, (std::vector<std::int64_t>{0, 0}));
    EXPECT_EQ(result.firstBadExpected, golden[0]); // "expected" is the float64 value
    const std::string text = describeGoldenComparison(result, f16, 2.0);
    EXPECT_NE(text.find("float64"), std::string::npos) << text;
    EXPECT_NE(text.find("2 of 4"), std::string::npos) << text;
    // A kernel as far from float64 as eager is passes (twice eager's error is the most it may add).
    const double close[] = {0.5, 1.25, -3.0, 7.0};
    EXPECT_TRUE(compareWithGolden(close, eager, golden, sizes, f16, 2.0).passed);
}

// A cumsum along dim 1 of [2, 4]: eager's error is a random walk that crosses zero (element 2 of
// line 0 happens to be exact), so an element is judged by eager's largest error so far in its line.
TEST(OutputComparison, AScanIsJudgedByEagersLargestErrorSoFarAlongItsLine)
{
    const Tolerance f32 = toleranceFor("float32", OpClass::Reduction); // atol 1e-5, rtol 1e-4
    const std::vector<std::int64_t> sizes{2, 4};
    const double golden[] = {1.0, 2.0, 3.0, 4.0, /* line 1 */ 1.0, 2.0, 3.0, 4.0};
    const double eager[] = {1.0, 2.001, 3.0, 4.0, /* line 1: exact */ 1.0, 2.0, 3.0, 4.0};
    // Line 0: within 2 x 0.001 of the exact value after eager's error at step 1, also where eager
    // itself is exact again. Line 1 keeps only the tolerance: its eager error is 0 all along.
    const double got[] = {1.0, 2.0005, 3.0015, 3.9992, 1.0, 2.0, 3.0, 4.0};
    EXPECT_FALSE(compareWithGolden(got, eager, golden, sizes, f32, 2.0).passed); // element-wise golden rule
    const ComparisonResult scan = compareScanWithGolden(got, eager, golden, sizes, 1, f32, 2.0);
    EXPECT_TRUE(scan.passed) << scan.describe(f32);
    EXPECT_NE(describeGoldenComparison(scan, f32, 2.0, true).find("scan run in float64"), std::string::npos);

    double wrongLine1[8];
    std::copy(got, got + 8, wrongLine1);
    wrongLine1[6] = 3.0015; // as far off as line 0's element 2, but line 1's eager is exact
    const ComparisonResult bad = compareScanWithGolden(wrongLine1, eager, golden, sizes, 1, f32, 2.0);
    EXPECT_FALSE(bad.passed);
    EXPECT_EQ(bad.firstBadCoordinates, (std::vector<std::int64_t>{1, 2}));

    // A lost carry (the prefix shifted by a whole element) is off by the data's magnitude.
    const double shifted[] = {1.0, 2.0, 2.0, 3.0, 1.0, 2.0, 3.0, 4.0};
    EXPECT_EQ(compareScanWithGolden(shifted, eager, golden, sizes, 1, f32, 2.0).mismatches, 2);
}

// Scanned along dim 0 of [3, 2]: the lines are the columns, each with its own running error.
TEST(OutputComparison, AScanOverAnOuterDimTracksEachColumn)
{
    const Tolerance f32 = toleranceFor("float32", OpClass::Reduction);
    const std::vector<std::int64_t> sizes{3, 2};
    const double golden[] = {1.0, 1.0, 2.0, 2.0, 3.0, 3.0};
    const double eager[] = {1.0, 1.0, 2.01, 2.0, 3.0, 3.0}; // column 0 errs at step 1, column 1 never
    const double got[] = {1.0, 1.0, 2.0, 2.0, 3.015, 3.0};
    EXPECT_TRUE(compareScanWithGolden(got, eager, golden, sizes, 0, f32, 2.0).passed);
    const double gotColumn1[] = {1.0, 1.0, 2.0, 2.0, 3.0, 3.015};
    EXPECT_FALSE(compareScanWithGolden(gotColumn1, eager, golden, sizes, 0, f32, 2.0).passed);
}

TEST(OutputComparison, GoldenComparisonKeepsEagersNanAndInfinityAndExactDtypes)
{
    const Tolerance f32 = toleranceFor("float32", OpClass::Elementwise);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<std::int64_t> sizes{4};
    const double golden[] = {nan, 1e39, 2.0, nan};
    const double eager[] = {nan, inf, 2.0, 5.0}; // float64 did not overflow; a golden NaN eager lacks
    const double same[] = {nan, inf, 2.0, 5.0};
    EXPECT_TRUE(compareWithGolden(same, eager, golden, sizes, f32, 2.0).passed);
    const double nanWhereEagerHasANumber[] = {nan, inf, nan, 5.0};
    EXPECT_FALSE(compareWithGolden(nanWhereEagerHasANumber, eager, golden, sizes, f32, 2.0).passed);
    const double finiteWhereEagerOverflows[] = {nan, 3e38, 2.0, 5.0};
    EXPECT_FALSE(compareWithGolden(finiteWhereEagerOverflows, eager, golden, sizes, f32, 2.0).passed);
    const double offWhereGoldenIsNan[] = {nan, inf, 2.0, 6.0}; // judged against eager there
    EXPECT_FALSE(compareWithGolden(offWhereGoldenIsNan, eager, golden, sizes, f32, 2.0).passed);

    const Tolerance exact = toleranceFor("int32", OpClass::Elementwise);
    const double ints[] = {1, 2, 3, 4};
    const double intsGolden[] = {1, 2, 3, 5};
    const double intsGot[] = {1, 2, 3, 5}; // equal to "golden", not to eager: integers are exact
    EXPECT_FALSE(compareWithGolden(intsGot, ints, intsGolden, sizes, exact, 2.0).passed);
}
