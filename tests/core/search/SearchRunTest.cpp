// The search loop with the synthetic proposer/evaluator: determinism, budgets, the stop flag,
// failures, persistence after every node and resume after an interruption or a real kill.

#include "SearchTestSupport.h"

#include "model/NodeRanking.h"
#include "model/SearchTreeJson.h"
#include "search/Mcts.h"
#include "search/SearchRun.h"
#include "search/TreeStore.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sys/wait.h>
#include <thread>

namespace kforge::core {
namespace {

using test::fixedClockOptions;
using test::ScratchDir;
using test::SyntheticEvaluator;
using test::SyntheticProposer;

struct Finished {
    SearchTree tree;
    SearchOutcome outcome;
};

Finished runFresh(const std::filesystem::path& file, std::uint64_t seed, SearchRunOptions options,
                  SyntheticProposer& proposer, SyntheticEvaluator& evaluator)
{
    SearchRun run(SearchTree("card", seed), TreeStore(file), proposer, evaluator, std::move(options));
    auto outcome = run.run();
    EXPECT_TRUE(outcome.ok()) << (outcome.ok() ? "" : outcome.error().toString());
    return {run.tree(), outcome.ok() ? *outcome : SearchOutcome{}};
}

std::string dump(const SearchTree& tree)
{
    return toJson(tree).dump();
}

TEST(SearchRun, GrowsATreeWhoseFailuresStayAndAreNeverRevised)
{
    ScratchDir dir;
    SyntheticProposer proposer;
    proposer.failEvery = 7;
    SyntheticEvaluator evaluator;
    Finished f = runFresh(dir.path() / "tree.json", 11, fixedClockOptions(60), proposer, evaluator);

    EXPECT_EQ(f.outcome.reason, StopReason::IterationLimit);
    EXPECT_EQ(f.outcome.nodesAdded, 60);
    ASSERT_EQ(f.tree.size(), 60u);
    EXPECT_EQ(proposer.calls, 60);
    EXPECT_EQ(evaluator.calls, 60 - (59 / 7)); // failed proposals are not evaluated

    int failures = 0, failedProposals = 0;
    const Mcts mcts;
    for (const SearchNode& node : f.tree.nodes()) {
        if (isFailure(node.status)) {
            ++failures;
            EXPECT_FALSE(node.failureReason.empty()) << node.id;
            EXPECT_EQ(node.failureReason.find('\n'), std::string::npos) << node.id;
            EXPECT_TRUE(node.childIds.empty()) << node.id << " was revised although it failed";
            EXPECT_EQ(node.visits, 0) << node.id;
        }
        if (node.status == NodeStatus::FailedProposal) {
            ++failedProposals;
            EXPECT_EQ(node.failureReason, "reply had no code block");
            EXPECT_EQ(node.provenance.kind, ProvenanceKind::BuiltinTransformation); // kept for audit
        }
        if (node.parentId) {
            const SearchNode* parent = f.tree.find(*node.parentId);
            EXPECT_TRUE(isRevisable(parent->status));
            // The source spells the lineage: "<parent source>.<child index>".
            EXPECT_EQ(node.candidate.source.rfind(parent->candidate.source + ".", 0), 0u) << node.candidate.source;
        }
    }
    EXPECT_EQ(failedProposals, 59 / 7);
    EXPECT_GT(failures, failedProposals); // some compile/validation failures too
    // The root's visits count every iteration after its own evaluation.
    EXPECT_EQ(f.tree.root()->visits, 60);

    ASSERT_FALSE(f.outcome.bestNodeId.empty());
    EXPECT_EQ(f.outcome.bestNodeId, bestNode(f.tree)->id);
    EXPECT_GT(*f.outcome.bestSpeedup, 1.0);
    // What run() saved last is what it holds.
    auto saved = TreeStore(dir.path() / "tree.json").load();
    ASSERT_TRUE(saved.ok());
    EXPECT_EQ(dump(*saved), dump(f.tree));
}

TEST(SearchRun, EveryEvaluationIsPrecededByTheProposersLikelyNextCandidates)
{
    ScratchDir dir;
    SyntheticProposer proposer;
    proposer.failEvery = 5;
    SyntheticEvaluator evaluator;
    Finished f = runFresh(dir.path() / "tree.json", 3, fixedClockOptions(20), proposer, evaluator);
    ASSERT_EQ(f.tree.size(), 20u);
    // One hint per evaluated candidate (failed proposals are not evaluated), handed over before it.
    EXPECT_EQ(evaluator.prepared.size(), static_cast<std::size_t>(evaluator.calls));
    EXPECT_EQ(evaluator.callsWhenLastPrepared, evaluator.calls - 1);
    ASSERT_FALSE(evaluator.prepared.empty());
    EXPECT_EQ(evaluator.prepared.front(), (std::vector<std::string>{"k.0", "k.1"}));
    for (std::size_t limit : proposer.likelyNextLimits)
        EXPECT_GT(limit, 0u);

    // A hint never changes the search: the same run without one gives the same tree.
    struct NoHints : SyntheticProposer {
        std::vector<Candidate> likelyNext(const SearchTree&, const Proposal&, std::size_t) override { return {}; }
    } quiet;
    quiet.failEvery = 5;
    SyntheticEvaluator plain;
    Finished g = runFresh(dir.path() / "tree2.json", 3, fixedClockOptions(20), quiet, plain);
    EXPECT_EQ(dump(f.tree), dump(g.tree));
}

TEST(SearchRun, EveryEvaluationKnowsTheBestSpeedupSoFar)
{
    // What lets the evaluator stop timing a clearly slower candidate: before each evaluation, the
    // best node's speedup per GPU model (the synthetic evaluator's nodes name none: "").
    ScratchDir dir;
    SyntheticProposer proposer;
    SyntheticEvaluator evaluator;
    Finished f = runFresh(dir.path() / "tree.json", 3, fixedClockOptions(20), proposer, evaluator);
    ASSERT_EQ(evaluator.bestNoted.size(), static_cast<std::size_t>(evaluator.calls));
    ASSERT_GE(evaluator.calls, 10);
    EXPECT_TRUE(evaluator.bestNoted.front().empty()); // nothing passed yet
    for (std::size_t i = 0; i < evaluator.bestNoted.size(); ++i) {
        SCOPED_TRACE(i);
        if (evaluator.bestReturned[i] == 0) {
            EXPECT_TRUE(evaluator.bestNoted[i].empty());
            continue;
        }
        ASSERT_EQ(evaluator.bestNoted[i].size(), 1u);
        EXPECT_NEAR(evaluator.bestNoted[i].at(""), evaluator.bestReturned[i], 1e-9);
    }
    EXPECT_NEAR(bestSpeedupByGpu(f.tree).at(""), evaluator.bestSoFar, 1e-9);
}

TEST(SearchRun, ChildCountsNeverExceedTheWideningLimitWhenNothingFails)
{
    ScratchDir dir;
    SyntheticProposer proposer;
    SyntheticEvaluator evaluator;
    evaluator.neverFail = true;
    Finished f = runFresh(dir.path() / "tree.json", 3, fixedClockOptions(80), proposer, evaluator);
    const Mcts mcts;
    int widened = 0;
    for (const SearchNode& node : f.tree.nodes()) {
        EXPECT_LE(static_cast<int>(node.childIds.size()), mcts.maxChildren(node.visits)) << node.id;
        widened += node.childIds.size() > 1 ? 1 : 0;
        // visits = own evaluation + one per node in the subtree
        std::size_t subtree = 0;
        for (const SearchNode& other : f.tree.nodes()) {
            auto path = f.tree.lineage(other.id);
            for (const SearchNode* step : path)
                subtree += step->id == node.id ? 1 : 0;
        }
        EXPECT_EQ(static_cast<std::size_t>(node.visits), subtree) << node.id;
    }
    EXPECT_GT(widened, 1);
    EXPECT_GE(static_cast<int>(f.tree.root()->childIds.size()), mcts.maxChildren(80) - 1);
}

TEST(SearchRun, SameSeedGivesIdenticalTreesAndAnotherSeedDoesNot)
{
    ScratchDir dir;
    auto once = [&](std::uint64_t seed, bool compileOnly, const std::string& name) {
        SyntheticProposer proposer;
        SyntheticEvaluator evaluator;
        evaluator.compileOnly = compileOnly;
        return runFresh(dir.path() / name, seed, fixedClockOptions(40), proposer, evaluator).tree;
    };
    EXPECT_EQ(dump(once(1234, false, "a.json")), dump(once(1234, false, "b.json")));
    // Compile-only: every reward is 0, so ties are everywhere and the seed decides them.
    SearchTree a = once(5, true, "c.json");
    SearchTree b = once(5, true, "d.json");
    SearchTree c = once(6, true, "e.json");
    EXPECT_EQ(dump(a), dump(b));
    EXPECT_GT(a.rngDraws(), 0u);
    std::vector<std::string> sourcesA, sourcesC;
    for (const SearchNode& n : a.nodes())
        sourcesA.push_back(n.candidate.source);
    for (const SearchNode& n : c.nodes())
        sourcesC.push_back(n.candidate.source);
    EXPECT_NE(sourcesA, sourcesC);
}

TEST(SearchRun, PlateauStopsExactlyWhenTheWindowBringsNoGain)
{
    ScratchDir dir;
    // Speedup grows 10% per evaluation for the first 10 evaluations, then stays flat.
    SyntheticProposer proposer;
    SyntheticEvaluator evaluator;
    evaluator.neverFail = true;
    evaluator.latencyOfCall = [](int call) { return 100.0 / std::pow(1.1, std::min(call - 1, 9)); };
    SearchRunOptions options = fixedClockOptions(100);
    options.budget.plateauIterations = 5;
    options.budget.plateauMinGain = 0.01;
    Finished f = runFresh(dir.path() / "t.json", 1, options, proposer, evaluator);
    EXPECT_EQ(f.outcome.reason, StopReason::Plateau);
    // n nodes: best of iterations < n-5 is 1.1^min(n-6,9) * 0.5, best overall 1.1^min(n-1,9) * 0.5:
    // equal first at n = 15.
    EXPECT_EQ(f.tree.size(), 15u);

    // Constant latency: no gain at all; with N = 5 the run stops at 6 nodes.
    SyntheticProposer p2;
    SyntheticEvaluator e2;
    e2.neverFail = true;
    e2.latencyOfCall = [](int) { return 25.0; };
    Finished flat = runFresh(dir.path() / "u.json", 1, options, p2, e2);
    EXPECT_EQ(flat.outcome.reason, StopReason::Plateau);
    EXPECT_EQ(flat.tree.size(), 6u);

    // Plateau is off by default: the iteration limit ends the same run.
    SyntheticProposer p3;
    SyntheticEvaluator e3;
    e3.neverFail = true;
    e3.latencyOfCall = [](int) { return 25.0; };
    Finished limited = runFresh(dir.path() / "v.json", 1, fixedClockOptions(9), p3, e3);
    EXPECT_EQ(limited.outcome.reason, StopReason::IterationLimit);
    EXPECT_EQ(limited.tree.size(), 9u);
}

TEST(SearchRun, WallTimeLimitUsesTheRunClock)
{
    ScratchDir dir;
    SyntheticProposer proposer;
    SyntheticEvaluator evaluator;
    SearchRunOptions options = fixedClockOptions(0); // no iteration limit
    options.budget.wallTimeLimitS = 5.5;
    auto fake = std::make_shared<std::chrono::steady_clock::time_point>();
    // Each reading advances one second: readings at start, then one before every iteration.
    options.steadyNow = [fake] { return *fake += std::chrono::seconds(1); };
    Finished f = runFresh(dir.path() / "t.json", 1, options, proposer, evaluator);
    EXPECT_EQ(f.outcome.reason, StopReason::TimeLimit);
    EXPECT_EQ(f.tree.size(), 5u); // elapsed 1..5 s run an iteration, 6 s stops
}

TEST(SearchRun, StopFlagEndsTheRunAtTheNextIterationBoundary)
{
    ScratchDir dir;
    SyntheticProposer proposer;
    SyntheticEvaluator evaluator;
    SearchRun run(SearchTree("card", 1), TreeStore(dir.path() / "t.json"), proposer, evaluator, fixedClockOptions(0));
    // The 4th evaluation asks to stop but completes: its node is kept, no 5th iteration starts.
    evaluator.sideEffect = [&](int call) {
        if (call == 4)
            run.requestStop();
    };
    auto outcome = run.run();
    ASSERT_TRUE(outcome.ok());
    EXPECT_EQ(outcome->reason, StopReason::Requested);
    EXPECT_EQ(run.tree().size(), 4u);
    EXPECT_EQ(run.iteration(), 4);
    EXPECT_TRUE(run.stopRequested());
    // Sticky: a second run() does nothing.
    auto again = run.run();
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->nodesAdded, 0);
}

TEST(SearchRun, CancelledEvaluationDropsOnlyTheCandidateInFlight)
{
    ScratchDir dir;
    const auto file = dir.path() / "t.json";
    SyntheticProposer proposer;
    SyntheticEvaluator evaluator;
    evaluator.hook = [](int call) -> Result<Evaluation> {
        if (call == 6)
            return makeError(ErrorCode::Cancelled, "stopped while timing");
        return Evaluation{};
    };
    SearchRun run(SearchTree("card", 1), TreeStore(file), proposer, evaluator, fixedClockOptions(0));
    auto outcome = run.run();
    ASSERT_TRUE(outcome.ok());
    EXPECT_EQ(outcome->reason, StopReason::Requested);
    EXPECT_EQ(run.tree().size(), 5u);
    auto saved = TreeStore(file).load();
    ASSERT_TRUE(saved.ok());
    EXPECT_EQ(dump(*saved), dump(run.tree()));
}

TEST(SearchRun, StopFromAnotherThreadWhileRunning)
{
    ScratchDir dir;
    SyntheticProposer proposer;
    SyntheticEvaluator evaluator;
    evaluator.sideEffect = [](int) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); };
    SearchRun run(SearchTree("card", 1), TreeStore(dir.path() / "t.json"), proposer, evaluator, fixedClockOptions(0));
    Result<SearchOutcome> outcome = makeError(ErrorCode::Internal, "not run");
    std::thread worker([&] { outcome = run.run(); });
    while (run.iteration() < 3)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_GE(run.bestSpeedup(), 0.0);
    run.requestStop();
    worker.join();
    ASSERT_TRUE(outcome.ok());
    EXPECT_EQ(outcome->reason, StopReason::Requested);
    EXPECT_GE(run.tree().size(), 3u);
    EXPECT_EQ(run.iteration(), static_cast<int>(run.tree().size()));
    if (const SearchNode* best = bestNode(run.tree())) {
        EXPECT_EQ(run.bestSpeedup(), *nodeSpeedup(*best));
    }
}

