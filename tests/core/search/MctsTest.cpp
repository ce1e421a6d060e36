// Selection, progressive widening and backpropagation on hand-built trees, checked against the
// formulas of Mcts.h / docs/search.md.

#include "search/Mcts.h"
#include "model/SearchTree.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

namespace kforge::core {
namespace {

constexpr double kEager = 100.0;

Evaluation passed(double medianUs)
{
    Evaluation e;
    e.status = NodeStatus::Passed;
    e.latency = LatencyStats{medianUs, medianUs, medianUs};
    e.eagerUs = kEager;
    return e;
}

Evaluation failed(NodeStatus status, const std::string& reason)
{
    Evaluation e;
    e.status = status;
    e.failureReason = reason;
    return e;
}

Provenance made(ProvenanceKind kind)
{
    Provenance p;
    p.kind = kind;
    return p;
}

Candidate source(const std::string& text)
{
    return Candidate{text, nlohmann::json::object()};
}

// Adds a node under `parent` (root when empty), records `evaluation` and backpropagates it, the way
// SearchRun does.
std::string grow(SearchTree& tree, const Mcts& mcts, const std::string& parent, const Evaluation& evaluation)
{
    auto id = parent.empty()
        ? tree.addRoot(source("root"), {}, 0)
        : tree.addChild(parent, source(parent + "+"), made(ProvenanceKind::BuiltinTransformation), 0);
    EXPECT_TRUE(id.ok());
    EXPECT_TRUE(tree.recordEvaluation(*id, evaluation).ok());
    EXPECT_TRUE(mcts.backpropagate(tree, *id).ok());
    return *id;
}

TEST(Mcts, RewardIsClippedLogSpeedupAndAbsentForFailures)
{
    Mcts mcts;
    SearchTree tree("card", 1);
    std::string root = grow(tree, mcts, "", passed(25.0));
    EXPECT_NEAR(*mcts.reward(*tree.find(root)), std::log(4.0), 1e-12);
    EXPECT_NEAR(*tree.find(root)->speedup, 4.0, 1e-12);

    std::string fast = grow(tree, mcts, root, passed(0.001)); // 100000x: clipped
    EXPECT_DOUBLE_EQ(*mcts.reward(*tree.find(fast)), 3.0);
    std::string slow = grow(tree, mcts, root, passed(1e6)); // 1e-4x: clipped
    EXPECT_DOUBLE_EQ(*mcts.reward(*tree.find(slow)), -3.0);
    std::string bad = grow(tree, mcts, root, failed(NodeStatus::Crashed, "illegal address"));
    EXPECT_FALSE(mcts.reward(*tree.find(bad)).has_value());

    // Same speedup on a 5 us op and a 5 ms op: same reward.
    SearchNode small, large;
    small.status = large.status = NodeStatus::Passed;
    small.latency = LatencyStats{5, 5, 5};
    small.eagerUs = 10;
    large.latency = LatencyStats{5000, 5000, 5000};
    large.eagerUs = 10000;
    EXPECT_DOUBLE_EQ(*mcts.reward(small), *mcts.reward(large));
}

TEST(Mcts, ProgressiveWideningAllowsExactChildCountsForVisitsOneToTen)
{
    Mcts defaults; // k = 1, alpha = 0.5: ceil(sqrt(v)) children
    const std::vector<int> expectedK1{1, 2, 2, 2, 3, 3, 3, 3, 3, 4};
    Mcts wide(MctsParams{1.0, 2.0, 0.5, 3.0}); // k = 2: ceil(2 sqrt(v))
    const std::vector<int> expectedK2{2, 3, 4, 4, 5, 5, 6, 6, 6, 7};
    Mcts linear(MctsParams{1.0, 1.0, 1.0, 3.0});
    for (int v = 1; v <= 10; ++v) {
        EXPECT_EQ(defaults.maxChildren(v), expectedK1[v - 1]) << "visits " << v;
        EXPECT_EQ(wide.maxChildren(v), expectedK2[v - 1]) << "visits " << v;
        EXPECT_EQ(linear.maxChildren(v), v) << "visits " << v;
    }
    EXPECT_EQ(defaults.maxChildren(0), 1); // an unvisited node may get its first child

    // mayWiden on a node: exactly while children < maxChildren(visits).
    for (int v = 1; v <= 10; ++v) {
        for (int c = 0; c <= 5; ++c) {
            SearchNode node;
            node.status = NodeStatus::Passed;
            node.visits = v;
            node.childIds.assign(static_cast<std::size_t>(c), "x");
            EXPECT_EQ(defaults.mayWiden(node), c < expectedK1[v - 1]) << "visits " << v << " children " << c;
        }
    }
}

TEST(Mcts, SelectionWidensTheRootUntilTheThresholdThenDescends)
{
    Mcts mcts;
    SearchRng rng(5);
    SearchTree tree("card", 5);
    std::string root = grow(tree, mcts, "", passed(100.0)); // visits 1: 0 < 1 -> widen
    EXPECT_EQ(*mcts.select(tree, rng), root);
    grow(tree, mcts, root, passed(50.0)); // root visits 2: 1 < ceil(1.41)=2 -> widen
    EXPECT_EQ(*mcts.select(tree, rng), root);
    std::string second = grow(tree, mcts, root, passed(25.0)); // root visits 3: 2 children = max -> descend
    auto selected = mcts.select(tree, rng);
    ASSERT_TRUE(selected.ok());
    EXPECT_EQ(*selected, second); // the faster child (ln 4 > ln 2, same visits)
}

TEST(Mcts, UctPicksTheHighestScoreAndUnvisitedChildrenFirst)
{
    Mcts mcts; // C = 1
    SearchTree tree("card", 9);
    std::string root = grow(tree, mcts, "", passed(100.0)); // reward 0
    std::string a = grow(tree, mcts, root, passed(50.0));   // reward ln 2
    std::string b = grow(tree, mcts, root, passed(25.0));   // reward ln 4
    std::string c = grow(tree, mcts, root, failed(NodeStatus::FailedCompile, "syntax error"));
    const SearchNode* r = tree.find(root);
    ASSERT_EQ(r->visits, 4); // its own evaluation + 3 children (the failed one credits r(root) = 0)
    EXPECT_NEAR(r->valueSum, std::log(2.0) + std::log(4.0), 1e-12);
    EXPECT_EQ(tree.find(c)->visits, 0);

    // Root: 3 children >= maxChildren(4) = 2 -> descend.
    // UCT(a) = ln2 + sqrt(ln4 / 1) = 1.8705, UCT(b) = ln4 + sqrt(ln4 / 1) = 2.5637.
    EXPECT_NEAR(mcts.uct(*r, *tree.find(a)), std::log(2.0) + std::sqrt(std::log(4.0)), 1e-12);
    EXPECT_NEAR(mcts.uct(*r, *tree.find(b)), std::log(4.0) + std::sqrt(std::log(4.0)), 1e-12);
    SearchRng rng(9);
    EXPECT_EQ(*mcts.select(tree, rng), b); // b: visits 1 -> widen b itself

    // Dilute b: 3 more visits with reward 0 (and 3 on the root). Now N(root) = 7:
    // UCT(a) = ln2 + sqrt(ln7 / 1) = 2.088, UCT(b) = ln4/4 + sqrt(ln7 / 4) = 1.044 -> a.
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(tree.addVisit(b, 0.0).ok());
        ASSERT_TRUE(tree.addVisit(root, 0.0).ok());
    }
    EXPECT_NEAR(mcts.uct(*tree.find(root), *tree.find(b)), std::log(4.0) / 4 + std::sqrt(std::log(7.0) / 4), 1e-12);
    EXPECT_EQ(*mcts.select(tree, rng), a);

