#pragma once
// Configuration of one LLM provider endpoint, and its JSON form (docs/llm-providers.md).
//
// Secrets: a config names the environment variable that holds the API key (apiKeyEnv), never
// the key. The JSON reader rejects any key-like field ("api_key", "token", "authorization", ...)
// and an api_key_env value that is not a valid variable name (it may be a pasted key), without
// echoing the value, so a config file can be committed, exported and shown in the GUI.

#include "util/Result.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kforge::core {

enum class LlmProvider { OpenAiCompatible, Anthropic };

/// USD per million tokens, as providers publish prices.
struct LlmModelPrice {
    double inputUsdPerMTok = 0.0;
    double outputUsdPerMTok = 0.0;

    bool operator==(const LlmModelPrice&) const = default;
};

struct LlmProviderConfig {
    LlmProvider provider = LlmProvider::OpenAiCompatible;
    /// Without the endpoint path: "https://api.openai.com/v1" (the client appends
    /// /chat/completions), "https://api.anthropic.com" (the client appends /v1/messages),
    /// "http://127.0.0.1:8000/v1" for vLLM, "http://127.0.0.1:11434/v1" for Ollama.
    std::string baseUrl;
    std::string model;
    /// Name of the environment variable read at each request. Empty, or a variable that is not
    /// set: no key is sent (fine for local OpenAI-compatible servers; Anthropic needs one).
    std::string apiKeyEnv;

    std::int64_t connectTimeoutMs = 10'000;
    /// One HTTP attempt, connect to last byte. Generation of a long kernel can take minutes.
    std::int64_t totalTimeoutMs = 300'000;

    /// Retries after the first attempt on 429, 5xx and connection failures.
    int maxRetries = 4;
    /// Backoff before retry n (1-based): min(backoffMaxMs, backoffInitialMs * 2^(n-1)), of which
    /// the upper half is jitter. A Retry-After header overrides it, up to retryAfterMaxMs.
    std::int64_t backoffInitialMs = 1'000;
    std::int64_t backoffMaxMs = 30'000;
    std::int64_t retryAfterMaxMs = 120'000;
    std::uint64_t jitterSeed = 0; // the jitter RNG seed: runs are reproducible

    /// OpenAI-compatible only: the request field for the token limit. "max_tokens" is what vLLM,
    /// Ollama and llama.cpp understand; OpenAI's reasoning models want "max_completion_tokens".
    std::string maxTokensField = "max_tokens";
    /// Anthropic only: the anthropic-version header.
    std::string anthropicVersion = "2023-06-01";

    /// Model name -> price. Looked up by the model the reply names, then by `model`.
    std::map<std::string, LlmModelPrice> prices;

    bool operator==(const LlmProviderConfig&) const = default;

    /// A config for `provider` with its public endpoint and usual key variable filled in.
    static LlmProviderConfig defaultsFor(LlmProvider provider);

    /// Checks ranges and forms; InvalidArgument naming the field otherwise.
    Result<void> validate() const;

    /// The price for a reply from `replyModel`, if the table has one.
    std::optional<LlmModelPrice> priceFor(const std::string& replyModel) const;
};

const char* llmProviderName(LlmProvider provider); // "openai" / "anthropic"
Result<LlmProvider> parseLlmProvider(const std::string& name);

/// Every field, with its JSON name (docs/llm-providers.md).
nlohmann::json llmConfigToJson(const LlmProviderConfig& config);

/// Missing fields take defaultsFor(provider)'s values; "provider" is required. Unknown fields,
/// key-like fields and invalid values are rejected with one line naming the field.
Result<LlmProviderConfig> llmConfigFromJson(const nlohmann::json& json);

} // namespace kforge::core