TEST(SearchRun, ProposerErrorsEndTheRunAndAFailedRootLeavesNothingToRevise)
{
    ScratchDir dir;
    const auto file = dir.path() / "t.json";
    SyntheticProposer proposer;
    proposer.override = [](int call) -> Result<Proposal> {
        if (call == 4)
            return makeError(ErrorCode::Io, "connection refused", "http://127.0.0.1:9");
        return Proposal{};
    };
    SyntheticEvaluator evaluator;
    SearchRun run(SearchTree("card", 1), TreeStore(file), proposer, evaluator, fixedClockOptions(0));
    auto outcome = run.run();
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error().message, "connection refused");
    EXPECT_EQ(TreeStore(file).load()->size(), 3u); // everything before the error is saved

    // A root that fails to compile: recorded, then the run ends with the reason.
    SyntheticProposer p2;
    struct FailingRoot : SyntheticEvaluator {
        Result<Evaluation> evaluate(const Candidate&, const std::atomic<bool>&) override
        {
            Evaluation e;
            e.status = NodeStatus::FailedCompile;
            e.failureReason = "nvrtc: no kernel";
            return e;
        }
    } failing;
    SearchRun dead(SearchTree("card", 1), TreeStore(dir.path() / "d.json"), p2, failing, fixedClockOptions(10));
    auto deadOutcome = dead.run();
    ASSERT_TRUE(deadOutcome.ok());
    EXPECT_EQ(deadOutcome->reason, StopReason::NothingToRevise);
    EXPECT_NE(deadOutcome->note.find("failed-compile"), std::string::npos);
    EXPECT_EQ(dead.tree().size(), 1u);
    EXPECT_EQ(dead.tree().root()->failureReason, "nvrtc: no kernel");
    EXPECT_TRUE(deadOutcome->bestNodeId.empty());
}

