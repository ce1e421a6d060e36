#include "llm_client/LlmClientSupport.h"

#include "llm_client/LlmSecretRedaction.h"

#include <cstdlib>

namespace kforge::core::llm_detail {

std::string readApiKey(const std::string& envName)
{
    if (envName.empty())
        return {};
    const char* value = std::getenv(envName.c_str());
    return value != nullptr ? std::string(value) : std::string();
}

std::string errorContext(const char* provider, const LlmProviderConfig& config, const std::string& url)
{
    return std::string(provider) + " " + config.model + " at " + url;
}

std::string joinUrl(const std::string& base, const std::string& path)
{
    std::string url = base;
    while (!url.empty() && url.back() == '/')
        url.pop_back();
    return url + path;
}

std::string errorMessageFromBody(const std::string& body)
{
    const nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (!json.is_object())
        return {};
    if (auto it = json.find("error"); it != json.end()) {
        if (it->is_string())
            return it->get<std::string>();
        if (it->is_object()) {
            const std::string type = stringField(*it, "type");
            const std::string message = stringField(*it, "message");
            if (!message.empty())
                return type.empty() ? message : type + ": " + message;
            if (!type.empty())
                return type;
        }
    }
    return stringField(json, "message");
}

Result<nlohmann::json> parseReplyObject(const LlmHttpReply& reply, const std::string& context,
                                        const std::string& secret)
{
    nlohmann::json json;
    try {
        json = nlohmann::json::parse(reply.body);
    } catch (const nlohmann::json::parse_error& e) {
        return replyError("malformed JSON in reply (HTTP " + std::to_string(reply.status) + ", " +
                              std::to_string(reply.body.size()) + " bytes): " + e.what(),
                          context, secret);
    }
    if (!json.is_object())
        return replyError(std::string("malformed reply: expected a JSON object, got ") + json.type_name(), context,
                          secret);
    // Every field a client reads (text, model, id, refusal) comes out of this document.
    redactSecretInReply(json, secret);
    return json;
}

std::int64_t intField(const nlohmann::json& object, const char* key)
{
    if (!object.is_object())
        return 0;
    auto it = object.find(key);
    return it != object.end() && it->is_number() ? it->get<std::int64_t>() : 0;
}

std::string stringField(const nlohmann::json& object, const char* key)
{
    if (!object.is_object())
        return {};
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void applyPrice(LlmReply& reply, const LlmProviderConfig& config)
{
    if (auto price = config.priceFor(reply.model)) {
        reply.costUsd = (static_cast<double>(reply.inputTokens) * price->inputUsdPerMTok +
                         static_cast<double>(reply.outputTokens) * price->outputUsdPerMTok) /
            1e6;
        reply.costKnown = true;
    } else {
        reply.costUsd = 0.0;
        reply.costKnown = false;
    }
}

Error replyError(const std::string& what, const std::string& context, const std::string& secret)
{
    return makeError(ErrorCode::Io, LlmHttpTransport::redact(what, secret), context);
}

} // namespace kforge::core::llm_detail
