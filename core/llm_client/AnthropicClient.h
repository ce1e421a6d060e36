#pragma once
// LlmClient over the Anthropic Messages API: POST {base_url}/v1/messages with headers
// "x-api-key: <key>" and "anthropic-version: <config.anthropicVersion>" (docs/llm-providers.md).
// Request {model, max_tokens, system, messages[{role, content}], temperature}; reply {id, model,
// content[{type: "text", text}], stop_reason, usage.input_tokens, usage.output_tokens}; the text
// is all "text" blocks concatenated, other block types are ignored.
// The key variable must be set: the API refuses anonymous requests, so a missing key fails
// before anything is sent.
// Thread: fully reentrant (see LlmClient::complete).

#include "llm_client/LlmClient.h"
#include "llm_client/LlmConfig.h"
#include "llm_client/LlmHttpTransport.h"

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kforge::core {

class AnthropicClient final : public LlmClient {
public:
    /// An invalid config makes every complete() fail with that error (see OpenAiCompatibleClient).
    explicit AnthropicClient(LlmProviderConfig config);

    Result<LlmReply> complete(const LlmRequest& request, const std::atomic<bool>* cancel) override;
    const char* providerName() const override { return "anthropic"; }

    /// The JSON body sent for `request` (exposed for tests and the project's audit record).
    nlohmann::json requestBody(const LlmRequest& request) const;

private:
    LlmProviderConfig m_config;
    std::optional<Error> m_configError;
    LlmHttpTransport m_transport;
};

} // namespace kforge::core
