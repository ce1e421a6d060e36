#pragma once
// Internal helpers shared by the provider clients (not part of the module's API).

#include "llm_client/LlmClient.h"
#include "llm_client/LlmConfig.h"
#include "llm_client/LlmHttpTransport.h"
#include "util/Result.h"

#include <string>

#include <nlohmann/json.hpp>

namespace kforge::core::llm_detail {

/// The key from environment variable `envName`, or empty when the name is empty or it is unset.
/// Read at each request so a rotated key takes effect without restarting.
std::string readApiKey(const std::string& envName);

/// "<provider> <model> at <url>": the context of every error a client returns.
std::string errorContext(const char* provider, const LlmProviderConfig& config, const std::string& url);

/// `base` without trailing slashes, then `path`.
std::string joinUrl(const std::string& base, const std::string& path);

/// The provider's message in an error body: {"error": {"type", "message"}} (OpenAI, Anthropic),
/// {"error": "text"} (Ollama), {"message": "text"} (vLLM); empty when none is found.
std::string errorMessageFromBody(const std::string& body);

/// Parses a 2xx body as a JSON object with every string in it passed through
/// redactSecretInReply(secret) (the one place reply content enters a client); Io "malformed JSON in
/// reply ..." otherwise.
Result<nlohmann::json> parseReplyObject(const LlmHttpReply& reply, const std::string& context,
                                        const std::string& secret);

/// The integer at `object[key]` when it is a number, else 0.
std::int64_t intField(const nlohmann::json& object, const char* key);
/// The string at `object[key]` when it is a string, else empty.
std::string stringField(const nlohmann::json& object, const char* key);

/// Fills costUsd/costKnown from the config's price table.
void applyPrice(LlmReply& reply, const LlmProviderConfig& config);

/// An Io error "<what>" with `secret` redacted.
Error replyError(const std::string& what, const std::string& context, const std::string& secret);

} // namespace kforge::core::llm_detail