    // Without exploration the higher mean wins: a (ln2) over b (ln4 / 4).
    Mcts greedy(MctsParams{0.0, 1.0, 0.5, 3.0});
    EXPECT_EQ(*greedy.select(tree, rng), a);

    // A passed child that was never backpropagated (e.g. a manual edit) scores +inf and goes first.
    auto manual = tree.addChild(root, source("edited"), made(ProvenanceKind::ManualEdit), 0);
    ASSERT_TRUE(manual.ok());
    ASSERT_TRUE(tree.recordEvaluation(*manual, passed(200.0)).ok());
    EXPECT_TRUE(std::isinf(mcts.uct(*tree.find(root), *tree.find(*manual))));
    EXPECT_EQ(*mcts.select(tree, rng), *manual);
}

TEST(Mcts, ExactTiesAreBrokenBySeededRngWithOneDrawEach)
{
    Mcts mcts;
    auto build = [&] {
        SearchTree tree("card", 3);
        std::string root = grow(tree, mcts, "", passed(100.0));
        grow(tree, mcts, root, passed(50.0));
        grow(tree, mcts, root, passed(50.0)); // identical stats: a tie
        return tree;
    };
    SearchTree tree = build();
    std::set<std::string> chosen;
    for (std::uint64_t seed = 0; seed < 16; ++seed) {
        SearchRng rng(seed);
        auto first = mcts.select(tree, rng);
        ASSERT_TRUE(first.ok());
        EXPECT_TRUE(*first == "n1" || *first == "n2");
        EXPECT_EQ(rng.draws(), 1u);
        SearchRng again(seed);
        EXPECT_EQ(*mcts.select(tree, again), *first); // same seed, same choice
        chosen.insert(*first);
    }
    EXPECT_EQ(chosen.size(), 2u); // both tied children get picked over 16 seeds

    // Restoring (seed, draws) continues the same sequence.
    SearchRng a(42);
    for (int i = 0; i < 5; ++i)
        a.next();
    SearchRng b(42, 5);
    EXPECT_EQ(a.next(), b.next());
}

TEST(Mcts, BackpropagationUpdatesEveryNodeOnThePathOnly)
{
    Mcts mcts;
    SearchTree tree("card", 1);
    std::string root = grow(tree, mcts, "", passed(100.0)); // r = 0
    std::string a = grow(tree, mcts, root, passed(50.0));   // r = ln 2
    std::string sibling = grow(tree, mcts, root, passed(80.0));
    std::string b = grow(tree, mcts, a, passed(20.0)); // r = ln 5
    const double ln2 = std::log(2.0), ln5 = std::log(5.0), ln54 = std::log(100.0 / 80.0);

    EXPECT_EQ(tree.find(root)->visits, 4);
    EXPECT_NEAR(tree.find(root)->valueSum, ln2 + ln54 + ln5, 1e-12);
    EXPECT_EQ(tree.find(a)->visits, 2);
    EXPECT_NEAR(tree.find(a)->valueSum, ln2 + ln5, 1e-12);
    EXPECT_EQ(tree.find(b)->visits, 1);
    EXPECT_NEAR(tree.find(b)->valueSum, ln5, 1e-12);
    EXPECT_EQ(tree.find(sibling)->visits, 1); // not on b's path
    EXPECT_NEAR(tree.find(sibling)->valueSum, ln54, 1e-12);

    // A failed child of b: root, a and b get one visit worth r(b) = ln 5; the failed node none.
    std::string bad = grow(tree, mcts, b, failed(NodeStatus::TimedOut, "watchdog: 2000 ms"));
    EXPECT_EQ(tree.find(bad)->visits, 0);
    EXPECT_EQ(tree.find(bad)->valueSum, 0.0);
    EXPECT_EQ(tree.find(b)->visits, 2);
    EXPECT_NEAR(tree.find(b)->valueSum, 2 * ln5, 1e-12);
    EXPECT_EQ(tree.find(a)->visits, 3);
    EXPECT_NEAR(tree.find(a)->valueSum, ln2 + 2 * ln5, 1e-12);
    EXPECT_EQ(tree.find(root)->visits, 5);
    EXPECT_EQ(tree.find(sibling)->visits, 1);

    EXPECT_EQ(mcts.backpropagate(tree, "n99").error().code, ErrorCode::NotFound);
}

TEST(Mcts, FailedNodesAreNeverSelectedAndAFullyFailedParentIsWidenedAgain)
{
    Mcts mcts;
    SearchRng rng(1);
    SearchTree tree("card", 1);
    std::string root = grow(tree, mcts, "", passed(100.0));
    std::string f1 = grow(tree, mcts, root, failed(NodeStatus::FailedCompile, "e1"));
    std::string f2 = grow(tree, mcts, root, failed(NodeStatus::FailedValidation, "e2"));
    // Root: visits 3, 2 children = maxChildren(3): no widening, but no revisable child either.
    EXPECT_FALSE(mcts.mayWiden(*tree.find(root)));
    EXPECT_EQ(*mcts.select(tree, rng), root);
    EXPECT_EQ(tree.addChild(f1, source("x"), {}, 0).error().code, ErrorCode::InvalidArgument);

    // With one passed child next to the failures, selection descends to it, never to f1/f2.
    std::string ok = grow(tree, mcts, root, passed(90.0)); // root visits 4, children 3 > 2
    for (std::uint64_t seed = 0; seed < 8; ++seed) {
        SearchRng r(seed);
        EXPECT_EQ(*mcts.select(tree, r), ok);
    }
    EXPECT_EQ(tree.find(f1)->failureReason, "e1");
    EXPECT_EQ(tree.find(f2)->status, NodeStatus::FailedValidation);

    // A failed root: nothing can be revised.
    SearchTree dead("card", 1);
    grow(dead, mcts, "", failed(NodeStatus::FailedCompile, "no kernel"));
    auto none = mcts.select(dead, rng);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().code, ErrorCode::NotFound);
    EXPECT_NE(none.error().message.find("failed-compile"), std::string::npos);
}

