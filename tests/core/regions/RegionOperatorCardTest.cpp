// A found region as the card the search works on: inputs as arguments, the chain's sources, the
// refusal of a chain whose in-place member overwrites a value it hands on.

#include "regions/RegionOperatorCard.h"
#include "GraphBuilder.h"

#include <gtest/gtest.h>

using namespace kforge::core;
using kforge::core::test_graphs::GraphBuilder;

TEST(RegionOperatorCard, InputsBecomeArgumentsAndSourcesFollowTheEdges)
{
    GraphBuilder g;
    const auto h = g.call("aten::linear", {-1, -1}, true);
    const auto a = g.call("aten::mul", {h, -1});
    const auto b = g.call("aten::add", {a, h});
    g.output(g.call("aten::linear", {g.call("aten::relu_", {b}), -1}, true));
    const auto regions = g.regions();
    ASSERT_EQ(regions.size(), 1u);
    auto card = makeRegionCard(regions[0], g.cards());
    ASSERT_TRUE(card) << card.error().message;
    EXPECT_EQ(card->op, kRegionOp);
    EXPECT_EQ(card->id, regions[0].id);
    EXPECT_EQ(card->id, cardIdForKey(card->key));
    EXPECT_EQ(card->schema, "kforge::region(Tensor in0, Tensor in1) -> (Tensor)");
    ASSERT_EQ(card->args.size(), 2u);
    EXPECT_EQ(card->args[0].name, "in0");
    EXPECT_EQ(card->args[1].kind, ArgKind::Tensor);
    ASSERT_EQ(card->outputs.size(), 1u);
    EXPECT_EQ(card->callPositions, (std::vector<std::int64_t>{1}));
    ASSERT_TRUE(card->isRegion());
    const RegionChain& chain = *card->region;
    EXPECT_EQ(chain.text(), "mul -> add -> relu_");
    ASSERT_EQ(chain.members.size(), 3u);
    // add reads mul's output and h, which is region input 0 (mul's first argument too).
    EXPECT_EQ(chain.members[1].sources[0].front(), (ChainSource{true, 0, 0}));
    EXPECT_EQ(chain.members[1].sources[1].front(), (ChainSource{false, 0, 0}));
    EXPECT_EQ(chain.members[0].sources[1].front(), (ChainSource{false, 1, 0}));
    EXPECT_EQ(chain.outputs, (std::vector<ChainSource>{{true, 2, 0}}));
    std::vector<TensorSpec> inputs{card->args[0].tensors[0], card->args[1].tensors[0]};
    EXPECT_EQ(chain.problem(inputs), "");
}

TEST(RegionOperatorCard, InPlaceOverwriteOfAnOutputIsRefused)
{
    // add's result leaves the region (the linear reads it) before relu_ overwrites it in place.
    GraphBuilder g;
    const auto a = g.call("aten::add", {-1, -1});
    const auto l = g.call("aten::linear", {a, -1}, true);
    const auto r = g.call("aten::relu_", {a});
    g.output(l);
    g.output(r);
    const auto regions = g.regions();
    ASSERT_EQ(regions.size(), 1u);
    auto card = makeRegionCard(regions[0], g.cards());
    ASSERT_FALSE(card);
    EXPECT_EQ(card.error().code, ErrorCode::Unsupported);
    EXPECT_NE(card.error().message.find("overwrites in place"), std::string::npos) << card.error().message;
}

TEST(RegionChain, ProblemNamesABrokenSource)
{
    GraphBuilder g;
    const auto a = g.call("aten::mul", {-1, -1});
    g.output(g.call("aten::tanh", {a}));
    auto card = makeRegionCard(g.regions().at(0), g.cards());
    ASSERT_TRUE(card);
    RegionChain chain = *card->region;
    std::vector<TensorSpec> inputs{card->args[0].tensors[0], card->args[1].tensors[0]};
    chain.members[1].sources[0][0] = ChainSource{true, 1, 0}; // reads itself
    EXPECT_NE(chain.problem(inputs).find("not earlier"), std::string::npos) << chain.problem(inputs);
    chain = *card->region;
    chain.members[0].sources[1][0] = ChainSource{false, 0, 0}; // in1 now read by nobody
    EXPECT_EQ(chain.problem(inputs), "region input in1 is read by no member");
    chain = *card->region;
    chain.members[1].args[0].tensors[0].sizes = {2, 2};
    EXPECT_NE(chain.problem(inputs).find("the source is float32[4,8]"), std::string::npos) << chain.problem(inputs);
}
