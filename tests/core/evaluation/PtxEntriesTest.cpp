#include "evaluation/CandidateBench.h"

#include <gtest/gtest.h>

using kforge::core::ptxEntryNames;

TEST(PtxEntries, ListsEveryKernelOfAModule)
{
    const std::string ptx = ".version 9.0\n.target sm_90\n.visible .entry softmax_rows(\n\t.param .u64 a\n)\n{\n}\n"
                            ".visible .entry row_max(\n)\n{\n}\n.func helper()\n";
    EXPECT_EQ(ptxEntryNames(ptx), (std::vector<std::string>{"softmax_rows", "row_max"}));
    EXPECT_TRUE(ptxEntryNames(".version 9.0\n.func helper()\n").empty());
}
