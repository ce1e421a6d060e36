// The API key never leaves an LLM client in what it returns (LlmSecretRedaction.h): replies that echo
// it (in the text, plainly or JSON-escaped, in the model name, in a response header) from a loopback
// server speaking each wire format, and the redaction rules themselves.

#include "LoopbackHttpServer.h"

#include "llm_client/LlmClientFactory.h"
#include "llm_client/LlmSecretRedaction.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <random>

namespace kforge::core {
namespace {

using nlohmann::json;
using test::LoopbackHttpServer;
using test::ScriptedResponse;

TEST(LlmSecretRedaction, KeyAndHeaderValuesInText)
{
    const std::string key = "sk-test-0123456789abcdef";
    EXPECT_EQ(redactSecretInText("a " + key + " b " + key, key), "a [redacted] b [redacted]");
    EXPECT_EQ(redactSecretInText("Authorization: Bearer sk-other-value\nnext", ""),
              "Authorization: Bearer [redacted]\nnext");
    EXPECT_EQ(redactSecretInText("authorization=Basic dXNlcjpwYXNz;", ""), "authorization=Basic [redacted];");
    EXPECT_EQ(redactSecretInText("AUTHORIZATION:tok123", ""), "AUTHORIZATION:[redacted]");
    EXPECT_EQ(redactSecretInText("{\"x-api-key\": \"sk-ant-xyz\", \"n\": 1}", ""),
              "{\"x-api-key\": \"[redacted]\", \"n\": 1}");
    EXPECT_EQ(redactSecretInText("X-Api-Key: abc def", ""), "X-Api-Key: [redacted] def");
    // Words that only look like the names stay.
    EXPECT_EQ(redactSecretInText("no authorization needed; x-api-key header", ""),
              "no authorization needed; x-api-key header");
    EXPECT_EQ(redactSecretInText("Authorization: Bearer [redacted]", ""), "Authorization: Bearer [redacted]");
    // Short placeholder keys are not looked for inside replies, only in error texts.
    EXPECT_EQ(redactSecretInReplyText("float x = EMPTY;", "EMPTY"), "float x = EMPTY;");
    EXPECT_EQ(redactSecretInText("bad key EMPTY", "EMPTY"), "bad key [redacted]");
    EXPECT_EQ(redactSecretInReplyText("k " + key, key), "k [redacted]");
}

TEST(LlmSecretRedaction, EveryStringOfAParsedReplyIncludingKeysAndDeepNesting)
{
    const std::string key = "sk-test-0123456789abcdef";
    json reply =
        json::parse(R"({"a": ["x \u0073k-test-0123456789abcdef y", {"sk-test-0123456789abcdef": 1}], "n": 2})");
    redactSecretInReply(reply, key);
    EXPECT_EQ(reply.dump(), R"({"a":["x [redacted] y",{"[redacted]":1}],"n":2})");

    // Nesting deeper than any stack could recurse.
    const int depth = 200000;
    std::string deep = std::string(depth, '[') + "\"" + key + "\"" + std::string(depth, ']');
    json nested = json::parse(deep);
    redactSecretInReply(nested, key);
    const json* inner = &nested;
    while (inner->is_array() && !inner->empty())
        inner = &inner->front();
    EXPECT_EQ(*inner, "[redacted]");
}

struct Wire {
    LlmProvider provider;
    const char* keyEnv;
    std::string requestIdHeader;
    // A successful reply body carrying `text` and `model`, written out by hand so the test controls
    // the escaping.
    std::string (*body)(const std::string& textJson, const std::string& modelJson);
};

std::string openAiBody(const std::string& textJson, const std::string& modelJson)
{
    return R"({"id": "chatcmpl-1", "model": )" + modelJson +
        R"(, "choices": [{"index": 0, "message": {"role": "assistant", "content": )" + textJson +
        R"(}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 4}})";
}

std::string anthropicBody(const std::string& textJson, const std::string& modelJson)
{
    return R"({"id": "msg_1", "type": "message", "role": "assistant", "model": )" + modelJson +
        R"(, "content": [{"type": "text", "text": )" + textJson +
        R"(}], "stop_reason": "end_turn", "usage": {"input_tokens": 3, "output_tokens": 4}})";
}

class LlmReplyKeyEcho : public ::testing::TestWithParam<Wire> {
protected:
    void SetUp() override
    {
        m_key = "kf-echo-key-" + std::to_string(std::random_device{}()) + "-" + std::to_string(std::random_device{}());
        ::setenv(GetParam().keyEnv, m_key.c_str(), 1);
    }
    void TearDown() override { ::unsetenv(GetParam().keyEnv); }

