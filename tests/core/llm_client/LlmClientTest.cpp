// The LLM clients against a real HTTP server on loopback (LoopbackHttpServer), once per wire
// format: OpenAI Chat Completions and Anthropic Messages.

#include "LoopbackHttpServer.h"

#include "llm_client/AnthropicClient.h"
#include "llm_client/LlmClientFactory.h"
#include "llm_client/OpenAiClient.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <ostream>
#include <random>
#include <thread>

namespace kforge::core {
namespace {

using test::LoopbackHttpServer;
using test::RecordedRequest;
using test::ScriptedResponse;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr const char* kModel = "test-model-1";

std::int64_t msSince(Clock::time_point t)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

// What differs between the two wire formats, as the tests need it.
struct Wire {
    LlmProvider provider;
    const char* name;
    const char* path;
    const char* keyEnv;
    std::function<std::string(const std::string& text, int in, int out)> successBody;
    std::string noTextBody;
    std::function<std::string(const std::string& message)> errorBody;
    std::string requestIdHeader;
    // The header that carries the key, and its value for `key`.
    std::string authHeader;
    std::function<std::string(const std::string& key)> authValue;
};

void PrintTo(const Wire& wire, std::ostream* os)
{
    *os << wire.name;
}

Wire openAiWire()
{
    return Wire{
        LlmProvider::OpenAiCompatible,
        "OpenAi",
        "/v1/chat/completions",
        "KFORGE_TEST_OPENAI_KEY",
        [](const std::string& text, int in, int out) {
            return json{
                {"id", "chatcmpl-123"},
                {"object", "chat.completion"},
                {"created", 1700000000},
                {"model", kModel},
                {"choices",
                 {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", "stop"}}}},
                {"usage", {{"prompt_tokens", in}, {"completion_tokens", out}, {"total_tokens", in + out}}}}
                .dump();
        },
        json{
            {"id", "chatcmpl-9"},
            {"model", kModel},
            {"choices",
             {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", nullptr}}}, {"finish_reason", "length"}}}},
            {"usage", {{"prompt_tokens", 5}, {"completion_tokens", 0}}}}
            .dump(),
        [](const std::string& message) {
            return json{
                {"error",
                 {{"message", message}, {"type", "invalid_request_error"}, {"param", nullptr}, {"code", nullptr}}}}
                .dump();
        },
        "x-request-id",
        "authorization",
        [](const std::string& key) { return "Bearer " + key; },
    };
}

Wire anthropicWire()
{
    return Wire{
        LlmProvider::Anthropic,
        "Anthropic",
        "/v1/messages",
        "KFORGE_TEST_ANTHROPIC_KEY",
        [](const std::string& text, int in, int out) {
            return json{{"id", "msg_013"},
                        {"type", "message"},
                        {"role", "assistant"},
                        {"model", kModel},
                        {"content", {{{"type", "text"}, {"text", text}}}},
                        {"stop_reason", "end_turn"},
                        {"stop_sequence", nullptr},
                        {"usage", {{"input_tokens", in}, {"output_tokens", out}}}}
                .dump();
        },
        json{{"id", "msg_9"},
             {"type", "message"},
             {"role", "assistant"},
             {"model", kModel},
             {"content", json::array({{{"type", "tool_use"}, {"id", "t1"}, {"name", "x"}, {"input", json::object()}}})},
             {"stop_reason", "tool_use"},
             {"usage", {{"input_tokens", 5}, {"output_tokens", 3}}}}
            .dump(),
        [](const std::string& message) {
            return json{{"type", "error"}, {"error", {{"type", "invalid_request_error"}, {"message", message}}}}.dump();
        },
        "request-id",
        "x-api-key",
        [](const std::string& key) { return key; },
    };
}

class LlmClientTest : public ::testing::TestWithParam<Wire> {
protected:
    void SetUp() override
    {
        m_key = "kf-test-key-" + std::to_string(std::random_device{}()) + "-" + std::to_string(std::random_device{}());
        ::setenv(GetParam().keyEnv, m_key.c_str(), 1);
    }
    void TearDown() override { ::unsetenv(GetParam().keyEnv); }

    LlmProviderConfig config(int maxRetries = 2) const
    {
        LlmProviderConfig c = LlmProviderConfig::defaultsFor(GetParam().provider);
        c.baseUrl = GetParam().provider == LlmProvider::Anthropic ? m_server.baseUrl() : m_server.baseUrl() + "/v1/";
        c.model = kModel;
        c.apiKeyEnv = GetParam().keyEnv;
        c.connectTimeoutMs = 1000;
        c.totalTimeoutMs = 5000;
        c.maxRetries = maxRetries;
        c.backoffInitialMs = 10;
        c.backoffMaxMs = 40;
        c.jitterSeed = 7;
        c.prices[kModel] = LlmModelPrice{2.0, 10.0};
        return c;
    }

    std::unique_ptr<LlmClient> client(const LlmProviderConfig& c) const
    {
        auto made = createLlmClient(c);
        EXPECT_TRUE(made.ok()) << (made.ok() ? "" : made.error().toString());
        return made.ok() ? std::move(made).value() : nullptr;
    }

    static LlmRequest request()
    {
        LlmRequest r;
        r.systemPrompt = "You write CUDA kernels.";
        r.messages = {{LlmRole::User, "Write a softmax kernel."}};
        r.maxTokens = 321;
        r.temperature = 0.25;
        return r;
    }

    ScriptedResponse ok(const std::string& text = "__global__ void k() {}", int in = 1000, int out = 500) const
    {
        ScriptedResponse r;
        r.body = GetParam().successBody(text, in, out);
        r.headers = {{GetParam().requestIdHeader, "req-abc"}};
        return r;
    }

    static ScriptedResponse status(int code, std::string body = R"({"error":{"message":"busy"}})")
    {
        ScriptedResponse r;
        r.status = code;
        r.body = std::move(body);
        return r;
    }

    mutable LoopbackHttpServer m_server;
    std::string m_key;
};

TEST_P(LlmClientTest, SuccessCarriesTextTokensCostAndSpeaksTheWireFormat)
{
    m_server.enqueue(ok("THE KERNEL", 1000, 500));
    auto c = client(config());
    auto reply = c->complete(request(), nullptr);
    ASSERT_TRUE(reply.ok()) << reply.error().toString();
    EXPECT_EQ(reply->text, "THE KERNEL");
    EXPECT_EQ(reply->model, kModel);
    EXPECT_EQ(reply->inputTokens, 1000);
    EXPECT_EQ(reply->outputTokens, 500);
    EXPECT_TRUE(reply->costKnown);
    EXPECT_NEAR(reply->costUsd, 1000 * 2.0 / 1e6 + 500 * 10.0 / 1e6, 1e-12);
    EXPECT_EQ(reply->attempts, 1);
    EXPECT_EQ(reply->requestId, "req-abc");
    EXPECT_FALSE(reply->stopReason.empty());
    EXPECT_GE(reply->latencyMs, 0);

    const auto requests = m_server.requests();
    ASSERT_EQ(requests.size(), 1u);
    const RecordedRequest& r = requests[0];
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.path, GetParam().path);
    EXPECT_EQ(r.header("content-type"), "application/json");
    EXPECT_EQ(r.header(GetParam().authHeader), GetParam().authValue(m_key));
    const json body = json::parse(r.body);
    EXPECT_EQ(body.at("model"), kModel);
    EXPECT_DOUBLE_EQ(body.at("temperature").get<double>(), 0.25);
    if (GetParam().provider == LlmProvider::Anthropic) {
        EXPECT_EQ(r.header("anthropic-version"), "2023-06-01");
        EXPECT_EQ(body.at("system"), "You write CUDA kernels.");
        EXPECT_EQ(body.at("max_tokens"), 321);
        ASSERT_EQ(body.at("messages").size(), 1u);
        EXPECT_EQ(body.at("messages")[0], (json{{"role", "user"}, {"content", "Write a softmax kernel."}}));
    } else {
        EXPECT_EQ(body.at("max_tokens"), 321);
        ASSERT_EQ(body.at("messages").size(), 2u);
        EXPECT_EQ(body.at("messages")[0], (json{{"role", "system"}, {"content", "You write CUDA kernels."}}));
        EXPECT_EQ(body.at("messages")[1], (json{{"role", "user"}, {"content", "Write a softmax kernel."}}));
        EXPECT_FALSE(body.contains("system"));
    }
}

TEST_P(LlmClientTest, UnknownPriceIsMarkedUnknown)
{
    m_server.enqueue(ok());
    auto c = config();
    c.prices.clear();
    c.prices["another-model"] = LlmModelPrice{1.0, 1.0};
    auto reply = client(c)->complete(request(), nullptr);
    ASSERT_TRUE(reply.ok()) << reply.error().toString();
    EXPECT_FALSE(reply->costKnown);
    EXPECT_EQ(reply->costUsd, 0.0);
}

TEST_P(LlmClientTest, RateLimitHonoursRetryAfterThenSucceeds)
{
    ScriptedResponse limited = status(429, GetParam().errorBody("rate limited"));
    limited.headers = {{"Retry-After", "1"}};
    m_server.enqueue(limited);
    m_server.enqueue(ok("after the wait"));
    const auto start = Clock::now();
    auto reply = client(config())->complete(request(), nullptr);
    const auto elapsed = msSince(start);
    ASSERT_TRUE(reply.ok()) << reply.error().toString();
    EXPECT_EQ(reply->text, "after the wait");
    EXPECT_EQ(reply->attempts, 2);
    // The configured backoff is at most 40 ms, so only Retry-After explains a 1 s wait.
    EXPECT_GE(elapsed, 950);
    EXPECT_LT(elapsed, 3000);
    EXPECT_GE(reply->latencyMs, 950);
    EXPECT_EQ(m_server.requests().size(), 2u);
}

TEST_P(LlmClientTest, ServerErrorsAreRetriedUntilSuccess)
{
    m_server.enqueue(status(500));
    m_server.enqueue(status(503));
    m_server.enqueue(ok("third time"));
    auto reply = client(config(2))->complete(request(), nullptr);
    ASSERT_TRUE(reply.ok()) << reply.error().toString();
    EXPECT_EQ(reply->text, "third time");
    EXPECT_EQ(reply->attempts, 3);
    EXPECT_EQ(m_server.requests().size(), 3u);
}

TEST_P(LlmClientTest, ServerErrorsBeyondTheRetryLimitFailNamingTheStatus)
{
    for (int i = 0; i < 4; ++i)
        m_server.enqueue(status(500, GetParam().errorBody("the model crashed")));
    auto reply = client(config(2))->complete(request(), nullptr);
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().code, ErrorCode::Io);
    const std::string text = reply.error().toString();
    EXPECT_NE(text.find("HTTP 500"), std::string::npos) << text;
    EXPECT_NE(text.find("the model crashed"), std::string::npos) << text;
    EXPECT_NE(text.find("gave up after 3 attempts"), std::string::npos) << text;
    EXPECT_NE(text.find(kModel), std::string::npos) << text;
    EXPECT_EQ(m_server.requests().size(), 3u);
}

TEST_P(LlmClientTest, SlowServerTimesOutWithinTheLimit)
{
    ScriptedResponse slow = ok();
    slow.delay = std::chrono::milliseconds(4000);
    m_server.enqueue(slow);
    auto c = config();
    c.totalTimeoutMs = 300;
    const auto start = Clock::now();
    auto reply = client(c)->complete(request(), nullptr);
    const auto elapsed = msSince(start);
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().code, ErrorCode::Io);
    EXPECT_NE(reply.error().message.find("timed out after 300 ms"), std::string::npos) << reply.error().toString();
    EXPECT_GE(elapsed, 280);
    EXPECT_LT(elapsed, 300 + 700);
    EXPECT_EQ(m_server.requests().size(), 1u); // a total timeout is not retried
}

TEST_P(LlmClientTest, MalformedJsonIsAClearError)
{
    ScriptedResponse bad;
    bad.body = R"({"choices": [ {"message": )";
    m_server.enqueue(bad);
    auto reply = client(config())->complete(request(), nullptr);
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().code, ErrorCode::Io);
    EXPECT_NE(reply.error().message.find("malformed JSON in reply"), std::string::npos) << reply.error().toString();
    EXPECT_EQ(m_server.requests().size(), 1u);
}

TEST_P(LlmClientTest, JsonOfTheWrongShapeIsAClearError)
{
    ScriptedResponse bad;
    bad.body = R"({"unexpected": true})";
    m_server.enqueue(bad);
    auto reply = client(config())->complete(request(), nullptr);
    ASSERT_FALSE(reply.ok());
    EXPECT_NE(reply.error().message.find("malformed reply"), std::string::npos) << reply.error().toString();
}

TEST_P(LlmClientTest, ReplyWithoutTextIsAnError)
{
    ScriptedResponse empty;
    empty.body = GetParam().noTextBody;
    m_server.enqueue(empty);
    auto reply = client(config())->complete(request(), nullptr);
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().code, ErrorCode::Io);
    EXPECT_NE(reply.error().message.find("reply without text"), std::string::npos) << reply.error().toString();
}

TEST_P(LlmClientTest, ClientErrorCarriesTheProviderMessageAndIsNotRetried)
{
    m_server.enqueue(status(400, GetParam().errorBody("max_tokens: must be at most 8192")));
    m_server.enqueue(ok()); // would be taken by a (wrong) retry
    auto reply = client(config(3))->complete(request(), nullptr);
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().code, ErrorCode::InvalidArgument);
    const std::string text = reply.error().toString();
    EXPECT_NE(text.find("HTTP 400"), std::string::npos) << text;
    EXPECT_NE(text.find("max_tokens: must be at most 8192"), std::string::npos) << text;
    EXPECT_NE(text.find("invalid_request_error"), std::string::npos) << text;
    EXPECT_NE(text.find("not retried"), std::string::npos) << text;
    EXPECT_EQ(m_server.requests().size(), 1u);
}

