#include "llm_client/LlmClient.h"

namespace kforge::core {

const char* llmRoleName(LlmRole role)
{
    switch (role) {
    case LlmRole::User:
        return "user";
    case LlmRole::Assistant:
        return "assistant";
    }
    return "user";
}

} // namespace kforge::core
