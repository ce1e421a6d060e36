#pragma once
// The provider-neutral face of a large language model behind an HTTP API (docs/llm-providers.md).
// Proposers build an LlmRequest, call complete() and get back the text plus what it cost; which
// wire format (OpenAI Chat Completions, Anthropic Messages) carried it is the implementation's
// business. Implementations: OpenAiCompatibleClient, AnthropicClient; createLlmClient() picks one
// from an LlmProviderConfig.

#include "util/Result.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge::core {

enum class LlmRole { User, Assistant };

/// One conversation turn. The system prompt is not a message (LlmRequest::systemPrompt).
struct LlmMessage {
    LlmRole role = LlmRole::User;
    std::string text;
};

struct LlmRequest {
    std::string systemPrompt; // empty: none sent
    std::vector<LlmMessage> messages;
    int maxTokens = 4096;              // upper bound on generated tokens
    std::optional<double> temperature; // unset: the provider's default (some models reject it)
};

/// What one successful complete() produced. Holds nothing secret: no key, no request headers.
struct LlmReply {
    std::string text;       // the generated text (all text blocks, concatenated)
    std::string model;      // the model that answered, as the provider reports it
    std::string stopReason; // finish_reason / stop_reason ("stop", "length", "end_turn", ...)
    std::int64_t inputTokens = 0;
    std::int64_t outputTokens = 0;
    /// From the config's price table; 0 and costKnown == false when the model has no price.
    double costUsd = 0.0;
    bool costKnown = false;
    std::int64_t latencyMs = 0; // the whole call: every attempt plus the backoff between them
    int attempts = 0;           // HTTP requests sent (1 when the first one succeeded)
    std::string requestId;      // the provider's request id (response header, else body "id")
};

class LlmClient {
public:
    virtual ~LlmClient() = default;

    /// Sends the request, retrying transient failures (HTTP 429/5xx, connection errors) with
    /// backoff as the config says, and returns the reply or one clear error line:
    ///   Cancelled        `*cancel` became true (checked while waiting for the server and
    ///                    during backoff sleeps; the call returns within about 50 ms);
    ///   InvalidArgument  the provider rejected the request (4xx other than 429; the provider's
    ///                    error message is included), or the request itself is unusable;
    ///   Io               timeouts, connection failures, 429/5xx beyond the retry limit, or a
    ///                    reply that is malformed or holds no text.
    /// `cancel` may be null. The API key is read from the configured environment variable at
    /// each call and only ever placed in the authentication header. Nothing returned holds it, even
    /// when a server or the model echoes it back: error messages and every field of the reply
    /// (text, model, stop reason, request id) pass through LlmSecretRedaction.h, which also blanks
    /// any `Authorization` / `x-api-key` header value written out in them.
    /// Thread: implementations are fully reentrant: every call uses its own libcurl handles, the
    /// client's only mutable state (the jitter RNG) is guarded, so one client may serve several
    /// threads at once.
    virtual Result<LlmReply> complete(const LlmRequest& request, const std::atomic<bool>* cancel) = 0;

    /// "openai" or "anthropic": names the wire format in logs and project records.
    virtual const char* providerName() const = 0;
};

const char* llmRoleName(LlmRole role); // "user" / "assistant"

} // namespace kforge::core
