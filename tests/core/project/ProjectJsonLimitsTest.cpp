// Project files with impossible numbers (docs/project-format.md, "Sizes and numbers"): negative or
// overflowing tensor sizes and strides, fractions or out-of-range values where integers belong, and
// argument values nested too deep to copy are refused with one line naming the file and the field.

#include "project/ProjectJson.h"
#include "project/ProjectStore.h"
#include "util/AtomicFile.h"

#include "ScratchDir.h"
#include "TestProject.h"
#include "cast/BoundedRun.h"

#include <gtest/gtest.h>

using namespace kforge::core;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class ProjectJsonLimits : public ::testing::Test {
protected:
    void SetUp() override
    {
        fs::create_directories(m_dir);
        ASSERT_TRUE(saveProject(m_dir, test::makeFixtureProject()).ok());
        m_cards = json::parse(readWholeFile(m_dir / "cards.json").value());
        m_project = json::parse(readWholeFile(m_dir / "project.json").value());
    }

    /// The error line of openProject after writing `cards` and `project` (fails if it opens).
    std::string refusal()
    {
        EXPECT_TRUE(writeFileAtomically(m_dir / "cards.json", m_cards.dump()).ok());
        EXPECT_TRUE(writeFileAtomically(m_dir / "project.json", m_project.dump()).ok());
        auto opened = openProject(m_dir);
        EXPECT_FALSE(opened.ok()) << "accepted";
        return opened.ok() ? std::string() : opened.error().toString();
    }

    std::string cardsFile() const { return (m_dir / "cards.json").string(); }
    json& selfTensor() { return m_cards["cards"][0]["args"][0]["tensors"][0]; }

    test::ScratchDir m_scratch;
    const fs::path m_dir = m_scratch.path() / "project";
    json m_cards;
    json m_project;
};

} // namespace

TEST_F(ProjectJsonLimits, NegativeSizesAndStridesAreRefused)
{
    selfTensor()["sizes"] = {8, -512};
    EXPECT_EQ(refusal(), cardsFile() + ": cards[0].args[0].tensors[0]: sizes[1] is -512 (expected >= 0)");

    SetUp();
    selfTensor()["strides"] = {-1, 1};
    EXPECT_EQ(refusal(), cardsFile() + ": cards[0].args[0].tensors[0]: strides[0] is -1 (expected >= 0)");

    SetUp();
    m_cards["cards"][0]["outputs"][0]["sizes"] = {-8, 512};
    EXPECT_EQ(refusal(), cardsFile() + ": cards[0].outputs[0]: sizes[0] is -8 (expected >= 0)");
}

// The case: [2^62, 64] read as an empty tensor (its element count wrapped to 0).
TEST_F(ProjectJsonLimits, OverflowingElementCountsAreRefused)
{
    selfTensor()["sizes"] = {std::int64_t{1} << 62, 64};
    selfTensor()["strides"] = {64, 1};
    EXPECT_EQ(refusal(),
              cardsFile() +
                  ": cards[0].args[0].tensors[0]: sizes [4611686018427387904,64] hold more than 2^59 "
                  "elements");

    // Each size fits, the storage span does not.
    SetUp();
    selfTensor()["sizes"] = {1 << 20, 1 << 20};
    selfTensor()["strides"] = {std::int64_t{1} << 62, 1};
    EXPECT_NE(refusal().find("span more than 2^59 elements"), std::string::npos);
}

TEST_F(ProjectJsonLimits, IntegersMustBeExactIntegersInRange)
{
    selfTensor()["sizes"] = {8.5, 512};
    EXPECT_EQ(refusal(),
              cardsFile() +
                  ": cards[0].args[0].tensors[0]: field 'sizes' has the wrong type (expected an array of "
                  "integers)");

    SetUp();
    m_cards["cards"][0]["samples"][0]["call_position"] = std::numeric_limits<std::uint64_t>::max();
    EXPECT_EQ(refusal(),
              cardsFile() +
                  ": cards[0].samples[0]: field 'call_position' has the wrong type (expected a 64-bit "
                  "integer)");

    SetUp();
    m_cards["cards"][0]["samples"][0]["bytes"] = -16384;
    EXPECT_EQ(refusal(), cardsFile() + ": cards[0].samples[0]: bytes is -16384 (expected >= 0)");

    SetUp();
    m_cards["cards"][0]["eager"]["repetitions"] = 1e10;
    EXPECT_EQ(refusal(),
              cardsFile() + ": cards[0].eager: field 'repetitions' has the wrong type (expected a 32-bit integer)");

    SetUp();
    m_project["capture"]["samples_per_card"] = -2;
    EXPECT_EQ(refusal(), (m_dir / "project.json").string() + ": capture: samples_per_card is -2 (expected >= 0)");
}

// An argument value nested a million levels deep: copying it recursed once per level and overflowed
// the stack. Refused, in a child process that would otherwise crash.
TEST_F(ProjectJsonLimits, DeeplyNestedArgumentValueIsRefusedNotACrash)
{
    const std::size_t depth = 1000000;
    std::string text = m_cards.dump();
    const std::string key = "\"value\":-1";
    const auto at = text.find(key);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, key.size(), "\"value\":" + std::string(depth, '[') + "-1" + std::string(depth, ']'));
    ASSERT_TRUE(writeFileAtomically(m_dir / "cards.json", text).ok());
    const fs::path dir = m_dir;
    const auto run = test::runBounded(
        [dir] {
            auto opened = openProject(dir);
            return opened.ok() ? std::string("accepted") : opened.error().toString();
        },
        std::uint64_t{1} << 30);
    ASSERT_TRUE(run.exited) << run.describe();
    EXPECT_EQ(run.answer, cardsFile() + ": nested deeper than 64 levels");
}

// The same value reaching cardFromJson without a file (the runtime rebuilds a package kernel's card
// from JSON in memory): refused, not copied.
TEST_F(ProjectJsonLimits, DeeplyNestedValueInMemoryIsRefusedNotACrash)
{
    const json card = m_cards["cards"][0];
    const auto run = test::runBounded(
        [card] {
            json deep = card;
            json* at = &deep["args"][1]["value"];
            for (int i = 0; i < 1000000; ++i) {
                *at = json::array({nullptr});
                at = &(*at)[0];
            }
            auto parsed = cardFromJson(deep, "card");
            return parsed.ok() ? std::string("accepted") : parsed.error().toString();
        },
        std::uint64_t{1} << 30);
    ASSERT_TRUE(run.exited) << run.describe();
    EXPECT_EQ(run.answer, "card.args[1]: field 'value' is nested deeper than 64 levels");
}