TEST_P(LlmClientTest, CancellationDuringASlowResponseReturnsPromptly)
{
    ScriptedResponse slow = ok();
    slow.delay = std::chrono::milliseconds(5000);
    m_server.enqueue(slow);
    auto c = client(config());
    std::atomic<bool> cancel{false};
    Clock::time_point cancelledAt;
    std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        cancelledAt = Clock::now();
        cancel = true;
    });
    const auto start = Clock::now();
    auto reply = c->complete(request(), &cancel);
    const auto returnedAt = Clock::now();
    canceller.join();
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().code, ErrorCode::Cancelled) << reply.error().toString();
    EXPECT_GE(std::chrono::duration_cast<std::chrono::milliseconds>(returnedAt - start).count(), 250);
    EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(returnedAt - cancelledAt).count(), 500);
    EXPECT_EQ(m_server.requests().size(), 1u);
}

TEST_P(LlmClientTest, CancellationDuringBackoffReturnsPromptly)
{
    ScriptedResponse limited = status(429);
    limited.headers = {{"Retry-After", "30"}};
    m_server.enqueue(limited);
    auto c = config();
    c.retryAfterMaxMs = 60'000;
    std::atomic<bool> cancel{false};
    std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        cancel = true;
    });
    const auto start = Clock::now();
    auto reply = client(c)->complete(request(), &cancel);
    const auto elapsed = msSince(start);
    canceller.join();
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().code, ErrorCode::Cancelled);
    EXPECT_LT(elapsed, 800);
    EXPECT_EQ(m_server.requests().size(), 1u);
}

