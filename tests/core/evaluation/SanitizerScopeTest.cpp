// sanitizerToolsToSkip: racecheck only where some launch has shared memory, synccheck only where the
// PTX synchronizes, both whenever the report cannot tell; memcheck and initcheck always.

#include "evaluation/SanitizerScope.h"

#include <gtest/gtest.h>

using namespace kforge::core;
using nlohmann::json;

namespace {

// A kernel that loads, computes and stores (the PTX of an elementwise candidate, trimmed).
const char* const kElementwisePtx = R"(.visible .entry kf_pointwise(
	.param .u64 kf_pointwise_param_0
)
{
	.reg .f32 	%f<4>;
	membar.gl;
	ld.global.nc.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd5];
	st.global.v4.f32 	[%rd7], {%f1, %f2, %f3, %f4};
	cp.async.wait_all;
	ret;
})";

json launches(std::initializer_list<std::pair<int, int>> shared)
{
    json kernels = json::array();
    for (const auto& [staticBytes, dynamicBytes] : shared)
        kernels.push_back({{"entry", "k"}, {"shared_bytes", staticBytes}, {"dynamic_shared_bytes", dynamicBytes}});
    return kernels;
}

} // namespace

TEST(SanitizerScope, AnElementwiseKernelSkipsRacecheckAndSynccheck)
{
    const auto skip = sanitizerToolsToSkip(kElementwisePtx, launches({{0, 0}, {0, 0}}));
    ASSERT_EQ(skip.size(), 2u);
    EXPECT_NE(skip.at("racecheck").find("no shared memory"), std::string::npos);
    EXPECT_NE(skip.at("synccheck").find("no barrier"), std::string::npos);
    EXPECT_FALSE(skip.contains("memcheck"));
    EXPECT_FALSE(skip.contains("initcheck"));
}

TEST(SanitizerScope, SharedMemoryInAnyLaunchRunsRacecheck)
{
    EXPECT_TRUE(sanitizerToolsToSkip(kElementwisePtx, launches({{0, 0}, {1024, 0}})).contains("synccheck"));
    EXPECT_FALSE(sanitizerToolsToSkip(kElementwisePtx, launches({{0, 0}, {1024, 0}})).contains("racecheck"));
    EXPECT_FALSE(sanitizerToolsToSkip(kElementwisePtx, launches({{0, 4096}})).contains("racecheck"));
}

TEST(SanitizerScope, WhatTheReportCannotSayRunsTheTool)
{
    // A launch ptxas did not report (its name only), no kernels at all, no PTX.
    EXPECT_FALSE(sanitizerToolsToSkip(kElementwisePtx, json::array({{{"entry", "k"}}})).contains("racecheck"));
    EXPECT_FALSE(sanitizerToolsToSkip(kElementwisePtx, json::array()).contains("racecheck"));
    EXPECT_FALSE(sanitizerToolsToSkip(kElementwisePtx, json()).contains("racecheck"));
    EXPECT_FALSE(sanitizerToolsToSkip("", launches({{0, 0}})).contains("synccheck"));
}

TEST(SanitizerScope, EverySynchronizingInstructionRunsSynccheck)
{
    for (const char* instruction : {"bar.sync 0;", "barrier.sync 0;", "bar.arrive 1, 64;", "bar.warp.sync -1;",
                                    "shfl.sync.bfly.b32 %r1, %r2, 16, 31, -1;", "vote.sync.ballot.b32 %r1, %p1, -1;",
                                    "match.any.sync.b32 %r1, %r2, -1;", "redux.sync.add.s32 %r1, %r2, -1;",
                                    "mbarrier.try_wait.parity.shared.b64 %p1, [%r1], %r2;"}) {
        const std::string ptx = std::string(kElementwisePtx) + "\n\t" + instruction + "\n";
        EXPECT_FALSE(sanitizerToolsToSkip(ptx, launches({{0, 0}})).contains("synccheck")) << instruction;
    }
}
