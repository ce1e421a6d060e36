// The sanitizer gate's per-tool run against a real child process: a fake compute-sanitizer (a
// shell script written by the test) runs kforge_fake_worker under it and writes its summary only
// after the worker exits, as the real tool does. No GPU.

#include "evaluation/SanitizerTool.h"
#include "ScratchDir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace kforge::core;
using namespace std::chrono_literals;

TEST(SanitizerLog, CountsErrorsOfEachToolsSummary)
{
    EXPECT_EQ(sanitizerErrorCount("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"), 0);
    EXPECT_EQ(sanitizerErrorCount("========= Invalid __global__ write of size 2 bytes\n"
                                  "=========     at softmax_rows+0x1a0\n========= ERROR SUMMARY: 3 errors\n"),
              3);
    EXPECT_EQ(sanitizerErrorCount("========= ERROR SUMMARY: 1 error\n"), 1);
    EXPECT_EQ(sanitizerErrorCount("========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)\n"), 2);
    EXPECT_EQ(sanitizerErrorCount("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"), 0);
    EXPECT_FALSE(sanitizerErrorCount("").has_value()); // the tool did not finish: never read as clean
    EXPECT_FALSE(sanitizerErrorCount("========= COMPUTE-SANITIZER\n").has_value());
}

namespace {

// Parses the real tool's options, runs the worker, then, FAKE_SANITIZER_EXIT_S seconds after the
// worker exited, writes the banner and, unless FAKE_SANITIZER_ERRORS is "none", the summary.
constexpr const char* kFakeSanitizer = R"(#!/bin/sh
log=
while [ $# -gt 0 ]; do
    case "$1" in
        --log-file) log=$2; shift 2 ;;
        --tool|--print-limit|--report-api-errors) shift 2 ;;
        *) break ;;
    esac
done
"$@"
status=$?
sleep "${FAKE_SANITIZER_EXIT_S:-0}"
echo "========= COMPUTE-SANITIZER" > "$log"
if [ "${FAKE_SANITIZER_ERRORS:-0}" != none ]; then
    echo "========= ERROR SUMMARY: ${FAKE_SANITIZER_ERRORS:-0} errors" >> "$log"
fi
exit $status
)";

class SanitizerToolTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        m_sanitizer = m_dir / "compute-sanitizer";
        std::ofstream(m_sanitizer) << kFakeSanitizer;
        std::filesystem::permissions(m_sanitizer, std::filesystem::perms::owner_all);
    }

    SanitizerToolRun run(std::vector<std::pair<std::string, std::string>> environment)
    {
        WorkerCommand worker;
        worker.executable = KFORGE_FAKE_WORKER;
        worker.environment = std::move(environment);
        return runSanitizerTool(m_sanitizer.string(), "initcheck", nlohmann::json::object(), worker, 30s);
    }

    test::ScratchDir m_dir;
    std::filesystem::path m_sanitizer;
};

} // namespace

TEST_F(SanitizerToolTest, WaitsForTheSummaryTheToolWritesAfterTheWorkerExits)
{
    // initcheck with gigabytes of tracked buffers takes seconds to exit; it used to be killed after
    // two seconds and its missing summary failed kernels that were clean.
    const SanitizerToolRun clean = run({{"FAKE_SANITIZER_EXIT_S", "3"}});
    EXPECT_EQ(clean.failure, "");
    EXPECT_EQ(clean.record["errors"], 0);
    EXPECT_EQ(clean.record["evaluation"], "passed");
    EXPECT_FALSE(clean.record.contains("log"));
    // The three steps' wall times; the tool's exit (its summary) took the three seconds.
    const nlohmann::json& seconds = clean.record["seconds"];
    EXPECT_GE(seconds["start"].get<double>(), 0.0);
    EXPECT_GE(seconds["evaluate"].get<double>(), 0.0);
    EXPECT_GE(seconds["exit"].get<double>(), 2.5);
    EXPECT_LT(seconds["start"].get<double>() + seconds["evaluate"].get<double>(), 2.5);
}

TEST_F(SanitizerToolTest, ReportsTheToolsErrors)
{
    const SanitizerToolRun found = run({{"FAKE_SANITIZER_ERRORS", "2"}});
    EXPECT_EQ(found.failure, "compute-sanitizer initcheck: 2 error(s)");
    EXPECT_EQ(found.record["errors"], 2);
    EXPECT_NE(found.record["log"].get<std::string>().find("ERROR SUMMARY: 2 errors"), std::string::npos);
}

TEST_F(SanitizerToolTest, ALogWithoutSummaryFailsAndSaysWhereItEnds)
{
    const SanitizerToolRun unfinished = run({{"FAKE_SANITIZER_ERRORS", "none"}});
    EXPECT_EQ(unfinished.failure,
              "compute-sanitizer initcheck: no summary in its log (it ends: ========= COMPUTE-SANITIZER)");
    EXPECT_TRUE(unfinished.record["errors"].is_null());
    EXPECT_EQ(unfinished.record["evaluation"], "passed");
}
