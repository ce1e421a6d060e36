// A search with the LLM proposer against a loopback server sending multi-megabyte replies: the tree
// file stays small, the prompts and replies are stored once each as bounded text blobs, and a
// kernel source over the limit is refused with a reason before anything big is stored
// (docs/search.md, "Bounded storage" and "Text blobs").

#include "LoopbackHttpServer.h"

#include "../search/SearchTestSupport.h"

#include "kernel/KernelSource.h"
#include "llm_client/LlmClientFactory.h"
#include "llm_proposer/LlmPrompt.h"
#include "llm_proposer/LlmProposer.h"
#include "llm_proposer/LlmReplyParser.h"
#include "llm_proposer/LlmUsage.h"
#include "model/TextBounds.h"
#include "search/ProvenanceTexts.h"
#include "search/SearchRun.h"
#include "search/TreeStore.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <set>

namespace kforge::core {
namespace {

using nlohmann::json;
using test::LoopbackHttpServer;

constexpr const char* kKeyEnv = "KFORGE_TEST_LLM_STORAGE_KEY";
constexpr const char* kModel = "fake-coder";
// Under this, a 4-node tree loads in the GUI at once (each node here is a few KiB).
constexpr std::uintmax_t kSmallTreeBytes = 64 * 1024;

OperatorCard softmaxCard()
{
    OperatorCard card;
    card.id = "00c0ffee00c0ffee";
    card.op = "aten::softmax";
    card.overload = "int";
    card.schema = "aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor";
    const TensorSpec t{"bfloat16", {64, 1000}, {1000, 1}, "cuda:0"};
    card.args.push_back(ArgSpec{"self", "Tensor", ArgKind::Tensor, {t}, nullptr});
    card.args.push_back(ArgSpec{"dim", "int", ArgKind::Value, {}, -1});
    card.args.push_back(ArgSpec{"dtype", "ScalarType?", ArgKind::None, {}, nullptr});
    card.outputs = {t};
    return card;
}

// A valid kernel for the card, padded with comment lines to at least `padding` bytes.
std::string kernelSource(std::size_t padding = 0)
{
    std::string source =
        "/*kforge-plan\n{\"launches\": [{\"kernel\": \"softmax_rows\", \"grid\": [64], \"block\": [256], "
        "\"args\": [\"ptr:self\", \"ptr:out0\", \"i32:1000\"]}]}\n*/\n#include <cuda_bf16.h>\n"
        "extern \"C\" __global__ void softmax_rows(const __nv_bfloat16* x, __nv_bfloat16* y, int n) "
        "{ /* body */ }\n";
    while (source.size() < padding)
        source += "// padding padding padding padding padding padding padding pad\n";
    return source;
}

std::string openAiBody(const std::string& text)
{
    return json{{"id", "chatcmpl-1"},
                {"object", "chat.completion"},
                {"model", kModel},
                {"choices",
                 {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", "stop"}}}},
                {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 500}}}}
        .dump();
}

std::set<std::string> blobNames(const std::filesystem::path& dir)
{
    std::set<std::string> names;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec))
        names.insert(it->path().filename().string());
    return names;
}

class LlmTreeStorage : public ::testing::Test {
protected:
    void SetUp() override { ::setenv(kKeyEnv, "sk-storage-test", 1); }
    void TearDown() override { ::unsetenv(kKeyEnv); }

    std::shared_ptr<LlmClient> client()
    {
        LlmProviderConfig config = LlmProviderConfig::defaultsFor(LlmProvider::OpenAiCompatible);
        config.baseUrl = m_server.baseUrl() + "/v1";
        config.model = kModel;
        config.apiKeyEnv = kKeyEnv;
        config.maxRetries = 0;
        auto created = createLlmClient(config);
        EXPECT_TRUE(created.ok()) << (created.ok() ? "" : created.error().toString());
        return std::shared_ptr<LlmClient>(std::move(created.value()));
    }

    Result<SearchOutcome> search(int iterations, int repairTurns, SearchTree& out)
    {
        LlmProposerOptions options;
        options.maxRepairTurns = repairTurns;
        LlmProposer proposer(m_card, client(), json{{"name", "NVIDIA H200"}}, options);
        test::SyntheticEvaluator evaluator;
        evaluator.compileOnly = true;
        SearchRun run(SearchTree(m_card.id, 1), m_store, proposer, evaluator, test::fixedClockOptions(iterations));
        auto outcome = run.run();
        out = run.tree();
        return outcome;
    }

    OperatorCard m_card = softmaxCard();
    LoopbackHttpServer m_server;
    test::ScratchDir m_dir;
    TreeStore m_store{TreeStore::defaultPath(m_dir.path(), m_card.id)};
};

