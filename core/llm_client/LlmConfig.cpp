#include "llm_client/LlmConfig.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace kforge::core {

namespace {

constexpr const char* kContext = "llm config";

Error configError(std::string message)
{
    return makeError(ErrorCode::InvalidArgument, std::move(message), kContext);
}

bool isEnvVarName(const std::string& name)
{
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
        return false;
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Field names that would hold a secret. Compared after lower-casing and dropping '-' and '_', so
// "API-Key", "apiKey" and "x_api_key" all match.
bool looksLikeSecretField(const std::string& field)
{
    std::string folded;
    for (char c : field) {
        if (c != '-' && c != '_')
            folded.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
    static constexpr std::array<std::string_view, 14> kSecretNames = {
        "apikey",      "xapikey", "key",       "secret",        "secretkey", "token",        "accesstoken",
        "bearertoken", "bearer",  "authtoken", "authorization", "password",  "openaiapikey", "anthropicapikey",
    };
    return std::find(kSecretNames.begin(), kSecretNames.end(), folded) != kSecretNames.end();
}

template <class T>
Result<void> readField(const nlohmann::json& json, const char* name, T& out)
{
    auto it = json.find(name);
    if (it == json.end())
        return {};
    try {
        out = it->get<T>();
    } catch (const nlohmann::json::exception&) {
        return configError(std::string("field \"") + name + "\" has the wrong type (" + it->type_name() + ")");
    }
    return {};
}

} // namespace

const char* llmProviderName(LlmProvider provider)
{
    switch (provider) {
    case LlmProvider::OpenAiCompatible:
        return "openai";
    case LlmProvider::Anthropic:
        return "anthropic";
    }
    return "unknown";
}

Result<LlmProvider> parseLlmProvider(const std::string& name)
{
    if (name == "openai")
        return LlmProvider::OpenAiCompatible;
    if (name == "anthropic")
        return LlmProvider::Anthropic;
    return configError("unknown provider \"" + name + "\" (expected \"openai\" or \"anthropic\")");
}

LlmProviderConfig LlmProviderConfig::defaultsFor(LlmProvider provider)
{
    LlmProviderConfig config;
    config.provider = provider;
    if (provider == LlmProvider::Anthropic) {
        config.baseUrl = "https://api.anthropic.com";
        config.apiKeyEnv = "ANTHROPIC_API_KEY";
    } else {
        config.baseUrl = "https://api.openai.com/v1";
        config.apiKeyEnv = "OPENAI_API_KEY";
    }
    return config;
}

Result<void> LlmProviderConfig::validate() const
{
    if (baseUrl.rfind("http://", 0) != 0 && baseUrl.rfind("https://", 0) != 0)
        return configError("base_url must start with http:// or https://");
    if (model.empty())
        return configError("model is empty");
    if (!apiKeyEnv.empty() && !isEnvVarName(apiKeyEnv)) {
        // Deliberately not echoed: the usual mistake is pasting the key itself here.
        return configError("api_key_env must be the NAME of an environment variable (letters, digits, '_'; "
                           "e.g. OPENAI_API_KEY), not the key itself");
    }
    if (connectTimeoutMs <= 0 || totalTimeoutMs <= 0)
        return configError("connect_timeout_ms and total_timeout_ms must be positive");
    if (maxRetries < 0 || maxRetries > 20)
        return configError("max_retries must be between 0 and 20");
    if (backoffInitialMs < 0 || backoffMaxMs < backoffInitialMs || retryAfterMaxMs < 0)
        return configError("backoff needs 0 <= backoff_initial_ms <= backoff_max_ms and retry_after_max_ms >= 0");
    if (maxTokensField != "max_tokens" && maxTokensField != "max_completion_tokens")
        return configError("max_tokens_field must be \"max_tokens\" or \"max_completion_tokens\"");
    if (anthropicVersion.empty())
        return configError("anthropic_version is empty");
    for (const auto& [name, price] : prices) {
        if (price.inputUsdPerMTok < 0 || price.outputUsdPerMTok < 0)
            return configError("price of model \"" + name + "\" is negative");
    }
    return {};
}

std::optional<LlmModelPrice> LlmProviderConfig::priceFor(const std::string& replyModel) const
{
    if (auto it = prices.find(replyModel); it != prices.end())
        return it->second;
    if (auto it = prices.find(model); it != prices.end())
        return it->second;
    return std::nullopt;
}

nlohmann::json llmConfigToJson(const LlmProviderConfig& config)
{
    nlohmann::json prices = nlohmann::json::object();
    for (const auto& [name, price] : config.prices)
        prices[name] = {{"input_usd_per_mtok", price.inputUsdPerMTok}, {"output_usd_per_mtok", price.outputUsdPerMTok}};
    return {
        {"provider", llmProviderName(config.provider)},
        {"base_url", config.baseUrl},
        {"model", config.model},
        {"api_key_env", config.apiKeyEnv},
        {"connect_timeout_ms", config.connectTimeoutMs},
        {"total_timeout_ms", config.totalTimeoutMs},
        {"max_retries", config.maxRetries},
        {"backoff_initial_ms", config.backoffInitialMs},
        {"backoff_max_ms", config.backoffMaxMs},
        {"retry_after_max_ms", config.retryAfterMaxMs},
        {"jitter_seed", config.jitterSeed},
        {"max_tokens_field", config.maxTokensField},
        {"anthropic_version", config.anthropicVersion},
        {"prices", prices},
    };
}

Result<LlmProviderConfig> llmConfigFromJson(const nlohmann::json& json)
{
    if (!json.is_object())
        return configError("expected a JSON object");

    static constexpr std::array<std::string_view, 14> kKnown = {
        "provider",
        "base_url",
        "model",
        "api_key_env",
        "connect_timeout_ms",
        "total_timeout_ms",
        "max_retries",
        "backoff_initial_ms",
        "backoff_max_ms",
        "retry_after_max_ms",
        "jitter_seed",
        "max_tokens_field",
        "anthropic_version",
        "prices",
    };
    for (const auto& [field, value] : json.items()) {
        if (looksLikeSecretField(field)) {
            return configError("field \"" + field +
                               "\" looks like an API key; keys are never stored in configs: put the key in an "
                               "environment variable and name it with \"api_key_env\" (e.g. \"OPENAI_API_KEY\")");
        }
        if (std::find(kKnown.begin(), kKnown.end(), field) == kKnown.end())
            return configError("unknown field \"" + field + "\"");
    }

    auto providerIt = json.find("provider");
    if (providerIt == json.end() || !providerIt->is_string())
        return configError("field \"provider\" (\"openai\" or \"anthropic\") is required");
    auto provider = parseLlmProvider(providerIt->get<std::string>());
    if (!provider)
        return provider.error();

    LlmProviderConfig config = LlmProviderConfig::defaultsFor(*provider);
    for (const Result<void>& r : {
             readField(json, "base_url", config.baseUrl),
             readField(json, "model", config.model),
             readField(json, "api_key_env", config.apiKeyEnv),
             readField(json, "connect_timeout_ms", config.connectTimeoutMs),
             readField(json, "total_timeout_ms", config.totalTimeoutMs),
             readField(json, "max_retries", config.maxRetries),
             readField(json, "backoff_initial_ms", config.backoffInitialMs),
             readField(json, "backoff_max_ms", config.backoffMaxMs),
             readField(json, "retry_after_max_ms", config.retryAfterMaxMs),
             readField(json, "jitter_seed", config.jitterSeed),
             readField(json, "max_tokens_field", config.maxTokensField),
             readField(json, "anthropic_version", config.anthropicVersion),
         }) {
        if (!r)
            return r.error();
    }

    if (auto it = json.find("prices"); it != json.end()) {
        if (!it->is_object())
            return configError("field \"prices\" must be an object {model: {input_usd_per_mtok, output_usd_per_mtok}}");
        for (const auto& [name, entry] : it->items()) {
            const auto in = entry.is_object() ? entry.find("input_usd_per_mtok") : entry.end();
            const auto out = entry.is_object() ? entry.find("output_usd_per_mtok") : entry.end();
            if (!entry.is_object() || in == entry.end() || out == entry.end() || !in->is_number() ||
                !out->is_number() || entry.size() != 2) {
                return configError("price of model \"" + name +
                                   "\" must be {\"input_usd_per_mtok\": number, \"output_usd_per_mtok\": number}");
            }
            config.prices[name] = LlmModelPrice{in->get<double>(), out->get<double>()};
        }
    }

    if (auto valid = config.validate(); !valid)
        return valid.error();
    return config;
}

} // namespace kforge::core
