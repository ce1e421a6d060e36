// The automatic sample budget (capture/SampleBudget.h): the rule, its measurement on this machine,
// and what a capture with the default budget says about it.

#include "CaptureTestSupport.h"

#include "capture/CaptureJob.h"
#include "capture/SampleBudget.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace kforge::core;
using namespace kforge::core::test;

TEST(SampleBudget, IsHalfTheSmallerOfFreeDiskAndAvailableMemory)
{
    constexpr std::int64_t kGiB = std::int64_t{1} << 30;
    EXPECT_EQ(automaticSampleBudgetBytes(100 * kGiB, 16 * kGiB), 8 * kGiB);
    EXPECT_EQ(automaticSampleBudgetBytes(3 * kGiB, 64 * kGiB), 3 * kGiB / 2);
    EXPECT_EQ(automaticSampleBudgetBytes(0, 64 * kGiB), 0);
}

TEST(SampleBudget, PrintsMegabytesAndGigabytes)
{
    EXPECT_EQ(sampleBytesText(812ll << 20), "812 MB");
    EXPECT_EQ(sampleBytesText((11ll << 30) + (300ll << 20)), "11.3 GB");
}

TEST(SampleBudget, IsMeasuredOnTheFileSystemAProjectWouldBeWrittenTo)
{
    ScratchDir scratch;
    // The project folder does not exist yet: its nearest existing parent is measured.
    auto budget = resolveAutomaticSampleBudget(scratch / "not" / "yet" / "project");
    ASSERT_TRUE(budget.ok()) << budget.error().toString();
    const auto space = std::filesystem::space(scratch.path());
    EXPECT_GT(budget->bytes, 0);
    EXPECT_LE(budget->bytes, static_cast<std::int64_t>(space.available / 2) + (std::int64_t{64} << 20));
    const bool disk = budget->basis.find("half the free disk space of " + scratch.path().string()) == 0;
    const bool memory = budget->basis.find("half the available memory, ") == 0;
    EXPECT_TRUE(disk || memory) << budget->basis;
}

TEST(SampleBudget, ADefaultCaptureSaysWhatItUsedOfTheAutomaticBudget)
{
    ScratchDir scratch;
    CaptureOptions options = cpuCapture("basic_block.pt", {"2x8x8x8"}, scratch / "project");
    ASSERT_EQ(options.sampleBudgetBytes, kAutomaticSampleBudget);
    auto report = runCapture(options);
    ASSERT_TRUE(report.ok()) << report.error().toString();
    std::int64_t used = 0;
    for (const OperatorCard& card : report->project.cards)
        for (const SampleRef& sample : card.samples)
            used += sample.bytes;
    EXPECT_GT(used, 0);
    const std::int64_t budget = report->project.capture.sampleBudgetBytes;
    EXPECT_GT(budget, used);
    const std::string expected =
        "samples: " + sampleBytesText(used) + " of an automatic budget of " + sampleBytesText(budget) + " (half the ";
    const auto note = std::find_if(report->notes.begin(), report->notes.end(),
                                   [&](const std::string& text) { return text.rfind(expected, 0) == 0; });
    EXPECT_NE(note, report->notes.end()) << "no note starting with: " << expected;
}
