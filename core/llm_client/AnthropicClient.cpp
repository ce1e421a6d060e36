#include "llm_client/AnthropicClient.h"

#include "llm_client/LlmClientSupport.h"

namespace kforge::core {

using namespace llm_detail;

AnthropicClient::AnthropicClient(LlmProviderConfig config) : m_config(std::move(config)), m_transport(m_config)
{
    if (auto valid = m_config.validate(); !valid)
        m_configError = valid.error();
}

nlohmann::json AnthropicClient::requestBody(const LlmRequest& request) const
{
    nlohmann::json messages = nlohmann::json::array();
    for (const LlmMessage& m : request.messages)
        messages.push_back({{"role", llmRoleName(m.role)}, {"content", m.text}});
    nlohmann::json body = {{"model", m_config.model}, {"max_tokens", request.maxTokens}, {"messages", messages}};
    if (!request.systemPrompt.empty())
        body["system"] = request.systemPrompt;
    if (request.temperature)
        body["temperature"] = *request.temperature;
    return body;
}

Result<LlmReply> AnthropicClient::complete(const LlmRequest& request, const std::atomic<bool>* cancel)
{
    if (m_configError)
        return *m_configError;
    const std::string url = joinUrl(m_config.baseUrl, "/v1/messages");
    const std::string context = errorContext(providerName(), m_config, url);
    if (request.messages.empty())
        return makeError(ErrorCode::InvalidArgument, "request has no messages", context);

    const std::string key = readApiKey(m_config.apiKeyEnv);
    if (key.empty()) {
        return makeError(ErrorCode::InvalidArgument,
                         m_config.apiKeyEnv.empty()
                             ? std::string("no API key: set api_key_env to the variable that holds it")
                             : "no API key: environment variable " + m_config.apiKeyEnv + " is not set",
                         context);
    }
    const std::vector<std::string> headers = {
        "Content-Type: application/json",
        "Accept: application/json",
        "anthropic-version: " + m_config.anthropicVersion,
        "x-api-key: " + key,
    };

    auto outcome =
        m_transport.post(context, url, headers, requestBody(request).dump(), cancel, key, errorMessageFromBody);
    if (!outcome)
        return outcome.error();

    auto json = parseReplyObject(outcome->reply, context, key);
    if (!json)
        return json.error();

    LlmReply reply;
    reply.attempts = outcome->attempts;
    reply.latencyMs = outcome->elapsedMs;
    reply.model = stringField(*json, "model");
    if (reply.model.empty())
        reply.model = m_config.model;
    reply.stopReason = stringField(*json, "stop_reason");
    reply.requestId = outcome->reply.header("request-id");
    if (reply.requestId.empty())
        reply.requestId = stringField(*json, "id");
    if (auto usage = json->find("usage"); usage != json->end()) {
        reply.inputTokens = intField(*usage, "input_tokens");
        reply.outputTokens = intField(*usage, "output_tokens");
    }

    auto content = json->find("content");
    if (content == json->end() || !content->is_array())
        return replyError("malformed reply: no \"content\" array", context, key);
    for (const auto& block : *content) {
        if (stringField(block, "type") == "text")
            reply.text += stringField(block, "text");
    }
    if (reply.text.empty()) {
        return replyError("reply without text (stop_reason \"" + reply.stopReason + "\", " +
                              std::to_string(reply.outputTokens) + " output tokens)",
                          context, key);
    }
    applyPrice(reply, m_config);
    return reply;
}

} // namespace kforge::core