// A proposer with a finite space: at most two revisions per node, and none below depth 2 (seven
// candidates in all). It names its exhausted nodes, as the built-in proposer does.
class FiniteProposer : public SyntheticProposer {
public:
    static bool exhausted(const SearchNode& node)
    {
        const auto depth = std::count(node.candidate.source.begin(), node.candidate.source.end(), '.');
        return node.childIds.size() >= 2 || depth >= 2;
    }
    std::unordered_set<std::string> exhaustedNodes(const SearchTree& tree) override
    {
        std::unordered_set<std::string> ids;
        for (const SearchNode& node : tree.nodes())
            if (exhausted(node))
                ids.insert(node.id);
        return ids;
    }
    Result<Proposal> propose(const SearchTree& tree, const SearchNode& parent, const std::atomic<bool>& stop) override
    {
        if (exhausted(parent)) {
            ++calls;
            Proposal p;
            p.failureReason = "no untried transformation";
            return p;
        }
        return SyntheticProposer::propose(tree, parent, stop);
    }
};

TEST(SearchRun, AnExhaustedSearchSpaceEndsTheRunWithoutFailedProposals)
{
    ScratchDir dir;
    FiniteProposer proposer;
    SyntheticEvaluator evaluator;
    evaluator.neverFail = true;
    Finished done = runFresh(dir.path() / "t.json", 1, fixedClockOptions(50), proposer, evaluator);
    EXPECT_EQ(done.outcome.reason, StopReason::NothingToRevise);
    EXPECT_NE(done.outcome.note.find("search space is exhausted"), std::string::npos) << done.outcome.note;
    ASSERT_EQ(done.tree.size(), 7u);
    for (const SearchNode& node : done.tree.nodes())
        EXPECT_EQ(node.status, NodeStatus::Passed) << node.id << " " << node.failureReason;
    EXPECT_EQ(proposer.calls, 7);

    // Several evaluators with candidates in flight reach the same seven, none twice.
    FiniteProposer parallelProposer;
    std::vector<SyntheticEvaluator> pool(3);
    std::vector<Evaluator*> evaluators;
    for (SyntheticEvaluator& e : pool) {
        e.neverFail = true;
        evaluators.push_back(&e);
    }
    SearchRun parallel(SearchTree("card", 1), TreeStore(dir.path() / "p.json"), parallelProposer, evaluators,
                       fixedClockOptions(50));
    auto outcome = parallel.run();
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    EXPECT_EQ(outcome->reason, StopReason::NothingToRevise);
    std::set<std::string> sources;
    for (const SearchNode& node : parallel.tree().nodes()) {
        EXPECT_EQ(node.status, NodeStatus::Passed) << node.id << " " << node.failureReason;
        sources.insert(node.candidate.source);
    }
    EXPECT_EQ(sources.size(), 7u);
    EXPECT_EQ(parallel.tree().size(), 7u);
}

