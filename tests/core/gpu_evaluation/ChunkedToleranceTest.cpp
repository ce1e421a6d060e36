// allWithinTolerance on CPU tensors: slicing does not change the verdict or the largest error, a
// failing element in any slice is found, NaN and infinities follow eager, strided and broadcast
// views are judged in place; the sliced host comparisons give the whole-tensor results.

#include "gpu_evaluation/ChunkedTolerance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace kforge::core;

namespace {

const Tolerance kTolerance{1e-5, 1e-5, false};

at::Tensor values(std::vector<std::int64_t> sizes, std::uint64_t seed)
{
    at::Generator g = at::detail::createCPUGenerator(seed);
    return at::randn(sizes, g, at::TensorOptions().dtype(at::kFloat));
}

} // namespace

TEST(ChunkedTolerance, SlicesGiveTheWholeTensorsVerdictAndLargestError)
{
    const at::Tensor expected = values({7, 5, 33}, 1);
    const at::Tensor got = expected + 1e-7 * values({7, 5, 33}, 2);
    double whole = -1, sliced = -1, rows = -1;
    EXPECT_TRUE(allWithinTolerance(got, expected, kTolerance, whole, got.numel()));
    EXPECT_TRUE(allWithinTolerance(got, expected, kTolerance, sliced, 40)); // a row of 33 per slice
    EXPECT_TRUE(allWithinTolerance(got, expected, kTolerance, rows, 1));    // smaller than a row
    EXPECT_GT(whole, 0);
    EXPECT_DOUBLE_EQ(whole, sliced);
    EXPECT_DOUBLE_EQ(whole, rows);
}

TEST(ChunkedTolerance, AFailingElementInTheLastSliceIsFound)
{
    const at::Tensor expected = values({64, 3, 16}, 3);
    at::Tensor got = expected.clone();
    got.index_put_({63, 2, 15}, expected.index({63, 2, 15}) + 1.0);
    for (std::int64_t slice : {std::int64_t{7}, std::int64_t{48}, got.numel()}) {
        double maxAbs = 0;
        EXPECT_FALSE(allWithinTolerance(got, expected, kTolerance, maxAbs, slice)) << slice;
    }
}

TEST(ChunkedTolerance, NanAndInfinitiesFollowEager)
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const at::Tensor expected = at::tensor({1.0, nan, inf, -inf, 2.0}).reshape({5, 1});
    double maxAbs = 0;
    EXPECT_TRUE(allWithinTolerance(expected.clone(), expected, kTolerance, maxAbs, 2));
    EXPECT_EQ(maxAbs, 0);
    for (int k = 0; k < 4; ++k) {
        at::Tensor got = expected.clone();
        got.index_put_({k + 1, 0}, k == 0 ? 0.0 : (k == 1 ? -inf : (k == 2 ? inf : nan)));
        EXPECT_FALSE(allWithinTolerance(got, expected, kTolerance, maxAbs, 2)) << k;
    }
}

TEST(ChunkedTolerance, StridedViewsAreJudgedInPlace)
{
    const at::Tensor base = values({40, 30}, 4);
    const at::Tensor transposed = base.t(); // [30, 40], strides (1, 30)
    double maxAbs = -1;
    EXPECT_TRUE(allWithinTolerance(transposed, transposed.contiguous(), kTolerance, maxAbs, 50));
    EXPECT_EQ(maxAbs, 0);
    // An expanded expectation (stride 0) against a real tensor.
    const at::Tensor row = values({1, 30}, 5);
    EXPECT_TRUE(allWithinTolerance(row.expand({40, 30}).clone(), row.expand({40, 30}), kTolerance, maxAbs, 64));
}

