// core/cast_export/KernelStatsSum.h: `kforge run` sums the runtime's counters over its blocks, one load each.

#include "cast_export/KernelStatsSum.h"

#include <gtest/gtest.h>

using kforge::core::addKernelStats;
using nlohmann::json;

namespace {

json load(long long hitsA, long long fallbacksA, long long hitsB, const json& reasons)
{
    return {{"kernels",
             json::array({{{"id", "k1"}, {"op", "aten::add.Tensor"}, {"hits", hitsA}, {"fallbacks", fallbacksA}},
                          {{"id", "k2"}, {"op", "aten::softmax.int"}, {"hits", hitsB}, {"fallbacks", 0}}})},
            {"fallback_reasons", reasons}};
}

const json* byId(const json& kernels, const std::string& id)
{
    for (const json& k : kernels)
        if (k.value("id", std::string()) == id)
            return &k;
    return nullptr;
}

} // namespace

TEST(KernelStatsSum, SumsCountsPerKernelOverLoads)
{
    json kernels;
    addKernelStats(kernels, load(10, 4, 7, {{"k1", "self: dtype bfloat16 != guard float32"}}));
    addKernelStats(kernels, load(12, 0, 7, json::object()));
    addKernelStats(kernels, load(11, 5, 6, {{"k1", "self: sizes [8] != guard [4]"}}));
    ASSERT_EQ(kernels.size(), 2u);
    const json* k1 = byId(kernels, "k1");
    const json* k2 = byId(kernels, "k2");
    ASSERT_NE(k1, nullptr);
    ASSERT_NE(k2, nullptr);
    EXPECT_EQ(k1->at("hits").get<long long>(), 33);
    EXPECT_EQ(k1->at("fallbacks").get<long long>(), 9);
    EXPECT_EQ(k1->at("op"), "aten::add.Tensor");
    EXPECT_EQ(k1->at("last_fallback_reason"), "self: sizes [8] != guard [4]"); // the latest one
    EXPECT_EQ(k2->at("hits").get<long long>(), 20);
    EXPECT_EQ(k2->at("fallbacks").get<long long>(), 0);
    EXPECT_EQ(k2->at("last_fallback_reason"), "");
}

TEST(KernelStatsSum, AReasonSurvivesALoadWithoutFallbacks)
{
    json kernels;
    addKernelStats(kernels, load(1, 1, 1, {{"k1", "self: stride mismatch"}}));
    addKernelStats(kernels, load(1, 0, 1, json::object()));
    EXPECT_EQ(byId(kernels, "k1")->at("last_fallback_reason"), "self: stride mismatch");
}

TEST(KernelStatsSum, StatsWithoutKernelsAddNothing)
{
    json kernels;
    addKernelStats(kernels, json::object());
    EXPECT_TRUE(kernels.is_array());
    EXPECT_TRUE(kernels.empty());
}
