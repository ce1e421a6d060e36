// allWithinTolerance on CPU tensors: slicing does not change the verdict or the largest error, a
// failing element in any slice is found, NaN and infinities follow eager, strided and broadcast
// views are judged in place.

#include "gpu_evaluation/ChunkedTolerance.h"

#include <gtest/gtest.h>

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
