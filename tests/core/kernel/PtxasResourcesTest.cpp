// ptxas's resource report parsed from an NVRTC log, and the theoretical occupancy computed from it.
// No GPU needed.

#include "kernel/PtxasResources.h"
#include "kernel/NvrtcDiagnostics.h"
#include "kernel/Occupancy.h"

#include <gtest/gtest.h>

namespace kforge::core {
namespace {

// As NVRTC 13 writes it for a module of two kernels, the second one spilling.
constexpr const char* kTwoKernels =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'kf_stats' for 'sm_90'\n"
    "ptxas info    : Function properties for kf_stats\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem, 360 bytes "
    "cmem[0]\n"
    "ptxas info    : Compiling entry function 'kf_apply' for 'sm_90'\n"
    "ptxas info    : Function properties for kf_apply\n"
    "ptxas         .     48 bytes stack frame, 40 bytes spill stores, 36 bytes spill "
    "loads\n"
    "ptxas info    : Used 255 registers, 368 bytes cmem[0]\n"
    "ptxas info    : Compile time = 4.076 ms\n";

TEST(PtxasResources, EveryEntryWithItsRegistersSharedMemoryAndSpills)
{
    const std::vector<KernelResources> kernels = parsePtxasResources(kTwoKernels);
    ASSERT_EQ(kernels.size(), 2u);
    EXPECT_EQ(kernels[0], (KernelResources{"kf_stats", 10, 1, 1024, 0, 0, 0}));
    EXPECT_EQ(kernels[1], (KernelResources{"kf_apply", 255, 0, 0, 48, 40, 36}));
    EXPECT_TRUE(parsePtxasResources("candidate.cu(3): warning: unused variable\n").empty());
    EXPECT_TRUE(parsePtxasResources("").empty());
}

TEST(PtxasResources, TheReportIsNoDiagnosticButPtxasMessagesStillAre)
{
    EXPECT_TRUE(parseNvrtcLog(kTwoKernels).empty());
    EXPECT_TRUE(isPtxasReportLine("ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem"));
    EXPECT_TRUE(
        isPtxasReportLine("ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"));
    EXPECT_FALSE(isPtxasReportLine("ptxas warning : Registers are spilled to local memory in function 'kf'"));
    const std::vector<Diagnostic> mixed =
        parseNvrtcLog(std::string(kTwoKernels) +
                      "ptxas warning : Registers are spilled to local memory in function "
                      "'kf_apply', 40 bytes spill stores, 36 bytes spill loads\n");
    ASSERT_EQ(mixed.size(), 1u);
    EXPECT_EQ(mixed[0].severity, DiagnosticSeverity::Warning);
}

TEST(Occupancy, TheTightestOfThreadsBlocksRegistersAndSharedMemory)
{
    // 256 threads with 32 registers: 8 blocks, the whole SM.
    auto full = theoreticalOccupancy("sm_90", 256, 32, 0);
    ASSERT_TRUE(full);
    EXPECT_EQ(full->blocksPerSm, 8);
    EXPECT_EQ(full->warpsPerSm, 64);
    EXPECT_EQ(full->maxWarpsPerSm, 64);
    EXPECT_DOUBLE_EQ(full->fraction, 1.0);
    // 64 registers: 2048 per warp, 32 warps' worth of the register file.
    auto registers = theoreticalOccupancy("sm_90a", 256, 64, 0);
    ASSERT_TRUE(registers);
    EXPECT_EQ(registers->blocksPerSm, 4);
    EXPECT_DOUBLE_EQ(registers->fraction, 0.5);
    EXPECT_EQ(registers->limitedBy, "registers");
    // 40 registers: 1280 per warp; each of the 4 register-file quarters holds 12 such warps.
    auto quarters = theoreticalOccupancy("sm_90", 128, 40, 0);
    ASSERT_TRUE(quarters);
    EXPECT_EQ(quarters->warpsPerSm, 48);
    // 48 KiB of shared memory (+1 KiB the system reserves per block) in 228 KiB: 4 blocks.
    auto shared = theoreticalOccupancy("sm_90", 128, 16, 48 * 1024);
    ASSERT_TRUE(shared);
    EXPECT_EQ(shared->blocksPerSm, 4);
    EXPECT_EQ(shared->warpsPerSm, 16);
    EXPECT_EQ(shared->limitedBy, "shared memory");
    // Tiny blocks: the SM's 32-block limit.
    auto blocks = theoreticalOccupancy("sm_90", 32, 16, 0);
    ASSERT_TRUE(blocks);
    EXPECT_EQ(blocks->blocksPerSm, 32);
    EXPECT_EQ(blocks->limitedBy, "blocks");
    // Another architecture's limits: 1536 threads per SM on sm_86.
    auto ampere = theoreticalOccupancy("sm_86", 512, 32, 0);
    ASSERT_TRUE(ampere);
    EXPECT_EQ(ampere->blocksPerSm, 3);
    EXPECT_EQ(ampere->maxWarpsPerSm, 48);
}

TEST(Occupancy, ABlockThatCannotRunAndAnUnknownArchitecture)
{
    auto tooMuch = theoreticalOccupancy("sm_90", 128, 16, 300 * 1024);
    ASSERT_TRUE(tooMuch);
    EXPECT_EQ(tooMuch->blocksPerSm, 0);
    EXPECT_EQ(tooMuch->limitedBy, "shared memory");
    EXPECT_FALSE(theoreticalOccupancy("sm_42", 128, 16, 0));
    EXPECT_FALSE(theoreticalOccupancy("compute_90", 128, 16, 0));
    EXPECT_FALSE(theoreticalOccupancy("sm_90", 0, 16, 0));
}

} // namespace
} // namespace kforge::core