TEST(SearchRun, InvalidEvaluationBecomesACrashedNode)
{
    ScratchDir dir;
    SyntheticProposer proposer;
    struct Broken : SyntheticEvaluator {
        Result<Evaluation> evaluate(const Candidate& c, const std::atomic<bool>& stop) override
        {
            if (c.source == "k.0")
                return Evaluation{}; // "passed" without a latency
            return SyntheticEvaluator::evaluate(c, stop);
        }
    } broken;
    broken.neverFail = true;
    Finished f = runFresh(dir.path() / "t.json", 1, fixedClockOptions(3), proposer, broken);
    ASSERT_EQ(f.tree.size(), 3u);
    EXPECT_EQ(f.tree.find("n1")->status, NodeStatus::Crashed);
    EXPECT_NE(f.tree.find("n1")->failureReason.find("invalid result"), std::string::npos);
}

// Resume: the same seed and the same deterministic proposer/evaluator reach the same final tree
// whether or not the run was interrupted.
class Resume : public ::testing::Test {
protected:
    static constexpr int kTotal = 40;
    static constexpr std::uint64_t kSeed = 2024;

    std::string uninterrupted()
    {
        SyntheticProposer proposer;
        proposer.failEvery = 9;
        SyntheticEvaluator evaluator;
        evaluator.coarse = true;
        SearchTree tree =
            runFresh(m_dir.path() / "reference.json", kSeed, fixedClockOptions(kTotal), proposer, evaluator).tree;
        EXPECT_GT(tree.rngDraws(), 5u); // ties were broken along the way, so the RNG state matters
        return dump(tree);
    }