TEST_P(LlmClientTest, RetryAfterIsCappedByTheConfig)
{
    ScriptedResponse limited = status(429);
    limited.headers = {{"Retry-After", "30"}};
    m_server.enqueue(limited);
    m_server.enqueue(ok());
    auto c = config();
    c.retryAfterMaxMs = 100;
    const auto start = Clock::now();
    auto reply = client(c)->complete(request(), nullptr);
    ASSERT_TRUE(reply.ok()) << reply.error().toString();
    EXPECT_EQ(reply->attempts, 2);
    EXPECT_LT(msSince(start), 1000);
}

TEST_P(LlmClientTest, ConnectionFailuresAreRetriedThenReported)
{
    int closedPort = 0;
    {
        LoopbackHttpServer gone;
        closedPort = gone.port();
    }
    auto c = config(2);
    c.baseUrl =
        "http://127.0.0.1:" + std::to_string(closedPort) + (GetParam().provider == LlmProvider::Anthropic ? "" : "/v1");
    auto reply = client(c)->complete(request(), nullptr);
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().code, ErrorCode::Io);
    EXPECT_NE(reply.error().message.find("connection failed"), std::string::npos) << reply.error().toString();
    EXPECT_NE(reply.error().message.find("gave up after 3 attempts"), std::string::npos) << reply.error().toString();
}

