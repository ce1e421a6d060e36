// OptimizeDriver (core/engine): the optimize job both front ends run. Outcomes per card, a failed
// card that does not stop the others, stop, the writer lock, the saved-tree modes, and the events
// a live view follows (a snapshot of the tree after every saved node, the progress).

#include "engine/OptimizeDriver.h"

#include "ScratchDir.h"
#include "SearchTestSupport.h"
#include "TestProject.h"

#include "model/SearchTreeJson.h"
#include "project/ProjectStore.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>

namespace kforge::core {
namespace {

// Every candidate crashes, as when the worker cannot start.
struct BrokenEvaluator : test::SyntheticEvaluator {
    Result<Evaluation> evaluate(const Candidate&, const std::atomic<bool>&) override
    {
        Evaluation e;
        e.status = NodeStatus::Crashed;
        e.failureReason = "cannot start worker '/nonexistent/kforge-worker': no such file";
        return e;
    }
};

class OptimizeDriverTest : public ::testing::Test {
protected:
    OptimizeRequest request(int iterations, const std::string& brokenCard = "")
    {
        OptimizeRequest r;
        r.projectDir = m_dir.path();
        r.cards = m_project.cards;
        r.budget.maxIterations = iterations;
        r.makeProposer = [](const OperatorCard&) { return std::make_unique<test::SyntheticProposer>(); };
        r.makeEvaluator = [brokenCard](const OperatorCard& card) -> std::unique_ptr<Evaluator> {
            if (card.id == brokenCard)
                return std::make_unique<BrokenEvaluator>();
            auto good = std::make_unique<test::SyntheticEvaluator>();
            good->neverFail = true;
            return good;
        };
        return r;
    }

