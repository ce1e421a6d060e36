// Region discovery on hand-made call graphs: grouping, convexity splits, boundaries, repetition.

#include "GraphBuilder.h"
#include "regions/FusibleOps.h"

#include <gtest/gtest.h>

using namespace kforge::core;
using kforge::core::test_graphs::GraphBuilder;

TEST(FusibleOps, TableCoversPointwiseNormsReductionsAndNotViewsOrVendorOps)
{
    for (const char* op : {"aten::add", "aten::relu_", "aten::_softmax", "aten::native_batch_norm", "aten::rms_norm",
                           "aten::mean", "aten::amax", "aten::_to_copy", "aten::where", "aten::hardswish_"})
        EXPECT_TRUE(isFusibleOpName(op)) << op;
    for (const char* op : {"aten::linear", "aten::view", "aten::transpose", "aten::item", "aten::_convolution",
                           "aten::matmul", "aten::add__", "prim::add", "add"})
        EXPECT_FALSE(isFusibleOpName(op)) << op;
}

TEST(RegionFinder, ChainBetweenVendorOpsIsOneRegion)
{
    GraphBuilder g;
    const auto h = g.call("aten::linear", {-1, -1}, true);
    const auto a = g.call("aten::mul", {h, -1});
    const auto b = g.call("aten::add", {a, -1});
    const auto c = g.call("aten::relu_", {b});
    g.output(g.call("aten::linear", {c, -1}, true));
    const auto regions = g.regions();
    ASSERT_EQ(regions.size(), 1u);
    EXPECT_EQ(regions[0].chainText(), "mul -> add -> relu_");
    EXPECT_EQ(regions[0].inputs.size(), 3u); // h and two externals
    ASSERT_EQ(regions[0].outputs.size(), 1u);
    EXPECT_EQ(regions[0].outputs[0].member, 2);
    EXPECT_EQ(regions[0].edges.size(), 2u);
    EXPECT_EQ(regions[0].occurrences, (std::vector<std::vector<std::int64_t>>{{1, 2, 3}}));
    EXPECT_DOUBLE_EQ(regions[0].eagerUsEstimate, 3.0);
}

TEST(RegionFinder, PathThroughANonMemberSplitsTheGroup)
{
    // add -> linear -> mul, and add -> mul directly: {add, mul} is connected but not convex (the
    // path through the linear leaves and re-enters). mul -> relu stays a region.
    GraphBuilder g;
    const auto a = g.call("aten::add", {-1, -1});
    const auto l = g.call("aten::linear", {a, -1}, true);
    const auto m = g.call("aten::mul", {a, l});
    g.output(g.call("aten::relu", {m}));
    const auto regions = g.regions();
    ASSERT_EQ(regions.size(), 1u);
    EXPECT_EQ(regions[0].chainText(), "mul -> relu");
    EXPECT_EQ(regions[0].occurrences.front(), (std::vector<std::int64_t>{2, 3}));
    EXPECT_EQ(regions[0].inputs.size(), 2u);
}

TEST(RegionFinder, DiamondWithoutOutsidePathIsConvex)
{
    GraphBuilder g;
    const auto x = g.call("aten::add", {-1, -1});
    const auto e = g.call("aten::exp", {x});
    const auto t = g.call("aten::tanh", {x});
    g.output(g.call("aten::mul", {e, t}));
    const auto regions = g.regions();
    ASSERT_EQ(regions.size(), 1u);
    EXPECT_EQ(regions[0].chainText(), "add -> exp -> tanh -> mul");
    EXPECT_EQ(regions[0].edges.size(), 4u);
    EXPECT_EQ(regions[0].outputs.size(), 1u);
}

TEST(RegionFinder, ViewsAndAliasingCallsBoundRegions)
{
    GraphBuilder g;
    const auto a = g.call("aten::add", {-1, -1});
    const auto v = g.call("aten::view", {a}, false, true);
    const auto r = g.call("aten::relu", {v});
    g.output(g.call("aten::to", {r}, false, true)); // a no-op to(): aliasing, not a cast
    EXPECT_TRUE(g.regions().empty());
}