    std::unique_ptr<LlmClient> client() const
    {
        LlmProviderConfig c = LlmProviderConfig::defaultsFor(GetParam().provider);
        c.baseUrl = GetParam().provider == LlmProvider::Anthropic ? m_server.baseUrl() : m_server.baseUrl() + "/v1";
        c.model = "echo-model";
        c.apiKeyEnv = GetParam().keyEnv;
        c.connectTimeoutMs = 1000;
        c.totalTimeoutMs = 5000;
        c.maxRetries = 0;
        auto made = createLlmClient(c);
        EXPECT_TRUE(made.ok()) << (made.ok() ? "" : made.error().toString());
        return made.ok() ? std::move(made).value() : nullptr;
    }

    static LlmRequest request()
    {
        LlmRequest r;
        r.messages = {{LlmRole::User, "Write a kernel."}};
        return r;
    }

    mutable LoopbackHttpServer m_server;
    std::string m_key;
};

TEST_P(LlmReplyKeyEcho, AReplyThatEchoesTheKeyComesBackWithoutIt)
{
    // The key in the text plainly, JSON-escaped (\u0073 for its first character would not match a
    // search in the raw body), and as a header; the key as the model name and the request id.
    std::string escaped = m_key;
    char first[8];
    std::snprintf(first, sizeof first, "\\u%04x", static_cast<unsigned>(escaped[0]));
    escaped.replace(0, 1, first);
    const std::string text = "```cuda\n// key " + m_key + "\n// again ESCAPED_KEY" +
        "\n// Authorization: Bearer sk-some-other-token\n// x-api-key: sk-ant-other\n```";
    std::string textJson = json(text).dump();
    textJson.replace(textJson.find("ESCAPED_KEY"), 11, escaped);
    ASSERT_EQ(json::parse(textJson).get<std::string>().find("again " + m_key), text.find("again ESCAPED_KEY"));
    ScriptedResponse response;
    response.body = GetParam().body(textJson, json(m_key).dump());
    response.headers = {{GetParam().requestIdHeader, "req-" + m_key}};
    m_server.enqueue(response);

    auto c = client();
    ASSERT_NE(c, nullptr);
    auto reply = c->complete(request(), nullptr);
    ASSERT_TRUE(reply.ok()) << reply.error().toString();
    for (const std::string& field : {reply->text, reply->model, reply->stopReason, reply->requestId}) {
        EXPECT_EQ(field.find(m_key), std::string::npos) << field;
        EXPECT_EQ(field.find(m_key.substr(1)), std::string::npos) << field;
        EXPECT_EQ(field.find("sk-some-other-token"), std::string::npos) << field;
        EXPECT_EQ(field.find("sk-ant-other"), std::string::npos) << field;
    }
    EXPECT_EQ(reply->text,
              "```cuda\n// key [redacted]\n// again [redacted]\n// Authorization: Bearer [redacted]\n"
              "// x-api-key: [redacted]\n```");
    EXPECT_EQ(reply->model, "[redacted]");
    EXPECT_EQ(reply->requestId, "req-[redacted]");

    // The request itself carried the key (the echo was real).
    const auto requests = m_server.requests();
    ASSERT_EQ(requests.size(), 1u);
    bool sent = false;
    for (const auto& [name, value] : requests[0].headers)
        sent = sent || value.find(m_key) != std::string::npos;
    EXPECT_TRUE(sent);
}

TEST_P(LlmReplyKeyEcho, AnErrorThatEchoesAnAuthorizationHeaderComesBackWithoutIt)
{
    ScriptedResponse response;
    response.status = 400;
    response.body =
        R"({"error": {"type": "invalid_request_error", "message": "bad header Authorization: Bearer sk-leaked-elsewhere"}})";
    m_server.enqueue(response);
    auto c = client();
    ASSERT_NE(c, nullptr);
    auto reply = c->complete(request(), nullptr);
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().toString().find("sk-leaked-elsewhere"), std::string::npos) << reply.error().toString();
    EXPECT_NE(reply.error().toString().find("Authorization: Bearer [redacted]"), std::string::npos)
        << reply.error().toString();
}

INSTANTIATE_TEST_SUITE_P(
    Wires, LlmReplyKeyEcho,
    ::testing::Values(Wire{LlmProvider::OpenAiCompatible, "KFORGE_TEST_ECHO_OPENAI_KEY", "x-request-id", openAiBody},
                      Wire{LlmProvider::Anthropic, "KFORGE_TEST_ECHO_ANTHROPIC_KEY", "request-id", anthropicBody}));

} // namespace
} // namespace kforge::core
