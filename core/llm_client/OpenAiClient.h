#pragma once
// LlmClient over the OpenAI Chat Completions API: POST {base_url}/chat/completions. Speaks the
// subset that OpenAI, vLLM, Ollama and the llama.cpp server share (docs/llm-providers.md):
// request {model, messages[{role, content}], max_tokens | max_completion_tokens, temperature},
// reply {id, model, choices[0].message.content, choices[0].finish_reason, usage.prompt_tokens,
// usage.completion_tokens}. Auth: "Authorization: Bearer <key>" when the key variable is set;
// no auth header otherwise (local servers).
// Thread: fully reentrant (see LlmClient::complete).

#include "llm_client/LlmClient.h"
#include "llm_client/LlmConfig.h"
#include "llm_client/LlmHttpTransport.h"

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kforge::core {

class OpenAiCompatibleClient final : public LlmClient {
public:
    /// An invalid config (see LlmProviderConfig::validate) makes every complete() fail with
    /// that error; createLlmClient() reports it up front instead.
    explicit OpenAiCompatibleClient(LlmProviderConfig config);

    Result<LlmReply> complete(const LlmRequest& request, const std::atomic<bool>* cancel) override;
    const char* providerName() const override { return "openai"; }

    /// The JSON body sent for `request` (exposed for tests and the project's audit record).
    nlohmann::json requestBody(const LlmRequest& request) const;

private:
    LlmProviderConfig m_config;
    std::optional<Error> m_configError;
    LlmHttpTransport m_transport;
};

} // namespace kforge::core