// compareInSlices / compareWithGoldenInSlices against the whole-tensor comparisons on one host copy.
namespace {

at::Tensor hostDouble(const at::Tensor& t)
{
    return t.to(at::kDouble).contiguous();
}

ComparisonResult wholeComparison(const at::Tensor& got, const at::Tensor& expected)
{
    const at::Tensor g = hostDouble(got), e = hostDouble(expected);
    return compareOutputs(g.data_ptr<double>(), e.data_ptr<double>(), g.sizes().vec(), kTolerance);
}

void expectSameResult(const ComparisonResult& sliced, const ComparisonResult& whole, std::int64_t slice)
{
    EXPECT_EQ(sliced.passed, whole.passed) << slice;
    EXPECT_EQ(sliced.elements, whole.elements) << slice;
    EXPECT_EQ(sliced.mismatches, whole.mismatches) << slice;
    EXPECT_EQ(sliced.firstBadIndex, whole.firstBadIndex) << slice;
    EXPECT_EQ(sliced.firstBadCoordinates, whole.firstBadCoordinates) << slice;
    const auto same = [](double a, double b) { return std::isnan(a) ? std::isnan(b) : a == b; };
    EXPECT_TRUE(same(sliced.firstBadGot, whole.firstBadGot)) << slice;
    EXPECT_TRUE(same(sliced.firstBadExpected, whole.firstBadExpected)) << slice;
    EXPECT_DOUBLE_EQ(sliced.maxAbsError, whole.maxAbsError) << slice;
    EXPECT_DOUBLE_EQ(sliced.maxRelError, whole.maxRelError) << slice;
    EXPECT_EQ(sliced.reason, whole.reason) << slice;
}

} // namespace

TEST(ChunkedTolerance, SlicedComparisonIsTheWholeComparison)
{
    const at::Tensor expected = values({6, 4, 9}, 6);
    at::Tensor got = expected + 1e-7 * values({6, 4, 9}, 7);
    got.index_put_({3, 1, 8}, 5.0);
    got.index_put_({5, 0, 0}, std::numeric_limits<double>::quiet_NaN());
    got.index_put_({1, 2, 4}, expected.index({1, 2, 4}) - 0.5);
    const ComparisonResult whole = wholeComparison(got, expected);
    ASSERT_EQ(whole.mismatches, 3);
    ASSERT_EQ(whole.firstBadCoordinates, (std::vector<std::int64_t>{1, 2, 4}));
    for (std::int64_t slice : {std::int64_t{1}, std::int64_t{5}, std::int64_t{9}, std::int64_t{40}, got.numel()})
        expectSameResult(compareInSlices(got, expected, kTolerance, slice), whole, slice);
    // A strided view is sliced in place.
    const at::Tensor transposed = got.transpose(0, 2);
    expectSameResult(compareInSlices(transposed, expected.transpose(0, 2), kTolerance, 7),
                     wholeComparison(transposed, expected.transpose(0, 2)), 7);
}

TEST(ChunkedTolerance, SlicedGoldenComparisonKeepsScannedLinesWhole)
{
    // A scan along dim 1 of [5, 12, 3]: the bound at an element is eager's largest error so far in
    // its line, so a slice that cut a line would restart it and pass an element the whole fails.
    const at::Tensor golden = values({5, 12, 3}, 8).to(at::kDouble);
    at::Tensor eager = golden.clone();
    eager.index_put_({2, 1, 1}, golden.index({2, 1, 1}) + 0.25); // eager's error early in the line
    at::Tensor got = golden.clone();
    got.index_put_({2, 9, 1}, golden.index({2, 9, 1}) + 0.4); // within 2x that level, later in the line
    got.index_put_({4, 3, 2}, golden.index({4, 3, 2}) + 0.4); // eager exact in that line: fails
    const at::Tensor g = hostDouble(got), e = hostDouble(eager), x = hostDouble(golden);
    const ComparisonResult whole = compareScanWithGolden(g.data_ptr<double>(), e.data_ptr<double>(),
                                                         x.data_ptr<double>(), g.sizes().vec(), 1, kTolerance, 2.0);
    ASSERT_EQ(whole.mismatches, 1);
    ASSERT_EQ(whole.firstBadCoordinates, (std::vector<std::int64_t>{4, 3, 2}));
    for (std::int64_t slice : {std::int64_t{1}, std::int64_t{12}, std::int64_t{20}, got.numel()})
        expectSameResult(compareWithGoldenInSlices(got, eager, golden, kTolerance, 2.0, 1, slice), whole, slice);
    const ComparisonResult plain = compareWithGolden(g.data_ptr<double>(), e.data_ptr<double>(), x.data_ptr<double>(),
                                                     g.sizes().vec(), kTolerance, 2.0);
    expectSameResult(compareWithGoldenInSlices(got, eager, golden, kTolerance, 2.0, std::nullopt, 5), plain, 5);
}
