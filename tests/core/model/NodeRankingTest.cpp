// nodeSpeedup / nodeEagerUs / bestNode (model/NodeRanking.h): the paired speedup where measured
// and eager / median otherwise, the best node by speedup (not by the lowest median), ties, GPU
// models, and the search's rewards reading the same numbers.

#include "SearchTestSupport.h"

#include "model/NodeRanking.h"
#include "search/Mcts.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kforge::core {
namespace {

using nlohmann::json;

// A passed evaluation as BenchEvaluator builds it: the candidate's and eager's medians of one
// interleaved timing, and (when given) the paired speedup, the median of the per-repetition ratios.
Evaluation timed(double candidateUs, double eagerUs, std::optional<double> paired, const std::string& gpu = "")
{
    json timing = {{"candidate", {{"median_us", candidateUs}}}, {"eager", {{"median_us", eagerUs}}}};
    if (paired)
        timing["speedup"] = *paired;
    json document = {{"status", "passed"}, {"evaluation", {{"status", "passed"}, {"timing", timing}}}};
    if (!gpu.empty())
        document["worker"] = {{"gpu", {{"gpu", gpu}}}};
    Evaluation e;
    e.latency = LatencyStats{candidateUs, candidateUs, candidateUs};
    e.eagerUs = eagerUs;
    e.report = EvaluationReport::fromJson(document);
    return e;
}

// The tree of a card where the lowest median is not the best: n1 ran fastest (15.98 us) but its
// eager ran faster still in the same evaluation (0.98x); n2 is slower (16.40 us) against a slower
// eager and beats it (1.021x). The root is slower than eager.
SearchTree contradictingTree()
{
    SearchTree tree("card", 1);
    EXPECT_TRUE(tree.addRoot({"k", json::object()}, {}, 0).ok());
    EXPECT_TRUE(tree.recordEvaluation("n0", timed(20.00, 18.60, 0.93)).ok());
    for (const auto& [us, eager, paired] :
         std::vector<std::tuple<double, double, double>>{{15.98, 15.70, 0.98}, {16.40, 16.80, 1.021}}) {
        const std::string id = *tree.addChild("n0", {"k." + std::to_string(us), json::object()}, {}, 0);
        EXPECT_TRUE(tree.recordEvaluation(id, timed(us, eager, paired)).ok());
    }
    return tree;
}

TEST(NodeRanking, TheSpeedupIsThePairedOneWhereMeasured)
{
    const SearchTree tree = contradictingTree();
    const SearchNode& n1 = *tree.find("n1");
    EXPECT_EQ(nodeSpeedup(n1), 0.98);
    EXPECT_EQ(nodeEagerUs(n1), 15.70);              // the eager that speedup was measured against
    EXPECT_NEAR(*n1.speedup, 15.70 / 15.98, 1e-12); // the node's ratio of medians, as recorded
    // Without a paired speedup (a synthetic evaluator, an older tree): eager / median.
    SearchTree plain("c", 1);
    ASSERT_TRUE(plain.addRoot({"k", json::object()}, {}, 0).ok());
    ASSERT_TRUE(plain.recordEvaluation("n0", timed(10.0, 25.0, std::nullopt)).ok());
    EXPECT_DOUBLE_EQ(*nodeSpeedup(*plain.root()), 2.5);
    EXPECT_EQ(nodeEagerUs(*plain.root()), 25.0);
}

TEST(NodeRanking, OnlyPassedNodesHaveASpeedupButTheMeasurementStays)
{
    // Timed, then rejected (the sanitizer found a race): no speedup to show or rank, but the
    // measurement is still what it was.
    SearchTree tree("c", 1);
    ASSERT_TRUE(tree.addRoot({"k", json::object()}, {}, 0).ok());
    Evaluation rejected = timed(10.0, 20.0, 1.9);
    rejected.status = NodeStatus::FailedValidation;
    rejected.latency.reset();
    rejected.failureReason = "failed: compute-sanitizer racecheck: 2 error(s)";
    ASSERT_TRUE(tree.recordEvaluation("n0", rejected).ok());
    EXPECT_FALSE(nodeSpeedup(*tree.root()).has_value());
    EXPECT_EQ(measuredSpeedup(*tree.root()), 1.9);
    EXPECT_EQ(bestNode(tree), nullptr);
}

TEST(NodeRanking, BestIsTheHighestSpeedupNotTheLowestMedian)
{
    const SearchTree tree = contradictingTree();
    ASSERT_NE(bestNode(tree), nullptr);
    EXPECT_EQ(bestNode(tree)->id, "n2");
    EXPECT_TRUE(ranksAbove(*tree.find("n2"), *tree.find("n1")));
    EXPECT_FALSE(ranksAbove(*tree.find("n1"), *tree.find("n2")));
    // The search's rewards read the same number.
    EXPECT_DOUBLE_EQ(std::exp(*Mcts().reward(*tree.find("n2"))), *nodeSpeedup(*tree.find("n2")));
}

TEST(NodeRanking, TiesGoToTheLowerMedianThenToTheEarlierNode)
{
    SearchTree tree("c", 1);
    ASSERT_TRUE(tree.addRoot({"k", json::object()}, {}, 0).ok());
    ASSERT_TRUE(tree.recordEvaluation("n0", timed(12.0, 20.0, 1.5)).ok());
    for (double us : {11.0, 11.0}) {
        const std::string id = *tree.addChild("n0", {"k." + std::to_string(tree.size()), json::object()}, {}, 0);
        ASSERT_TRUE(tree.recordEvaluation(id, timed(us, 20.0, 1.5)).ok());
    }
    EXPECT_EQ(bestNode(tree)->id, "n1"); // n1 and n2 tie on speedup and median: the earlier
    // A node with a speedup beats a faster one without (timed without eager).
    const std::string fast = *tree.addChild("n0", {"fast", json::object()}, {}, 0);
    Evaluation noEager;
    noEager.latency = LatencyStats{1.0, 1.0, 1.0};
    ASSERT_TRUE(tree.recordEvaluation(fast, noEager).ok());
    EXPECT_EQ(bestNode(tree)->id, "n1");
}

TEST(NodeRanking, SpeedupsOfDifferentGpuModelsAreNotCompared)
{
    SearchTree tree("c", 1);
    ASSERT_TRUE(tree.addRoot({"k", json::object()}, {}, 0).ok());
    ASSERT_TRUE(tree.recordEvaluation("n0", timed(10.0, 12.0, 1.2, "NVIDIA H200")).ok());
    const std::vector<std::pair<std::string, double>> children = {
        {"NVIDIA L40S", 3.0}, {"NVIDIA H200", 1.6}, {"NVIDIA L40S", 2.0}, {"NVIDIA H200", 1.4}};
    for (const auto& [gpu, paired] : children) {
        const std::string id = *tree.addChild("n0", {gpu + std::to_string(paired), json::object()}, {}, 0);
        ASSERT_TRUE(tree.recordEvaluation(id, timed(10.0, 10.0 * paired, paired, gpu)).ok());
    }
    EXPECT_EQ(rankedGpuModel(tree), "NVIDIA H200"); // three measured nodes against two
    EXPECT_EQ(bestNode(tree)->id, "n2");
    const auto byGpu = bestNodeByGpu(tree);
    ASSERT_EQ(byGpu.size(), 2u);
    EXPECT_EQ(byGpu.at("NVIDIA L40S")->id, "n1");
    EXPECT_EQ(byGpu.at("NVIDIA H200")->id, "n2");
    EXPECT_EQ(bestNode(SearchTree("empty", 1)), nullptr);
    EXPECT_EQ(rankedGpuModel(SearchTree("empty", 1)), "");
}

} // namespace
} // namespace kforge::core
