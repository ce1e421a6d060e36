// Passed sanitizer verdicts kept between exports (core/cast/SanitizerVerdictCache): reused only for
// exactly the same kernel, samples, worker and toolchain; findings are never kept. No GPU.

#include "cast_export/SanitizerVerdictCache.h"
#include "../ScratchDir.h"

#include "project/ProjectJson.h"
#include "util/AtomicFile.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace kforge::core {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class SanitizerVerdictCacheTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        ArgSpec self;
        self.name = "self";
        self.type = "Tensor";
        self.kind = ArgKind::Tensor;
        self.tensors = {TensorSpec{"bfloat16", {4, 2048}, {2048, 1}, "cuda:0"}};
        m_card.op = "aten::softmax";
        m_card.overload = "int";
        m_card.args = {self};
        m_card.key = variantKey(m_card.op, m_card.overload, m_card.args);
        m_card.id = cardIdForKey(m_card.key);
        fs::create_directories(samplesDir());
        writeSample("call-0.pt", "sample bytes");

        m_node.id = "n3";
        m_node.candidate.source = "extern \"C\" __global__ void kf() {}\n";
        m_node.candidate.launchPlan = json{{"launches", json::array()}};
    }
    fs::path samplesDir() const { return m_root / "project" / "samples" / m_card.id; }
    void writeSample(const std::string& name, const std::string& bytes) const
    {
        std::ofstream(samplesDir() / name, std::ios::binary) << bytes;
    }
    SanitizerVerdictInputs inputs(json worker = json{{"gpu", "NVIDIA H200"}, {"architecture", "sm_90"}}) const
    {
        return sanitizerVerdictInputs(m_card, m_node, m_root / "project", worker, "13.0",
                                      "/usr/local/cuda/bin/compute-sanitizer");
    }

    test::ScratchDir m_scratch;
    const fs::path m_root = m_scratch.path();
    OperatorCard m_card;
    SearchNode m_node;
    const json m_passed{{"checked", true}, {"passed", true}, {"tools", {{"memcheck", {{"errors", 0}}}}}};
};

TEST_F(SanitizerVerdictCacheTest, APassIsReusedForTheSameInputsWithWhenItRan)
{
    const SanitizerVerdictCache cache(m_root / "cache");
    EXPECT_FALSE(cache.find(inputs()).has_value());
    cache.storePassed(inputs(), m_passed);
    const std::optional<json> found = cache.find(inputs());
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ((*found)["tools"], m_passed["tools"]);
    EXPECT_EQ((*found)["passed"], true);
    const std::string checked = (*found)["reused"]["checked_utc"].get<std::string>();
    EXPECT_EQ(checked.size(), std::string("2026-12-01T15:40:00Z").size()) << checked;
    // The worker's pid is not an input: a new worker still finds it.
    json worker{{"gpu", "NVIDIA H200"}, {"architecture", "sm_90"}, {"pid", 4242}};
    EXPECT_TRUE(cache.find(inputs(worker)).has_value());
}

TEST_F(SanitizerVerdictCacheTest, AnyChangedInputIsAMiss)
{
    const SanitizerVerdictCache cache(m_root / "cache");
    cache.storePassed(inputs(), m_passed);
    ASSERT_TRUE(cache.find(inputs()).has_value());

    EXPECT_FALSE(cache.find(inputs(json{{"gpu", "NVIDIA H100"}, {"architecture", "sm_90"}})).has_value());
    EXPECT_FALSE(cache
                     .find(sanitizerVerdictInputs(m_card, m_node, m_root / "project",
                                                  json{{"gpu", "NVIDIA H200"}, {"architecture", "sm_90"}}, "13.1",
                                                  "/usr/local/cuda/bin/compute-sanitizer"))
                     .has_value());
    const SearchNode original = m_node;
    m_node.candidate.source += "// edited\n";
    EXPECT_FALSE(cache.find(inputs()).has_value());
    m_node = original;
    m_node.candidate.launchPlan = json{{"launches", json::array({json{{"kernel", "kf"}}})}};
    EXPECT_FALSE(cache.find(inputs()).has_value());
    m_node = original;
    ASSERT_TRUE(cache.find(inputs()).has_value());

    // The samples: another file, or the same file rewritten (a new capture).
    writeSample("call-1.pt", "second call");
    EXPECT_FALSE(cache.find(inputs()).has_value());
    fs::remove(samplesDir() / "call-1.pt");
    ASSERT_TRUE(cache.find(inputs()).has_value());
    const fs::path sample = samplesDir() / "call-0.pt";
    fs::last_write_time(sample, fs::last_write_time(sample) + std::chrono::seconds(5));
    EXPECT_FALSE(cache.find(inputs()).has_value());
}

TEST_F(SanitizerVerdictCacheTest, FindingsAndDamagedEntriesAreNeverReused)
{
    const SanitizerVerdictCache cache(m_root / "cache");
    cache.storePassed(inputs(), json{{"checked", true}, {"passed", false}});
    cache.storePassed(inputs(), json{{"checked", false}, {"reason", "compute-sanitizer not found"}});
    EXPECT_FALSE(cache.find(inputs()).has_value());
    EXPECT_FALSE(fs::exists(m_root / "cache")); // nothing was written

    cache.storePassed(inputs(), m_passed);
    ASSERT_EQ(std::distance(fs::directory_iterator(m_root / "cache"), fs::directory_iterator()), 1);
    const fs::path file = fs::directory_iterator(m_root / "cache")->path();
    ASSERT_TRUE(writeFileAtomically(file, "{\"inputs\": ").ok()); // truncated
    EXPECT_FALSE(cache.find(inputs()).has_value());
    // Same file name, other inputs (as after a hash collision): not this verdict.
    ASSERT_TRUE(writeFileAtomically(file, json{{"inputs", "other"}, {"record", m_passed}}.dump()).ok());
    EXPECT_FALSE(cache.find(inputs()).has_value());
}

} // namespace
} // namespace kforge::core
