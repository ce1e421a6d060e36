#include "evaluation/BenchEvaluator.h"

#include <gtest/gtest.h>

using namespace kforge::core;
using nlohmann::json;

TEST(BenchEvaluator, PassedReportGivesLatenciesAndEager)
{
    const json report = json::parse(R"({"status": "passed", "evaluation": {"timing": {
        "candidate": {"median_us": 10.5, "q1_us": 10.0, "q3_us": 11.0, "repetitions": 50},
        "eager": {"median_us": 21.0, "q1_us": 20.0, "q3_us": 22.0, "repetitions": 50}}}})");
    const Evaluation e = evaluationFromBenchReport(report);
    EXPECT_EQ(e.status, NodeStatus::Passed);
    ASSERT_TRUE(e.latency.has_value());
    EXPECT_EQ(*e.latency, (LatencyStats{10.5, 10.0, 11.0}));
    ASSERT_TRUE(e.eagerUs.has_value());
    EXPECT_EQ(*e.eagerUs, 21.0);
    EXPECT_TRUE(e.failureReason.empty());
    EXPECT_EQ(e.report.document(), report);
}

TEST(BenchEvaluator, FailuresKeepTheirReasonAndKind)
{
    const std::vector<std::pair<std::string, NodeStatus>> cases = {
        {"compile-error", NodeStatus::FailedCompile}, {"invalid-plan", NodeStatus::FailedCompile},
        {"failed", NodeStatus::FailedValidation},     {"timed-out", NodeStatus::TimedOut},
        {"no-sample", NodeStatus::NoSample},          {"crashed", NodeStatus::Crashed},
        {"worker-error", NodeStatus::Crashed}};
    for (const auto& [status, node] : cases) {
        const Evaluation e = evaluationFromBenchReport(json{{"status", status}, {"reason", "why " + status}});
        EXPECT_EQ(e.status, node) << status;
        EXPECT_EQ(e.failureReason, status + ": why " + status);
        EXPECT_FALSE(e.latency.has_value());
    }
}

TEST(BenchEvaluator, CompiledOnlyAndUntimedPassesCannotRank)
{
    EXPECT_EQ(evaluationFromBenchReport(json{{"status", "compiled-only"}}).status, NodeStatus::CompiledOnly);
    // A validate-only pass has no timing: it must not be ranked as a measured node, and it is not
    // "compiled only" either (that means no GPU): validated, not timed.
    const Evaluation untimed = evaluationFromBenchReport(json{{"status", "passed"}, {"evaluation", json::object()}});
    EXPECT_EQ(untimed.status, NodeStatus::ValidatedOnly);
    EXPECT_FALSE(untimed.latency.has_value());
    EXPECT_TRUE(untimed.failureReason.empty());
    EXPECT_TRUE(isRevisable(NodeStatus::ValidatedOnly));
    EXPECT_FALSE(isFailure(NodeStatus::ValidatedOnly));
    NodeStatus parsed = NodeStatus::Pending;
    ASSERT_TRUE(nodeStatusFromName("validated-only", parsed));
    EXPECT_EQ(parsed, NodeStatus::ValidatedOnly);
    EXPECT_STREQ(nodeStatusName(NodeStatus::ValidatedOnly), "validated-only");
}
