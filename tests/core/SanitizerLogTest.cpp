#include "eval/CandidateBench.h"

#include <gtest/gtest.h>

using kforge::core::ptxEntryNames;
using kforge::core::sanitizerErrorCount;

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

TEST(PtxEntries, ListsEveryKernelOfAModule)
{
    const std::string ptx = ".version 9.0\n.target sm_90\n.visible .entry softmax_rows(\n\t.param .u64 a\n)\n{\n}\n"
                            ".visible .entry row_max(\n)\n{\n}\n.func helper()\n";
    EXPECT_EQ(ptxEntryNames(ptx), (std::vector<std::string>{"softmax_rows", "row_max"}));
    EXPECT_TRUE(ptxEntryNames(".version 9.0\n.func helper()\n").empty());
}
