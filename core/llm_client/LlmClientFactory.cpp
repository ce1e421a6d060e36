#include "llm_client/LlmClientFactory.h"

#include "llm_client/AnthropicClient.h"
#include "llm_client/OpenAiClient.h"

namespace kforge::core {

Result<std::unique_ptr<LlmClient>> createLlmClient(const LlmProviderConfig& config)
{
    if (auto valid = config.validate(); !valid)
        return valid.error();
    std::unique_ptr<LlmClient> client;
    switch (config.provider) {
    case LlmProvider::OpenAiCompatible:
        client = std::make_unique<OpenAiCompatibleClient>(config);
        break;
    case LlmProvider::Anthropic:
        client = std::make_unique<AnthropicClient>(config);
        break;
    }
    if (!client)
        return makeError(ErrorCode::Internal, "unknown provider", "llm config");
    return client;
}

} // namespace kforge::core
