// Which cards a search covers (core/engine/CardSelection.h).

#include "engine/CardSelection.h"

#include "RegionChainBuilder.h"
#include "TestProject.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kforge::core {
namespace {

TEST(CardSelection, NamedCardsInTheGivenOrderAndAnUnknownOneIsAnError)
{
    const Project project = test::makeFixtureProject();
    ASSERT_GE(project.cards.size(), 2u);
    const std::string first = project.cards[0].id, second = project.cards[1].id;
    auto named = selectCardsToSearch(project, {second.substr(0, 8), first}, true);
    ASSERT_TRUE(named.ok()) << named.error().toString();
    ASSERT_EQ(named->cards.size(), 2u);
    EXPECT_EQ(named->cards[0]->id, second);
    EXPECT_EQ(named->cards[1]->id, first);
    EXPECT_TRUE(named->skipped.empty());

    auto unknown = selectCardsToSearch(project, {"zzzz"}, true);
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.error().toString(), "--cards zzzz: no card with that id (or the prefix is ambiguous)");
}

TEST(CardSelection, ByDefaultLargestShareFirstWithoutVendorCardsAndWhatTheProposerLacks)
{
    Project project = test::makeFixtureProject();
    const auto all = selectCardsToSearch(project, {}, /*builtin=*/false);
    ASSERT_TRUE(all.ok());
    for (std::size_t i = 1; i < all->cards.size(); ++i)
        EXPECT_GE(all->cards[i - 1]->timeShare, all->cards[i]->timeShare);
    for (const OperatorCard* card : all->cards)
        EXPECT_FALSE(card->vendorBacked) << card->key;
    for (const SkippedCard& skipped : all->skipped)
        EXPECT_EQ(skipped.reason, "vendor-backed (cuBLAS/cuDNN)") << skipped.card->key;
    EXPECT_EQ(all->cards.size() + all->skipped.size(), project.cards.size());

    // The built-in proposer leaves out what it does not cover, saying why.
    const auto builtin = selectCardsToSearch(project, {}, /*builtin=*/true);
    ASSERT_TRUE(builtin.ok());
    EXPECT_EQ(builtin->cards.size() + builtin->skipped.size(), project.cards.size());
    for (const SkippedCard& skipped : builtin->skipped)
        EXPECT_FALSE(skipped.reason.empty()) << skipped.card->key;
}

TEST(CardSelection, CardsWhoseOutputIsTheirInputAreSkippedForEveryProposer)
{
    Project project = test::makeFixtureProject();
    ASSERT_FALSE(project.cards.empty());
    OperatorCard& flatten = project.cards.front(); // as capture marks a view, dropout in eval, ...
    flatten.vendorBacked = false;
    flatten.samples.clear();
    flatten.samplesNote = kAliasOutputSamplesNote;
    ASSERT_TRUE(flatten.computesNothing());
    for (bool builtin : {false, true}) {
        const auto selection = selectCardsToSearch(project, {}, builtin);
        ASSERT_TRUE(selection.ok());
        EXPECT_EQ(std::count_if(selection->cards.begin(), selection->cards.end(),
                                [&](const OperatorCard* c) { return c->id == flatten.id; }),
                  0);
        const auto skipped = std::find_if(selection->skipped.begin(), selection->skipped.end(),
                                          [&](const SkippedCard& s) { return s.card->id == flatten.id; });
        ASSERT_NE(skipped, selection->skipped.end());
        EXPECT_EQ(skipped->reason, "no kernel to run: its output is a view of an input or the input itself");
    }
}

TEST(CardSelection, RegionCardsTheBuiltinProposerCannotCoverAreSkippedWithTheReason)
{
    using namespace test_regions;
    Project project = test::makeFixtureProject();
    const TensorSpec t = spec("float32", {4, 8});
    RegionChainBuilder pointwise; // mul -> relu: one pointwise kernel
    pointwise.output(pointwise.unary("aten::relu", pointwise.binary("aten::mul", pointwise.input(t), 2.0, t)));
    // mul -> a sum over dim 1 and an amax over dim 2: two row shapes, which no one kernel covers
    RegionChainBuilder twoRowShapes;
    const TensorSpec g = spec("float32", {2, 8, 4});
    const Value m = twoRowShapes.binary("aten::mul", twoRowShapes.input(g), 0.125, g);
    twoRowShapes.output(
        twoRowShapes.call("aten::sum", "dim_IntList",
                          {{"self", m}, {"dim", nlohmann::json({1})}, {"keepdim", false}, {"dtype", std::monostate{}}},
                          spec("float32", {2, 4})));
    twoRowShapes.output(twoRowShapes.call(
        "aten::amax", "", {{"self", m}, {"dim", nlohmann::json({2})}, {"keepdim", false}}, spec("float32", {2, 8})));
    for (RegionChainBuilder* b : {&pointwise, &twoRowShapes}) {
        OperatorCard card = b->card();
        card.id = cardIdForKey(card.key);
        project.cards.push_back(card);
    }
    const std::string covered = project.cards[project.cards.size() - 2].id;
    const std::string refused = project.cards.back().id;
    const auto builtin = selectCardsToSearch(project, {}, /*builtin=*/true);
    ASSERT_TRUE(builtin.ok());
    EXPECT_NE(std::find_if(builtin->cards.begin(), builtin->cards.end(),
                           [&](const OperatorCard* c) { return c->id == covered; }),
              builtin->cards.end());
    const auto skipped = std::find_if(builtin->skipped.begin(), builtin->skipped.end(),
                                      [&](const SkippedCard& s) { return s.card->id == refused; });
    ASSERT_NE(skipped, builtin->skipped.end());
    EXPECT_EQ(skipped->reason, "reductions over rows of different shapes");
}

} // namespace
} // namespace kforge::core
