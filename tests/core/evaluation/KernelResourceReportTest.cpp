// The report's compile.kernels: per launch of the plan, its kernel's resources from the compile log
// and the theoretical occupancy of the launch's block; what EvaluationReport reads back.

#include "evaluation/KernelResourceReport.h"
#include "model/EvaluationReport.h"

#include <gtest/gtest.h>

namespace kforge::core {
namespace {

constexpr const char* kLog = "ptxas info    : Compiling entry function 'kf_stats' for 'sm_90'\n"
                             "ptxas info    : Function properties for kf_stats\n"
                             "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                             "ptxas info    : Used 64 registers, used 1 barriers, 1024 bytes smem, 360 bytes cmem[0]\n";

TEST(KernelResourceReport, EachLaunchWithItsKernelsResourcesAndOccupancy)
{
    LaunchPlan plan;
    KernelLaunch stats;
    stats.kernel = "kf_stats";
    stats.block = {256, 1, 1};
    stats.sharedBytes = 2048;
    KernelLaunch missing;
    missing.kernel = "kf_unreported";
    plan.launches = {stats, missing};
    const nlohmann::json kernels = kernelResourceReport(kLog, plan, "sm_90");
    ASSERT_EQ(kernels.size(), 2u);
    EXPECT_EQ(kernels[0]["entry"], "kf_stats");
    EXPECT_EQ(kernels[0]["registers"], 64);
    EXPECT_EQ(kernels[0]["shared_bytes"], 1024);
    EXPECT_EQ(kernels[0]["dynamic_shared_bytes"], 2048);
    EXPECT_EQ(kernels[0]["threads_per_block"], 256);
    EXPECT_EQ(kernels[0]["occupancy"]["blocks_per_sm"], 4); // 64 registers x 256 threads: half the file
    EXPECT_EQ(kernels[0]["occupancy"]["limited_by"], "registers");
    EXPECT_EQ(kernels[1], nlohmann::json({{"entry", "kf_unreported"}}));

    // What a node's report holds, read back.
    const EvaluationReport report = EvaluationReport::fromJson(
        {{"status", "compiled-only"}, {"compile", {{"ok", true}, {"architecture", "sm_90"}, {"kernels", kernels}}}});
    ASSERT_TRUE(report.compile);
    ASSERT_EQ(report.compile->kernels.size(), 2u);
    EXPECT_EQ(report.compile->kernels[0].registers, 64);
    EXPECT_DOUBLE_EQ(*report.compile->kernels[0].occupancy, 0.5);
    EXPECT_EQ(report.compile->kernels[0].occupancyLimitedBy, "registers");
    EXPECT_FALSE(report.compile->kernels[1].registers);
}

} // namespace
} // namespace kforge::core