TEST(RegionFinder, RotaryWithTheCatOfItsHalvesIsOneRegion)
{
    // transformers' q * cos + rotate_half(q) * sin, rotate_half(x) = cat(-x2, x1) of two slices.
    GraphBuilder g;
    const auto q = g.call("aten::linear", {-1, -1}, true);
    const auto x1 = g.call("aten::slice", {q}, false, true);
    const auto x2 = g.call("aten::slice", {q}, false, true);
    const auto rotated = g.cat({g.call("aten::neg", {x2}), x1});
    const auto sum = g.call("aten::add", {g.call("aten::mul", {q, -1}), g.call("aten::mul", {rotated, -1})});
    g.output(g.call("aten::matmul", {sum, -1}, true));
    const auto regions = g.regions();
    ASSERT_EQ(regions.size(), 1u);
    EXPECT_EQ(regions[0].chainText(), "neg -> cat -> mul -> mul -> add");
    EXPECT_EQ(regions[0].inputs.size(), 5u); // x2, x1, q, cos, sin
    ASSERT_EQ(regions[0].outputs.size(), 1u);
    EXPECT_EQ(regions[0].outputs[0].member, 4);
}

TEST(RegionFinder, CatStaysOutOfRegionsWithAReductionAndOfMixedDtypes)
{
    GraphBuilder g;
    const auto joined = g.cat({g.call("aten::add", {-1, -1}), -1});
    const auto p = g.call("aten::softmax", {g.call("aten::mul", {joined, -1})});
    g.call("aten::linear", {g.call("aten::tanh", {p}), -1}, true);
    const auto mixed = g.cat({g.call("aten::exp", {-1}), -1}, {"float32", "float16"});
    g.output(g.call("aten::relu", {mixed}));
    const auto regions = g.regions();
    ASSERT_EQ(regions.size(), 1u);
    EXPECT_EQ(regions[0].chainText(), "mul -> softmax -> tanh");
    EXPECT_FALSE(isFusibleCard(g.cards()[g.cards().size() - 2], true)); // the cat of float32 and float16
}

TEST(RegionFinder, ValueUsedOutsideIsARegionOutput)
{
    GraphBuilder g;
    const auto a = g.call("aten::add", {-1, -1});
    const auto n = g.call("aten::layer_norm", {a, -1, -1});
    const auto l = g.call("aten::linear", {n, -1}, true);
    g.output(g.call("aten::view", {a}, false, true)); // a read by a non-member
    g.output(l);
    const auto regions = g.regions();
    ASSERT_EQ(regions.size(), 1u);
    ASSERT_EQ(regions[0].outputs.size(), 2u);
    EXPECT_EQ(regions[0].outputs[0].member, 0);
    EXPECT_EQ(regions[0].outputs[1].member, 1);
}

TEST(RegionFinder, RepeatedChainIsOneRegionWithEveryOccurrence)
{
    GraphBuilder g;
    auto x = g.call("aten::linear", {-1, -1}, true);
    for (int layer = 0; layer < 3; ++layer) {
        const auto s = g.call("aten::silu", {x});
        const auto m = g.call("aten::mul", {s, -1});
        x = g.call("aten::linear", {m, -1}, true);
    }
    g.output(x);
    const auto regions = g.regions();
    ASSERT_EQ(regions.size(), 1u);
    EXPECT_EQ(regions[0].chainText(), "silu -> mul");
    EXPECT_EQ(regions[0].occurrences, (std::vector<std::vector<std::int64_t>>{{1, 2}, {4, 5}, {7, 8}}));
}

TEST(RegionFinder, SingleFusibleCallsAndEmptyGraphsHaveNoRegion)
{
    GraphBuilder g;
    const auto l = g.call("aten::linear", {-1, -1}, true);
    const auto r = g.call("aten::relu", {l});
    g.output(g.call("aten::linear", {r, -1}, true));
    EXPECT_TRUE(g.regions().empty());
    EXPECT_TRUE(findRegions(CallGraph{}, {}).empty());
}
