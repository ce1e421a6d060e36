#pragma once
// The HTTP half shared by the LLM clients: one JSON POST over libcurl with connect and total
// timeouts, retries with capped exponential backoff and seeded jitter on 429/5xx and connection
// failures (Retry-After honoured), and cancellation while waiting for the server or sleeping.
// The provider clients supply the URL, headers and body and turn the reply into an LlmReply.
//
// Secrets: the caller passes the key only inside `headers` and as `secret`; the transport puts
// headers on the wire and nowhere else, every error text it builds has `secret` redacted (a
// misbehaving server may echo the request back in an error body), and so have the header values
// of the reply it returns (LlmSecretRedaction.h).
// Thread: post() is reentrant; each call has its own curl handles, the jitter RNG is guarded.

#include "llm_client/LlmConfig.h"
#include "util/Result.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kforge::core {

struct LlmHttpReply {
    long status = 0;
    std::string body;
    /// Header names lower-cased, in arrival order (of the final response only).
    std::vector<std::pair<std::string, std::string>> headers;

    /// The first header named `lowerName`, or empty.
    std::string header(std::string_view lowerName) const;
};

class LlmHttpTransport {
public:
    /// Extracts the provider's error message from a non-2xx body; returns empty when it finds none.
    using ErrorMessageFn = std::function<std::string(const std::string& body)>;

    struct Outcome {
        LlmHttpReply reply; // always 2xx
        int attempts = 0;
        std::int64_t elapsedMs = 0;
    };

    /// Uses the timeouts, retry and backoff fields of `config` (validated by the caller).
    explicit LlmHttpTransport(const LlmProviderConfig& config);

    /// POSTs `body` (JSON) to `url` with `headers` ("Name: value" lines) until a 2xx arrives,
    /// a non-retryable outcome happens, the retries are spent or `*cancel` turns true.
    /// Errors (LlmClient::complete documents the codes) carry `context` (e.g. "openai gpt-4o at
    /// URL"), the HTTP status, the attempts and the provider's message from `errorMessageOf`.
    Result<Outcome> post(const std::string& context, const std::string& url, const std::vector<std::string>& headers,
                         const std::string& body, const std::atomic<bool>* cancel, const std::string& secret,
                         const ErrorMessageFn& errorMessageOf);

    /// redactSecretInText: every occurrence of `secret` (when not empty) and every authentication
    /// header value written out in `text` replaced by "[redacted]".
    static std::string redact(std::string text, const std::string& secret);

    /// The largest reply body accepted; bigger ones fail the attempt (a runaway server).
    static constexpr std::size_t kMaxReplyBytes = 64u << 20;

private:
    std::int64_t backoffMs(int retry);

    std::int64_t m_connectTimeoutMs;
    std::int64_t m_totalTimeoutMs;
    int m_maxRetries;
    std::int64_t m_backoffInitialMs;
    std::int64_t m_backoffMaxMs;
    std::int64_t m_retryAfterMaxMs;
    std::mutex m_rngMutex;
    std::mt19937_64 m_rng; // guarded by m_rngMutex
};

} // namespace kforge::core
