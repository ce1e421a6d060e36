#include "llm_client/LlmConfig.h"

#include <gtest/gtest.h>

namespace kforge::core {
namespace {

using nlohmann::json;

TEST(LlmConfig, JsonRoundTripKeepsEveryField)
{
    LlmProviderConfig c = LlmProviderConfig::defaultsFor(LlmProvider::Anthropic);
    c.baseUrl = "http://127.0.0.1:9999";
    c.model = "claude-x";
    c.apiKeyEnv = "MY_ANTHROPIC_KEY";
    c.connectTimeoutMs = 1234;
    c.totalTimeoutMs = 56789;
    c.maxRetries = 7;
    c.backoffInitialMs = 11;
    c.backoffMaxMs = 222;
    c.retryAfterMaxMs = 3333;
    c.jitterSeed = 42;
    c.maxTokensField = "max_completion_tokens";
    c.anthropicVersion = "2023-06-01";
    c.prices["claude-x"] = LlmModelPrice{3.0, 15.0};
    c.prices["claude-y"] = LlmModelPrice{0.25, 1.25};

    const json j = llmConfigToJson(c);
    EXPECT_EQ(j.at("provider"), "anthropic");
    EXPECT_EQ(j.at("api_key_env"), "MY_ANTHROPIC_KEY");
    auto back = llmConfigFromJson(json::parse(j.dump()));
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(*back, c);
}

TEST(LlmConfig, MissingFieldsTakeTheProviderDefaults)
{
    auto c = llmConfigFromJson(json{{"provider", "openai"}, {"model", "gpt-x"}});
    ASSERT_TRUE(c.ok()) << c.error().toString();
    EXPECT_EQ(c->provider, LlmProvider::OpenAiCompatible);
    EXPECT_EQ(c->baseUrl, "https://api.openai.com/v1");
    EXPECT_EQ(c->apiKeyEnv, "OPENAI_API_KEY");
    EXPECT_EQ(c->maxTokensField, "max_tokens");
    EXPECT_TRUE(c->prices.empty());

    auto a = llmConfigFromJson(json{{"provider", "anthropic"}, {"model", "claude-x"}});
    ASSERT_TRUE(a.ok()) << a.error().toString();
    EXPECT_EQ(a->baseUrl, "https://api.anthropic.com");
    EXPECT_EQ(a->apiKeyEnv, "ANTHROPIC_API_KEY");
}

TEST(LlmConfig, InlineKeyFieldsAreRejectedPointingToApiKeyEnv)
{
    const std::string secret = "sk-live-0123456789abcdef";
    for (const char* field : {"api_key", "apiKey", "API-KEY", "x-api-key", "token", "authorization", "secret"}) {
        auto c = llmConfigFromJson(json{{"provider", "openai"}, {"model", "m"}, {field, secret}});
        ASSERT_FALSE(c.ok()) << field;
        EXPECT_EQ(c.error().code, ErrorCode::InvalidArgument);
        const std::string text = c.error().toString();
        EXPECT_NE(text.find("api_key_env"), std::string::npos) << text;
        EXPECT_NE(text.find(field), std::string::npos) << text;
        EXPECT_EQ(text.find(secret), std::string::npos) << text;
    }
}

TEST(LlmConfig, AKeyPastedIntoApiKeyEnvIsRejectedWithoutEchoingIt)
{
    const std::string secret = "sk-proj-AbC123-xyz";
    auto c = llmConfigFromJson(json{{"provider", "openai"}, {"model", "m"}, {"api_key_env", secret}});
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().message.find("NAME of an environment variable"), std::string::npos) << c.error().toString();
    EXPECT_EQ(c.error().toString().find(secret), std::string::npos);
}

TEST(LlmConfig, BadValuesAreRejectedNamingTheField)
{
    struct Case {
        json j;
        const char* expected;
    };
    const Case cases[] = {
        {json{{"model", "m"}}, "provider"},
        {json{{"provider", "gemini"}, {"model", "m"}}, "unknown provider"},
        {json{{"provider", "openai"}}, "model"},
        {json{{"provider", "openai"}, {"model", "m"}, {"base_url", "ftp://x"}}, "base_url"},
        {json{{"provider", "openai"}, {"model", "m"}, {"max_retries", "three"}}, "max_retries"},
        {json{{"provider", "openai"}, {"model", "m"}, {"max_retries", 99}}, "max_retries"},
        {json{{"provider", "openai"}, {"model", "m"}, {"total_timeout_ms", 0}}, "total_timeout_ms"},
        {json{{"provider", "openai"}, {"model", "m"}, {"base_ur", "http://x"}}, "unknown field \"base_ur\""},
        {json{{"provider", "openai"}, {"model", "m"}, {"prices", {{"m", {{"input_usd_per_mtok", 1}}}}}},
         "price of model"},
        {json{{"provider", "openai"}, {"model", "m"}, {"max_tokens_field", "n"}}, "max_tokens_field"},
        {json::array(), "JSON object"},
    };
    for (const Case& c : cases) {
        auto r = llmConfigFromJson(c.j);
        ASSERT_FALSE(r.ok()) << c.j.dump();
        EXPECT_EQ(r.error().code, ErrorCode::InvalidArgument);
        EXPECT_NE(r.error().toString().find(c.expected), std::string::npos) << r.error().toString();
    }
}

TEST(LlmConfig, PriceLookupPrefersTheReplyModel)
{
    LlmProviderConfig c = LlmProviderConfig::defaultsFor(LlmProvider::OpenAiCompatible);
    c.model = "gpt-x";
    c.prices["gpt-x"] = LlmModelPrice{1.0, 2.0};
    c.prices["gpt-x-2024"] = LlmModelPrice{3.0, 4.0};
    EXPECT_EQ(c.priceFor("gpt-x-2024")->inputUsdPerMTok, 3.0);
    EXPECT_EQ(c.priceFor("gpt-x-2099")->inputUsdPerMTok, 1.0); // falls back to the configured model
    c.prices.erase("gpt-x");
    EXPECT_FALSE(c.priceFor("gpt-x-2099").has_value());
}

} // namespace
} // namespace kforge::core