TEST(Mcts, ExhaustedNodesAreNeverWidenedAndASubtreeWithoutWorkIsPassedBy)
{
    Mcts mcts;
    SearchTree tree("card", 3);
    const std::string root = grow(tree, mcts, "", passed(100.0));
    const std::string fast = grow(tree, mcts, root, passed(25.0));
    const std::string slow = grow(tree, mcts, root, passed(90.0));
    // Root: visits 3, 2 children: descends, and UCT prefers the fast child.
    SearchRng plain(3);
    EXPECT_EQ(*mcts.select(tree, plain), fast);
    EXPECT_EQ(*mcts.select(tree, plain, {}), fast); // no exhausted node: the rule unchanged

    // The fast child has nothing left to propose and no children: the slow one is revised.
    for (std::uint64_t seed = 0; seed < 8; ++seed) {
        SearchRng r(seed);
        EXPECT_EQ(*mcts.select(tree, r, {fast}), slow);
    }
    // An exhausted root is not widened even where the widening limit allows it.
    const std::string g1 = grow(tree, mcts, slow, passed(80.0));
    const std::string g2 = grow(tree, mcts, slow, passed(70.0)); // root visits 5, 2 children: may widen
    ASSERT_TRUE(mcts.mayWiden(*tree.find(root)));
    SearchRng r(1);
    EXPECT_EQ(*mcts.select(tree, r), root);
    // slow (visits 3, 2 children) may not widen: down to its faster child.
    EXPECT_EQ(*mcts.select(tree, r, {root, fast}), g2);
    EXPECT_EQ(*mcts.select(tree, r, {root, fast, slow}), g2);
    // Below exhausted nodes, the one open node left is reached whatever UCT prefers.
    EXPECT_EQ(*mcts.select(tree, r, {root, fast, slow, g2}), g1);

    // Everything exhausted: nothing to revise, and the error says why.
    auto none = mcts.select(tree, r, {root, fast, slow, g1, g2});
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().code, ErrorCode::NotFound);
    EXPECT_NE(none.error().message.find("search space is exhausted"), std::string::npos);
}

} // namespace
} // namespace kforge::core