// The key goes into the auth header and nowhere else: not the body, path or other headers, not
// any error (even when a server echoes it back), not any reply field.
TEST_P(LlmClientTest, ApiKeyAppearsOnlyInTheAuthHeader)
{
    auto c = client(config(1));
    std::vector<std::string> seen; // every text the client handed back

    m_server.enqueue(ok("text", 10, 20));
    auto good = c->complete(request(), nullptr);
    ASSERT_TRUE(good.ok()) << good.error().toString();
    seen.insert(seen.end(), {good->text, good->model, good->stopReason, good->requestId});

    m_server.enqueue(status(401, GetParam().errorBody("invalid key " + m_key)));
    m_server.enqueue(status(500, GetParam().errorBody("echo " + m_key)));
    m_server.enqueue(status(500, GetParam().errorBody("echo " + m_key)));
    ScriptedResponse malformed;
    malformed.body = "not json " + m_key;
    m_server.enqueue(malformed);
    ScriptedResponse noText;
    noText.body = GetParam().noTextBody;
    m_server.enqueue(noText);
    for (int i = 0; i < 4; ++i) {
        auto bad = c->complete(request(), nullptr);
        ASSERT_FALSE(bad.ok());
        seen.push_back(bad.error().toString());
    }
    // The echoed key shows up redacted.
    EXPECT_NE(seen[4].find("invalid key [redacted]"), std::string::npos) << seen[4];

    for (const std::string& s : seen)
        EXPECT_EQ(s.find(m_key), std::string::npos) << s;

    const auto requests = m_server.requests();
    ASSERT_EQ(requests.size(), 6u);
    for (const RecordedRequest& r : requests) {
        EXPECT_EQ(r.path.find(m_key), std::string::npos);
        EXPECT_EQ(r.body.find(m_key), std::string::npos);
        int carriers = 0;
        for (const auto& [name, value] : r.headers) {
            if (value.find(m_key) == std::string::npos)
                continue;
            ++carriers;
            EXPECT_EQ(name, GetParam().authHeader);
            EXPECT_EQ(value, GetParam().authValue(m_key));
        }
        EXPECT_EQ(carriers, 1);
    }
}

