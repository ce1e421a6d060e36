#pragma once
// Builds the LlmClient for a provider config (the CLI's --proposer and the GUI settings go
// through here).

#include "llm_client/LlmClient.h"
#include "llm_client/LlmConfig.h"
#include "util/Result.h"

#include <memory>

namespace kforge::core {

/// InvalidArgument naming the field when the config does not validate.
Result<std::unique_ptr<LlmClient>> createLlmClient(const LlmProviderConfig& config);

} // namespace kforge::core
