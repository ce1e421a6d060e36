// A region card in cards.json: written and read back whole; a chain that does not agree with its
// card, or a kforge::region card without a chain, is one clear error naming the JSON path.

#include "project/ProjectJson.h"

#include <gtest/gtest.h>

using namespace kforge::core;

namespace {

TensorSpec spec()
{
    return TensorSpec{"float32", {4, 8}, {8, 1}, "cuda:0"};
}

ArgSpec tensorArg(const std::string& name)
{
    ArgSpec arg;
    arg.name = name;
    arg.type = "Tensor";
    arg.kind = ArgKind::Tensor;
    arg.tensors = {spec()};
    return arg;
}

// in0 * in1 -> tanh: a two-member region card.
OperatorCard regionCard()
{
    ChainMember mul{
        "aten::mul", "Tensor", "m", {tensorArg("self"), tensorArg("other")}, {{{false, 0, 0}}, {{false, 1, 0}}},
        {spec()}};
    ChainMember tanh{"aten::tanh", "", "t", {tensorArg("self")}, {{{true, 0, 0}}}, {spec()}};
    OperatorCard card;
    card.op = kRegionOp;
    card.key = "m0=mul;m1=tanh";
    card.id = cardIdForKey(card.key);
    card.schema = "kforge::region(Tensor in0, Tensor in1) -> (Tensor)";
    card.args = {tensorArg("in0"), tensorArg("in1")};
    card.outputs = {spec()};
    card.callCount = 1;
    card.callPositions = {3};
    card.region = RegionChain{{mul, tanh}, {{true, 1, 0}}, {{3, 4}}};
    return card;
}

} // namespace

TEST(RegionCardJson, RoundTripsWithItsChain)
{
    const OperatorCard card = regionCard();
    const nlohmann::json json = toJson(card);
    EXPECT_EQ(json.at("region").at("chain"), "mul -> tanh");
    auto read = cardFromJson(json, "cards[0]");
    ASSERT_TRUE(read.ok()) << read.error().toString();
    EXPECT_EQ(read.value(), card);
}

TEST(RegionCardJson, ABrokenChainOrAMissingOneIsRefused)
{
    nlohmann::json json = toJson(regionCard());
    json["region"]["members"][1]["sources"][0][0] = {{"member", 5}, {"output", 0}};
    auto read = cardFromJson(json, "cards[0]");
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.error().toString().find("cards[0]"), std::string::npos) << read.error().toString();
    EXPECT_NE(read.error().message.find("region: member 1 (aten::tanh)"), std::string::npos) << read.error().message;

    json = toJson(regionCard());
    json["region"] = nullptr;
    read = cardFromJson(json, "cards[0]");
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.error().message.find("without its region chain"), std::string::npos) << read.error().message;

    json = toJson(regionCard());
    json["region"]["members"][0]["sources"] = "not a list";
    read = cardFromJson(json, "cards[0]");
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.error().message.find("sources"), std::string::npos) << read.error().message;
}

TEST(RegionCardJson, CardsWrittenBeforeRegionsStillRead)
{
    OperatorCard card = regionCard();
    card.op = "aten::tanh";
    card.region.reset();
    nlohmann::json json = toJson(card);
    json.erase("region");
    auto read = cardFromJson(json, "cards[0]");
    ASSERT_TRUE(read.ok()) << read.error().toString();
    EXPECT_FALSE(read->isRegion());
}
