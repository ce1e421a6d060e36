#include "llm_client/OpenAiClient.h"

#include "llm_client/LlmClientSupport.h"

#include <chrono>

namespace kforge::core {

using namespace llm_detail;

namespace {

// message.content is a string on every server we target; a few return an array of parts
// [{"type": "text", "text": ...}], which is accepted too.
std::string contentText(const nlohmann::json& content)
{
    if (content.is_string())
        return content.get<std::string>();
    std::string text;
    if (content.is_array()) {
        for (const auto& part : content) {
            if (stringField(part, "type") == "text")
                text += stringField(part, "text");
        }
    }
    return text;
}

} // namespace

OpenAiCompatibleClient::OpenAiCompatibleClient(LlmProviderConfig config)
    : m_config(std::move(config)), m_transport(m_config)
{
    if (auto valid = m_config.validate(); !valid)
        m_configError = valid.error();
}

nlohmann::json OpenAiCompatibleClient::requestBody(const LlmRequest& request) const
{
    nlohmann::json messages = nlohmann::json::array();
    if (!request.systemPrompt.empty())
        messages.push_back({{"role", "system"}, {"content", request.systemPrompt}});
    for (const LlmMessage& m : request.messages)
        messages.push_back({{"role", llmRoleName(m.role)}, {"content", m.text}});
    nlohmann::json body = {{"model", m_config.model}, {"messages", messages}, {"stream", false}};
    body[m_config.maxTokensField] = request.maxTokens;
    if (request.temperature)
        body["temperature"] = *request.temperature;
    return body;
}

Result<LlmReply> OpenAiCompatibleClient::complete(const LlmRequest& request, const std::atomic<bool>* cancel)
{
    if (m_configError)
        return *m_configError;
    const std::string url = joinUrl(m_config.baseUrl, "/chat/completions");
    const std::string context = errorContext(providerName(), m_config, url);
    if (request.messages.empty())
        return makeError(ErrorCode::InvalidArgument, "request has no messages", context);

    const std::string key = readApiKey(m_config.apiKeyEnv);
    std::vector<std::string> headers = {"Content-Type: application/json", "Accept: application/json"};
    if (!key.empty())
        headers.push_back("Authorization: Bearer " + key);

    auto outcome =
        m_transport.post(context, url, headers, requestBody(request).dump(), cancel, key, errorMessageFromBody);
    if (!outcome) {
        Error error = outcome.error();
        if (key.empty() && error.message.rfind("HTTP 401", 0) == 0)
            error.message += "; environment variable " +
                (m_config.apiKeyEnv.empty() ? std::string("(api_key_env unset)") : m_config.apiKeyEnv) +
                " holds no key";
        return error;
    }

    auto json = parseReplyObject(outcome->reply, context, key);
    if (!json)
        return json.error();

    LlmReply reply;
    reply.attempts = outcome->attempts;
    reply.latencyMs = outcome->elapsedMs;
    reply.model = stringField(*json, "model");
    if (reply.model.empty())
        reply.model = m_config.model;
    reply.requestId = outcome->reply.header("x-request-id");
    if (reply.requestId.empty())
        reply.requestId = stringField(*json, "id");

    auto usage = json->find("usage");
    if (usage != json->end()) {
        reply.inputTokens = intField(*usage, "prompt_tokens");
        reply.outputTokens = intField(*usage, "completion_tokens");
    }

    auto choices = json->find("choices");
    if (choices == json->end() || !choices->is_array())
        return replyError("malformed reply: no \"choices\" array", context, key);
    if (!choices->empty()) {
        const nlohmann::json& choice = choices->front();
        reply.stopReason = stringField(choice, "finish_reason");
        auto message = choice.is_object() ? choice.find("message") : choice.end();
        if (message != choice.end() && message->is_object()) {
            if (auto content = message->find("content"); content != message->end())
                reply.text = contentText(*content);
            if (reply.text.empty()) {
                if (std::string refusal = stringField(*message, "refusal"); !refusal.empty())
                    return replyError("reply without text: the model refused: " + refusal, context, key);
            }
        }
    }
    if (reply.text.empty()) {
        return replyError("reply without text (finish_reason \"" + reply.stopReason + "\", " +
                              std::to_string(reply.outputTokens) + " output tokens)",
                          context, key);
    }
    applyPrice(reply, m_config);
    return reply;
}

} // namespace kforge::core
