// LlmProposer against a real HTTP server on loopback speaking OpenAI Chat Completions: prompt
// contents, reply parsing, the repair loop, token/cost records, and that the key is never recorded.

#include "LoopbackHttpServer.h"

#include "llm_client/LlmClientFactory.h"
#include "llm_proposer/LlmProposer.h"
#include "llm_proposer/LlmReplyParser.h"
#include "llm_proposer/LlmUsage.h"
#include "model/LaunchPlan.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>

namespace kforge::core {
namespace {

using nlohmann::json;
using test::LoopbackHttpServer;
using test::ScriptedResponse;

constexpr const char* kKeyEnv = "KFORGE_TEST_LLMP_KEY";
constexpr const char* kKey = "sk-proposer-secret-4f9a1c";
constexpr const char* kModel = "fake-coder";

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

std::string kernelSource(const std::string& kernel, const std::string& selfArg = "self")
{
    return "/*kforge-plan\n{\"launches\": [{\"kernel\": \"" + kernel +
        "\", \"grid\": [64], \"block\": [256], \"args\": [\"ptr:" + selfArg +
        "\", \"ptr:out0\", \"i32:1000\"]}]}\n*/\n#include <cuda_bf16.h>\n"
        "extern \"C\" __global__ void " +
        kernel + "(const __nv_bfloat16* x, __nv_bfloat16* y, int n) { /* body */ }\n";
}

std::string fenced(const std::string& source, const std::string& tag = "cuda")
{
    return "Here is the kernel.\n```" + tag + "\n" + source + "```\n";
}

std::string openAiBody(const std::string& text, int in, int out)
{
    return json{{"id", "chatcmpl-1"},
                {"object", "chat.completion"},
                {"model", kModel},
                {"choices",
                 {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", "stop"}}}},
                {"usage", {{"prompt_tokens", in}, {"completion_tokens", out}}}}
        .dump();
}

class LlmProposerTest : public ::testing::Test {
protected:
    void SetUp() override { ::setenv(kKeyEnv, kKey, 1); }
    void TearDown() override { ::unsetenv(kKeyEnv); }

    std::shared_ptr<LlmClient> client()
    {
        LlmProviderConfig config = LlmProviderConfig::defaultsFor(LlmProvider::OpenAiCompatible);
        config.baseUrl = m_server.baseUrl() + "/v1";
        config.model = kModel;
        config.apiKeyEnv = kKeyEnv;
        config.maxRetries = 0;
        config.prices[kModel] = LlmModelPrice{2.0, 10.0};
        auto created = createLlmClient(config);
        EXPECT_TRUE(created.ok()) << (created.ok() ? "" : created.error().toString());
        return std::shared_ptr<LlmClient>(std::move(created.value()));
    }

    LlmProposer proposer(LlmProposerOptions options = {})
    {
        return LlmProposer(m_card, client(), json{{"name", "NVIDIA H200"}, {"multiprocessors", 132}}, options);
    }

    void reply(const std::string& text, int in = 1000, int out = 500)
    {
        m_server.enqueue({200, {}, openAiBody(text, in, out)});
    }

    // The user messages of the request'th call, in order.
    std::vector<json> messages(std::size_t request) const
    {
        const auto requests = m_server.requests();
        if (request >= requests.size())
            return {};
        const json body = json::parse(requests[request].body);
        return body["messages"].get<std::vector<json>>();
    }

    OperatorCard m_card = softmaxCard();
    LoopbackHttpServer m_server;
    std::atomic<bool> m_stop{false};
};

TEST_F(LlmProposerTest, GoodReplyBecomesAValidCandidateWithAnAuditRecord)
{
    reply(fenced(kernelSource("softmax_rows")));
    LlmProposer p = proposer();
    SearchTree tree(m_card.id, 0);
    auto proposal = p.proposeRoot(tree, m_stop);
    ASSERT_TRUE(proposal.ok()) << proposal.error().toString();
    EXPECT_EQ(proposal->failureReason, "");
    EXPECT_NE(proposal->candidate.source.find("extern \"C\" __global__ void softmax_rows"), std::string::npos);
    auto plan = parseLaunchPlan(proposal->candidate.launchPlan, m_card);
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    EXPECT_TRUE(validateLaunchPlan(plan.value(), m_card).ok());
    EXPECT_EQ(plan->launches.at(0).kernel, "softmax_rows");

    const Provenance& prov = proposal->provenance;
    EXPECT_EQ(prov.kind, ProvenanceKind::Llm);
    EXPECT_EQ(prov.provider, "openai");
    EXPECT_EQ(prov.model, kModel);
    const json& d = prov.details;
    EXPECT_EQ(d["turns"], 1);
    EXPECT_EQ(d["input_tokens"], 1000);
    EXPECT_EQ(d["output_tokens"], 500);
    EXPECT_NEAR(d["cost_usd"].get<double>(), 1000 * 2.0 / 1e6 + 500 * 10.0 / 1e6, 1e-12);
    EXPECT_EQ(d["cost_known"], true);
    ASSERT_EQ(d["calls"].size(), 1u);
    EXPECT_NE(d["calls"][0]["prompt"].get<std::string>().find("aten::softmax.int"), std::string::npos);
    EXPECT_NE(d["calls"][0]["response"].get<std::string>().find("softmax_rows"), std::string::npos);
    EXPECT_NE(d["system_prompt"].get<std::string>().find("kforge-plan"), std::string::npos);

    // What was sent is what was recorded: the system prompt and the user prompt.
    const auto sent = messages(0);
    ASSERT_EQ(sent.size(), 2u);
    EXPECT_EQ(sent[0]["role"], "system");
    EXPECT_EQ(sent[0]["content"], d["system_prompt"]);
    EXPECT_EQ(sent[1]["content"], d["calls"][0]["prompt"]);
}

TEST_F(LlmProposerTest, ReplyWithoutCodeGetsARepairTurnThatSucceeds)
{
    reply("I would use one block per row and a warp reduction.", 300, 20);
    reply(fenced(kernelSource("softmax_fixed"), "c++"), 700, 400);
    LlmProposer p = proposer();
    SearchTree tree(m_card.id, 0);
    auto proposal = p.proposeRoot(tree, m_stop);
    ASSERT_TRUE(proposal.ok()) << proposal.error().toString();
    EXPECT_EQ(proposal->failureReason, "");
    EXPECT_NE(proposal->candidate.source.find("softmax_fixed"), std::string::npos);
    const json& d = proposal->provenance.details;
    EXPECT_EQ(d["turns"], 2);
    ASSERT_EQ(d["calls"].size(), 2u);
    EXPECT_EQ(d["calls"][0]["error"], "reply without a ```cuda block");
    EXPECT_EQ(d["calls"][1]["kind"], "repair");
    EXPECT_FALSE(d["calls"][1].contains("error"));
    EXPECT_EQ(d["input_tokens"], 1000);
    EXPECT_EQ(d["output_tokens"], 420);

    // The repair turn carries the previous reply as the assistant message and the exact error.
    const auto sent = messages(1);
    ASSERT_EQ(sent.size(), 4u);
    EXPECT_EQ(sent[2]["role"], "assistant");
    EXPECT_EQ(sent[2]["content"], "I would use one block per row and a warp reduction.");
    EXPECT_EQ(sent[3]["role"], "user");
    EXPECT_NE(sent[3]["content"].get<std::string>().find("reply without a ```cuda block"), std::string::npos);
}

TEST_F(LlmProposerTest, InvalidPlanEveryTurnFailsAfterTheLastRepairTurn)
{
    for (int i = 0; i < 3; ++i)
        reply(fenced(kernelSource("softmax_rows", "input")), 100, 50);
    LlmProposerOptions options;
    options.maxRepairTurns = 2;
    LlmProposer p = proposer(options);
    SearchTree tree(m_card.id, 0);
    auto proposal = p.proposeRoot(tree, m_stop);
    ASSERT_TRUE(proposal.ok()) << proposal.error().toString();
    EXPECT_NE(proposal->failureReason.find("after 3 calls"), std::string::npos) << proposal->failureReason;
    EXPECT_NE(proposal->failureReason.find("plan invalid"), std::string::npos) << proposal->failureReason;
    EXPECT_NE(proposal->failureReason.find("no argument 'input'"), std::string::npos) << proposal->failureReason;
    EXPECT_EQ(m_server.requests().size(), 3u);
    const json& d = proposal->provenance.details;
    EXPECT_EQ(d["turns"], 3);
    EXPECT_EQ(d["input_tokens"], 300);
    for (const json& call : d["calls"])
        EXPECT_NE(call["error"].get<std::string>().find("plan invalid"), std::string::npos);
    // The third request holds both failed replies and both errors.
    EXPECT_EQ(messages(2).size(), 6u);
}

TEST_F(LlmProposerTest, RevisionPromptHoldsShapesParentAndFailedSiblings)
{
    SearchTree tree(m_card.id, 0);
    Provenance rootProv;
    rootProv.kind = ProvenanceKind::Llm;
    auto root = tree.addRoot({kernelSource("softmax_parent_v1"), json::object()}, rootProv, 0);
    ASSERT_TRUE(root.ok());
    Evaluation passed;
    passed.status = NodeStatus::CompiledOnly;
    ASSERT_TRUE(tree.recordEvaluation(*root, passed).ok());
    auto child = tree.addChild(*root, {kernelSource("softmax_broken"), json::object()}, rootProv, 0);
    ASSERT_TRUE(child.ok());
    Evaluation failed;
    failed.status = NodeStatus::FailedCompile;
    failed.failureReason = "line 7: identifier \"summ\" is undefined";
    ASSERT_TRUE(tree.recordEvaluation(*child, failed).ok());

    reply(fenced(kernelSource("softmax_v2")));
    LlmProposer p = proposer();
    auto proposal = p.propose(tree, *tree.find(*root), m_stop);
    ASSERT_TRUE(proposal.ok()) << proposal.error().toString();
    const std::string prompt = messages(0).at(1)["content"];
    EXPECT_NE(prompt.find("sizes [64, 1000] strides [1000, 1]"), std::string::npos) << prompt;
    EXPECT_NE(prompt.find("bfloat16"), std::string::npos);
    EXPECT_NE(prompt.find("softmax_parent_v1"), std::string::npos);
    EXPECT_NE(prompt.find("identifier \"summ\" is undefined"), std::string::npos);
    EXPECT_NE(prompt.find("NVIDIA H200"), std::string::npos);
    EXPECT_NE(prompt.find("dim (int): value -1"), std::string::npos);
    EXPECT_EQ(proposal->provenance.details["parent"], *root);
}

TEST_F(LlmProposerTest, ApiKeyAppearsInNoProvenanceDetail)
{
    reply("no code here");
    reply(fenced(kernelSource("softmax_rows")));
    LlmProposer p = proposer();
    SearchTree tree(m_card.id, 0);
    auto proposal = p.proposeRoot(tree, m_stop);
    ASSERT_TRUE(proposal.ok());
    // The key did reach the server (so the test can fail), but only in the auth header.
    ASSERT_EQ(m_server.requests().size(), 2u);
    EXPECT_EQ(m_server.requests()[0].header("authorization"), std::string("Bearer ") + kKey);
    const Provenance& prov = proposal->provenance;
    for (const std::string& text : {prov.details.dump(), prov.provider, prov.model, proposal->failureReason})
        EXPECT_EQ(text.find(kKey), std::string::npos);
    EXPECT_EQ(prov.details.dump().find(kKeyEnv), std::string::npos);
}

TEST_F(LlmProposerTest, ServerErrorOnTheFirstCallIsAnError)
{
    m_server.enqueue({400, {}, R"({"error": {"message": "model not found"}})"});
    LlmProposer p = proposer();
    SearchTree tree(m_card.id, 0);
    auto proposal = p.proposeRoot(tree, m_stop);
    ASSERT_FALSE(proposal.ok());
    EXPECT_NE(proposal.error().toString().find("model not found"), std::string::npos) << proposal.error().toString();
    // The client's context names the provider, model and URL once; the proposer adds no second name.
    const std::string line = proposal.error().toString();
    EXPECT_EQ(line.rfind(std::string("openai ") + kModel + " at http://", 0), 0u) << line;
    EXPECT_EQ(line.find("openai openai"), std::string::npos) << line;
}

TEST_F(LlmProposerTest, AFailedRepairTurnNamesTheProviderOnce)
{
    reply("No code in this reply.");
    m_server.enqueue({500, {}, R"({"error": {"message": "overloaded"}})"});
    LlmProposer p = proposer();
    SearchTree tree(m_card.id, 0);
    auto proposal = p.proposeRoot(tree, m_stop);
    ASSERT_TRUE(proposal.ok()) << proposal.error().toString();
    EXPECT_NE(proposal->failureReason.find(std::string("repair turn failed: openai ") + kModel), std::string::npos)
        << proposal->failureReason;
    EXPECT_EQ(proposal->failureReason.find("openai openai"), std::string::npos) << proposal->failureReason;
}

TEST_F(LlmProposerTest, UsageSumsLlmNodesOfATree)
{
    reply(fenced(kernelSource("softmax_rows")), 1000, 500);
    LlmProposer p = proposer();
    SearchTree tree(m_card.id, 0);
    auto proposal = p.proposeRoot(tree, m_stop);
    ASSERT_TRUE(proposal.ok());
    ASSERT_TRUE(tree.addRoot(proposal->candidate, proposal->provenance, 0).ok());
    const LlmUsage usage = llmUsageOf(tree);
    EXPECT_EQ(usage.nodes, 1);
    EXPECT_EQ(usage.calls, 1);
    EXPECT_EQ(usage.inputTokens, 1000);
    EXPECT_EQ(usage.outputTokens, 500);
    EXPECT_TRUE(usage.costKnown);
    EXPECT_NE(usage.summary().find("$0.0070"), std::string::npos) << usage.summary();
}

TEST(LlmReplyParserTest, NamesWhatIsMissing)
{
    const OperatorCard card = softmaxCard();
    EXPECT_EQ(parseLlmReply("```python\nprint(1)\n```\n", card).error().message, "reply without a ```cuda block");
    EXPECT_EQ(parseLlmReply("```cuda\nextern \"C\" __global__ void k() {}\n```\n", card).error().message,
              "the ```cuda block has no /*kforge-plan {...} */ block");
    EXPECT_NE(
        parseLlmReply("```cuda\n/*kforge-plan {\"launches\": [ */\n```\n", card).error().message.find("not valid JSON"),
        std::string::npos);
    std::string renamed = fenced(kernelSource("softmax_a"));
    renamed.replace(renamed.find("void softmax_a("), 15, "void softmax_b(");
    EXPECT_NE(parseLlmReply(renamed, card).error().message.find("kernel 'softmax_a'"), std::string::npos);
    EXPECT_TRUE(parseLlmReply(fenced(kernelSource("rows"), "cpp"), card).ok());
}

} // namespace
} // namespace kforge::core