    std::string resumeToEnd(const std::filesystem::path& file, std::size_t expectedSavedNodes)
    {
        TreeStore store(file);
        auto tree = store.openForRun("card", /*seed ignored on resume*/ 1, true);
        EXPECT_TRUE(tree.ok()) << (tree.ok() ? "" : tree.error().toString());
        if (!tree.ok())
            return {};
        EXPECT_EQ(tree->size(), expectedSavedNodes);
        EXPECT_EQ(tree->seed(), kSeed);
        SyntheticProposer proposer;
        proposer.failEvery = 9;
        proposer.calls = static_cast<int>(tree->size()); // its failure pattern counts proposals
        SyntheticEvaluator evaluator;
        evaluator.coarse = true;
        SearchRun run(std::move(tree.value()), store, proposer, evaluator, fixedClockOptions(kTotal));
        EXPECT_EQ(run.iteration(), static_cast<int>(expectedSavedNodes));
        auto outcome = run.run();
        EXPECT_TRUE(outcome.ok());
        EXPECT_EQ(outcome->nodesAdded, kTotal - static_cast<int>(expectedSavedNodes));
        return dump(run.tree());
    }

    ScratchDir m_dir;
};

TEST_F(Resume, AfterTheRunObjectIsDroppedMidSearch)
{
    const auto file = m_dir.path() / "tree.json";
    {
        SyntheticProposer proposer;
        proposer.failEvery = 9;
        SyntheticEvaluator evaluator;
        evaluator.coarse = true;
        // The 14th evaluation is interrupted: the candidate in flight is lost, 13 nodes are saved.
        evaluator.hook = [&](int call) -> Result<Evaluation> {
            if (call == 14)
                return makeError(ErrorCode::Cancelled, "interrupted");
            return Evaluation{};
        };
        SearchRun run(SearchTree("card", kSeed), TreeStore(file), proposer, evaluator, fixedClockOptions(kTotal));
        ASSERT_TRUE(run.run().ok());
    } // the run object, the proposer and the evaluator are gone
    std::size_t saved = TreeStore(file).load()->size();
    EXPECT_GE(saved, 13u);
    EXPECT_EQ(resumeToEnd(file, saved), uninterrupted());
}