    test::ScratchDir m_dir;
    Project m_project = test::makeFixtureProject();
};

TEST_F(OptimizeDriverTest, SearchesEveryCardInOrderAndReportsEachOutcome)
{
    ASSERT_GE(m_project.cards.size(), 2u);
    OptimizeDriver driver(request(5));
    std::vector<std::string> finished;
    OptimizeEvents events;
    events.cardFinished = [&](const CardOutcome& card) { finished.push_back(card.cardId); };
    auto summary = driver.run(events);
    ASSERT_TRUE(summary.ok()) << summary.error().toString();
    ASSERT_EQ(summary->cards.size(), m_project.cards.size());
    for (std::size_t i = 0; i < m_project.cards.size(); ++i) {
        const CardOutcome& card = summary->cards[i];
        EXPECT_EQ(card.cardId, m_project.cards[i].id);
        EXPECT_EQ(finished[i], m_project.cards[i].id);
        EXPECT_EQ(card.label, m_project.cards[i].id.substr(0, 8) + " " + m_project.cards[i].qualifiedName());
        EXPECT_FALSE(card.failed()) << card.failureReason();
        EXPECT_EQ(card.nodes, 5u);
        EXPECT_EQ(card.reason, StopReason::IterationLimit);
        ASSERT_TRUE(card.best.has_value());
        EXPECT_TRUE(card.best->speedup.has_value());
        EXPECT_TRUE(std::filesystem::exists(TreeStore::defaultPath(m_dir.path(), card.cardId)));
    }
    EXPECT_FALSE(summary->stopped);
    EXPECT_EQ(summary->failedCount(), 0u);
    EXPECT_TRUE(summary->notSearched.empty());
    EXPECT_TRUE(driver.progress().cardId.empty()); // between (after) cards
}

TEST_F(OptimizeDriverTest, EverySavedNodeComesAsASnapshotOfTheTreeAndAProgress)
{
    ASSERT_GE(m_project.cards.size(), 2u);
    OptimizeDriver driver(request(5));
    std::map<std::string, std::vector<std::shared_ptr<const SearchTree>>> snapshots;
    std::vector<OptimizeProgress> progress;
    std::vector<std::string> order; // "tree <card> <size>" and "progress <card> <iteration>"
    OptimizeEvents events;
    events.treeSaved = [&](const std::string& cardId, std::shared_ptr<const SearchTree> tree) {
        ASSERT_TRUE(tree);
        EXPECT_EQ(tree->cardId(), cardId);
        order.push_back("tree " + cardId + " " + std::to_string(tree->size()));
        snapshots[cardId].push_back(std::move(tree));
    };
    events.progressChanged = [&](const OptimizeProgress& p) {
        order.push_back("progress " + p.cardId + " " + std::to_string(p.iteration));
        progress.push_back(p);
    };
    auto summary = driver.run(events);
    ASSERT_TRUE(summary.ok()) << summary.error().toString();

    std::vector<std::string> expected;
    for (const OperatorCard& card : m_project.cards) {
        // One snapshot per node, each a copy of its own: the first still holds one node, the last
        // is the tree as the file has it.
        const auto& trees = snapshots[card.id];
        ASSERT_EQ(trees.size(), 5u) << card.id;
        for (std::size_t i = 0; i < trees.size(); ++i)
            EXPECT_EQ(trees[i]->size(), i + 1);
        auto saved = TreeStore(TreeStore::defaultPath(m_dir.path(), card.id)).load();
        ASSERT_TRUE(saved.ok()) << saved.error().toString();
        EXPECT_EQ(toJson(*trees.back()), toJson(saved.value()));
        // The card starts, each node is saved (the snapshot, then the progress), the card ends.
        expected.push_back("progress " + card.id + " 0");
        for (int n = 1; n <= 5; ++n) {
            expected.push_back("tree " + card.id + " " + std::to_string(n));
            expected.push_back("progress " + card.id + " " + std::to_string(n));
        }
        expected.push_back("progress  0");
    }
    EXPECT_EQ(order, expected);
    for (const OptimizeProgress& p : progress)
        EXPECT_EQ(p.cardCount, static_cast<int>(m_project.cards.size()));
    EXPECT_EQ(progress.at(1).cardIndex, 0);
    EXPECT_EQ(progress.at(progress.size() - 2).cardIndex, static_cast<int>(m_project.cards.size()) - 1);
    EXPECT_GT(progress.at(progress.size() - 2).bestSpeedup, 0.0); // the synthetic search beats eager
}

TEST_F(OptimizeDriverTest, AFailedRootFailsItsCardOnlyAndTheNextRunRetriesIt)
{
    const OperatorCard& broken = m_project.cards.at(0);
    auto first = OptimizeDriver(request(4, broken.id)).run({});
    ASSERT_TRUE(first.ok()) << first.error().toString();
    EXPECT_EQ(first->failedCount(), 1u);
    EXPECT_TRUE(first->cards[0].failed());
    EXPECT_NE(first->cards[0].failure.find("cannot start worker"), std::string::npos) << first->cards[0].failure;
    EXPECT_FALSE(first->cards[1].failed());
    EXPECT_NE(first->failureList().find(cardLabel(broken) + " ("), std::string::npos) << first->failureList();

    std::vector<std::string> notes;
    OptimizeEvents events;
    events.note = [&](const std::string& line) { notes.push_back(line); };
    auto second = OptimizeDriver(request(4)).run(events);
    ASSERT_TRUE(second.ok()) << second.error().toString();
    EXPECT_EQ(second->failedCount(), 0u);
    ASSERT_FALSE(notes.empty());
    EXPECT_EQ(notes.front().rfind(cardLabel(broken) + ": retrying the root (attempt 2", 0), 0u) << notes.front();
}

TEST_F(OptimizeDriverTest, AStopEndsTheCardInFlightAndListsTheOthersAsNotSearched)
{
    OptimizeRequest r = request(1000);
    OptimizeDriver* self = nullptr;
    // The first card's evaluator asks for the stop on its third candidate.
    r.makeEvaluator = [&self](const OperatorCard&) -> std::unique_ptr<Evaluator> {
        auto evaluator = std::make_unique<test::SyntheticEvaluator>();
        evaluator->neverFail = true;
        evaluator->sideEffect = [&self](int call) {
            if (call == 3)
                self->requestStop();
        };
        return evaluator;
    };
    OptimizeDriver driver(std::move(r));
    self = &driver;
    auto summary = driver.run({});
    ASSERT_TRUE(summary.ok()) << summary.error().toString();
    EXPECT_TRUE(summary->stopped);
    ASSERT_EQ(summary->cards.size(), 1u);
    EXPECT_LT(summary->cards[0].nodes, 10u);
    ASSERT_EQ(summary->notSearched.size(), m_project.cards.size() - 1);
    EXPECT_EQ(summary->notSearched[0], cardLabel(m_project.cards[1]));
}

TEST_F(OptimizeDriverTest, AnotherWriterMakesTheJobFailNamingIt)
{
    auto held = lockProjectForWriting(m_dir.path(), "optimize");
    ASSERT_TRUE(held.ok()) << held.error().toString();
    auto summary = OptimizeDriver(request(3)).run({});
    ASSERT_FALSE(summary.ok());
    // The same process holds it: the message says so (another process is named by its pid).
    EXPECT_NE(summary.error().toString().find("is being changed by another job of this program"), std::string::npos)
        << summary.error().toString();
    EXPECT_FALSE(std::filesystem::exists(TreeStore::defaultPath(m_dir.path(), m_project.cards[0].id)));
}

TEST_F(OptimizeDriverTest, SavedTreesAreRefusedResumedOrKeptAside)
{
    ASSERT_TRUE(OptimizeDriver(request(3)).run({}).ok());
    const std::filesystem::path tree = TreeStore::defaultPath(m_dir.path(), m_project.cards[0].id);

    OptimizeRequest refuse = request(3);
    refuse.savedTrees = SavedTreeMode::Refuse;
    auto refused = OptimizeDriver(std::move(refuse)).run({});
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().toString().find("--resume continues it"), std::string::npos)
        << refused.error().toString();

    auto resumed = OptimizeDriver(request(6)).run({});
    ASSERT_TRUE(resumed.ok()) << resumed.error().toString();
    EXPECT_EQ(resumed->cards[0].nodes, 6u);

    OptimizeRequest restart = request(2);
    restart.savedTrees = SavedTreeMode::Restart;
    std::vector<std::string> notes;
    OptimizeEvents events;
    events.note = [&](const std::string& line) { notes.push_back(line); };
    auto restarted = OptimizeDriver(std::move(restart)).run(events);
    ASSERT_TRUE(restarted.ok()) << restarted.error().toString();
    EXPECT_EQ(restarted->cards[0].nodes, 2u);
    ASSERT_EQ(notes.size(), m_project.cards.size());
    EXPECT_NE(notes[0].find("the old search tree is kept as "), std::string::npos) << notes[0];
    int kept = 0;
    for (const auto& entry : std::filesystem::directory_iterator(tree.parent_path()))
        kept += entry.path().filename().string().rfind("tree-", 0) == 0 ? 1 : 0;
    EXPECT_EQ(kept, 1);
}

} // namespace
} // namespace kforge::core