TEST_P(LlmClientTest, MissingKeyVariable)
{
    ::unsetenv(GetParam().keyEnv);
    m_server.enqueue(ok());
    auto reply = client(config())->complete(request(), nullptr);
    if (GetParam().provider == LlmProvider::Anthropic) {
        // The API refuses anonymous requests: fail before sending anything.
        ASSERT_FALSE(reply.ok());
        EXPECT_EQ(reply.error().code, ErrorCode::InvalidArgument);
        EXPECT_NE(reply.error().message.find(GetParam().keyEnv), std::string::npos) << reply.error().toString();
        EXPECT_TRUE(m_server.requests().empty());
    } else {
        // Local OpenAI-compatible servers need no key: the request goes out without auth.
        ASSERT_TRUE(reply.ok()) << reply.error().toString();
        ASSERT_EQ(m_server.requests().size(), 1u);
        EXPECT_EQ(m_server.requests()[0].header("authorization"), "");
    }
}

TEST_P(LlmClientTest, RequestWithoutMessagesIsRejectedLocally)
{
    LlmRequest empty;
    auto reply = client(config())->complete(empty, nullptr);
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().code, ErrorCode::InvalidArgument);
    EXPECT_TRUE(m_server.requests().empty());
}

TEST_P(LlmClientTest, OneClientServesSeveralThreads)
{
    constexpr int kThreads = 4;
    for (int i = 0; i < kThreads; ++i)
        m_server.enqueue(ok("same"));
    auto c = client(config());
    std::vector<std::thread> threads;
    std::atomic<int> successes{0};
    for (int i = 0; i < kThreads; ++i) {
        threads.emplace_back([&] {
            auto reply = c->complete(request(), nullptr);
            if (reply.ok() && reply->text == "same")
                ++successes;
        });
    }
    for (auto& t : threads)
        t.join();
    EXPECT_EQ(successes.load(), kThreads);
}

INSTANTIATE_TEST_SUITE_P(Wires, LlmClientTest, ::testing::Values(openAiWire(), anthropicWire()),
                         [](const ::testing::TestParamInfo<Wire>& info) { return std::string(info.param.name); });

TEST(OpenAiCompatibleClient, MaxCompletionTokensFieldAndNoTemperature)
{
    LlmProviderConfig c = LlmProviderConfig::defaultsFor(LlmProvider::OpenAiCompatible);
    c.model = "o-model";
    c.maxTokensField = "max_completion_tokens";
    OpenAiCompatibleClient client(c);
    LlmRequest r;
    r.messages = {{LlmRole::User, "hi"}, {LlmRole::Assistant, "hello"}, {LlmRole::User, "again"}};
    r.maxTokens = 99;
    const json body = client.requestBody(r);
    EXPECT_EQ(body.at("max_completion_tokens"), 99);
    EXPECT_FALSE(body.contains("max_tokens"));
    EXPECT_FALSE(body.contains("temperature"));
    ASSERT_EQ(body.at("messages").size(), 3u); // no system message when the prompt is empty
    EXPECT_EQ(body.at("messages")[1].at("role"), "assistant");
}

TEST(LlmClientFactory, RejectsAnInvalidConfig)
{
    LlmProviderConfig c = LlmProviderConfig::defaultsFor(LlmProvider::Anthropic);
    auto made = createLlmClient(c); // no model
    ASSERT_FALSE(made.ok());
    EXPECT_NE(made.error().message.find("model"), std::string::npos);
}

} // namespace
} // namespace kforge::core