TEST_F(LlmTreeStorage, MultiMegabyteRepliesKeepTheTreeSmallAndAreStoredOnce)
{
    // A usable kernel followed by 3 MiB of prose, four times (root and three revisions).
    const std::string reply = "```cuda\n" + kernelSource() + "```\n" + std::string(3 * 1024 * 1024, 'p') + "\n";
    for (int i = 0; i < 4; ++i)
        m_server.enqueue({200, {}, openAiBody(reply)});
    SearchTree tree;
    auto outcome = search(4, 0, tree);
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    ASSERT_EQ(tree.size(), 4u);
    EXPECT_TRUE(outcome->failure.empty()) << outcome->failure;

    EXPECT_LT(std::filesystem::file_size(m_store.file()), kSmallTreeBytes);
    const TextBlobStore blobs = m_store.blobs();
    std::set<std::string> referenced;
    std::string responseDigest;
    for (const SearchNode& node : tree.nodes()) {
        EXPECT_EQ(node.status, NodeStatus::CompiledOnly) << node.id << " " << node.failureReason;
        const json& details = node.provenance.details;
        EXPECT_FALSE(details.contains("system_prompt")) << node.id;
        ASSERT_EQ(details["calls"].size(), 1u);
        const json& call = details["calls"][0];
        EXPECT_FALSE(call.contains("response")) << node.id;
        EXPECT_EQ(call["response_bytes"], reply.size());
        EXPECT_EQ(call["response_truncated"], true);
        if (responseDigest.empty())
            responseDigest = call["response_sha256"];
        EXPECT_EQ(call["response_sha256"], responseDigest) << "the same reply is one blob";
        for (const std::string& digest : {details["system_prompt_sha256"].get<std::string>(),
                                          call["prompt_sha256"].get<std::string>(), responseDigest})
            referenced.insert(digest + ".txt");
    }
    // Exactly the referenced texts are stored, once each: the system prompt (the same for every
    // node), the reply (the same four times) and the distinct user prompts.
    EXPECT_EQ(blobNames(blobs.directory()), referenced);
    EXPECT_LE(std::filesystem::file_size(blobs.fileOf(responseDigest)), kMaxStoredTextBytes + 100);

    // Readers resolve the references, from the tree in memory and from the file.
    auto loaded = m_store.load();
    ASSERT_TRUE(loaded.ok()) << loaded.error().toString();
    const json& rootDetails = loaded->root()->provenance.details;
    EXPECT_EQ(provenanceText(rootDetails, "system_prompt", blobs).value(), llmSystemPrompt());
    const std::string storedReply = provenanceText(rootDetails["calls"][0], "response", blobs).value();
    EXPECT_EQ(storedReply.substr(0, 200), reply.substr(0, 200));
    EXPECT_NE(storedReply.find("[kforge: truncated: " + std::to_string(reply.size()) + " bytes in all"),
              std::string::npos);
    EXPECT_NE(provenanceText(rootDetails["calls"][0], "prompt", blobs).value().find("bfloat16"), std::string::npos);
    EXPECT_EQ(llmUsageOf(loaded.value()).calls, 4);
}

TEST_F(LlmTreeStorage, AMegabyteSourceIsRefusedWithAReasonBeforeAnythingBigIsStored)
{
    const std::string reply = "Here it is.\n```cuda\n" + kernelSource(1200 * 1024) + "```\n";
    ASSERT_GT(reply.size(), 1024u * 1024);
    m_server.enqueue({200, {}, openAiBody(reply)});
    m_server.enqueue({200, {}, openAiBody(reply)});
    SearchTree tree;
    auto outcome = search(3, 1, tree);
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    ASSERT_EQ(tree.size(), 1u);
    const SearchNode& root = *tree.root();
    EXPECT_EQ(root.status, NodeStatus::FailedProposal);
    EXPECT_NE(root.failureReason.find("the kernel source is"), std::string::npos) << root.failureReason;
    EXPECT_NE(root.failureReason.find("over the limit of 262144 bytes (256 KiB)"), std::string::npos)
        << root.failureReason;
    EXPECT_TRUE(root.candidate.source.empty());
    EXPECT_NE(outcome->failure.find("the root n0 is failed-proposal"), std::string::npos) << outcome->failure;
    EXPECT_LT(std::filesystem::file_size(m_store.file()), kSmallTreeBytes);

    // The repair turn quoted the limit and sent back a bounded part of the reply, not all of it.
    const auto requests = m_server.requests();
    ASSERT_EQ(requests.size(), 2u);
    const json messages = json::parse(requests[1].body)["messages"];
    bool echoed = false;
    for (const json& message : messages) {
        if (message["role"] == "assistant") {
            echoed = true;
            EXPECT_LT(message["content"].get<std::string>().size(), 2 * kMaxKernelSourceBytes + 200);
        }
    }
    EXPECT_TRUE(echoed);
    EXPECT_NE(messages.back()["content"].get<std::string>().find("262144"), std::string::npos);
}

TEST(LlmReplyParserLimits, OversizedOrNonUtf8SourcesAreRefused)
{
    const OperatorCard card = softmaxCard();
    EXPECT_TRUE(parseLlmReply("```cuda\n" + kernelSource() + "```\n", card).ok());
    auto big = parseLlmReply("```cuda\n" + kernelSource(kMaxKernelSourceBytes + 1) + "```\n", card);
    ASSERT_FALSE(big.ok());
    EXPECT_NE(big.error().message.find("over the limit of 262144 bytes"), std::string::npos) << big.error().message;
    auto bytes = parseLlmReply("```cuda\n" + kernelSource() + "// \xff\xfe\n```\n", card);
    ASSERT_FALSE(bytes.ok());
    EXPECT_NE(bytes.error().message.find("not valid UTF-8"), std::string::npos) << bytes.error().message;
}

} // namespace
} // namespace kforge::core
