#pragma once
// Which environment variables a child process never inherits. The engine's environment holds the
// LLM provider's key (docs/llm-providers.md); the processes that run untrusted input (kforge-worker
// running candidate kernels, kforge-nvrtc compiling candidate sources) have no use for it, so it is
// not there to be found.

#include <string_view>

namespace kforge::core {

/// True for names that hold credentials by convention: a '_'-separated part KEY, TOKEN, SECRET,
/// PASSWORD, PASSWD or CREDENTIALS (case-insensitive), or a part ending in APIKEY. E.g.
/// OPENAI_API_KEY, ANTHROPIC_API_KEY, MY_LLM_KEY, HF_TOKEN, AWS_SECRET_ACCESS_KEY.
bool isSecretEnvironmentName(std::string_view name);

} // namespace kforge::core