TEST_F(Resume, AfterTheProcessIsKilledDuringAnEvaluation)
{
    const auto file = m_dir.path() / "tree.json";
    ::fflush(nullptr);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // The child searches and dies abruptly (no destructors, no flush) inside the 21st evaluation.
        SyntheticProposer proposer;
        proposer.failEvery = 9;
        SyntheticEvaluator evaluator;
        evaluator.coarse = true;
        evaluator.sideEffect = [](int call) {
            if (call == 21)
                ::_exit(42);
        };
        SearchRun run(SearchTree("card", kSeed), TreeStore(file), proposer, evaluator, fixedClockOptions(kTotal));
        (void)run.run();
        ::_exit(0); // not reached: the kill comes first
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 42);

    auto saved = TreeStore(file).load();
    ASSERT_TRUE(saved.ok()) << saved.error().toString();
    // 20 evaluations finished, plus the failed proposals (not evaluated) recorded before the kill.
    std::size_t evaluatedNodes = 0;
    for (const SearchNode& node : saved->nodes())
        evaluatedNodes += node.status == NodeStatus::FailedProposal ? 0 : 1;
    EXPECT_EQ(evaluatedNodes, 20u);
    EXPECT_EQ(resumeToEnd(file, saved->size()), uninterrupted());
}

} // namespace
} // namespace kforge::core
