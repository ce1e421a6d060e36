#include "llm_client/LlmHttpTransport.h"

#include "llm_client/LlmSecretRedaction.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <thread>

namespace kforge::core {

namespace {

using Clock = std::chrono::steady_clock;

// How often a waiting request or backoff sleep looks at the cancel flag.
constexpr int kPollMs = 20;

std::int64_t msSince(Clock::time_point start)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

bool cancelled(const std::atomic<bool>* cancel)
{
    return cancel != nullptr && cancel->load(std::memory_order_relaxed);
}

void initCurlOnce()
{
    // curl_global_init is not thread-safe and must run before any other curl call; the process
    // never calls curl_global_cleanup (other libraries may share libcurl's global state).
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return std::string(s);
}

struct EasyDeleter {
    void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
struct MultiDeleter {
    void operator()(CURLM* h) const { curl_multi_cleanup(h); }
};
struct SlistDeleter {
    void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

struct Sink {
    LlmHttpReply* reply;
    bool tooLarge = false;
};

size_t writeBody(char* data, size_t size, size_t count, void* user)
{
    auto* sink = static_cast<Sink*>(user);
    const size_t n = size * count;
    if (sink->reply->body.size() + n > LlmHttpTransport::kMaxReplyBytes) {
        sink->tooLarge = true;
        return 0; // aborts the transfer with CURLE_WRITE_ERROR
    }
    sink->reply->body.append(data, n);
    return n;
}

size_t writeHeader(char* data, size_t size, size_t count, void* user)
{
    auto* sink = static_cast<Sink*>(user);
    const size_t n = size * count;
    std::string_view line(data, n);
    if (line.rfind("HTTP/", 0) == 0) {
        // A new status line (after a 100 Continue or an interim reply): only the final one counts.
        sink->reply->headers.clear();
        return n;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos)
        return n;
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    sink->reply->headers.emplace_back(std::move(name), trim(line.substr(colon + 1)));
    return n;
}

int onProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t)
{
    // Non-zero aborts the transfer (CURLE_ABORTED_BY_CALLBACK). The multi loop in attempt()
    // checks the flag too, more often than libcurl calls this during a silent wait.
    return cancelled(static_cast<const std::atomic<bool>*>(user)) ? 1 : 0;
}

enum class AttemptKind {
    Http,      // a complete HTTP response arrived (any status)
    Cancelled, // the cancel flag was seen
    Retryable, // connection-level failure worth another try
    Fatal,     // timeout after connecting, bad URL, oversized reply, ...
};

struct Attempt {
    AttemptKind kind = AttemptKind::Fatal;
    LlmHttpReply reply;
    std::string error; // for the non-Http kinds
};

Attempt attempt(const std::string& url, curl_slist* headers, const std::string& body, std::int64_t connectTimeoutMs,
                std::int64_t totalTimeoutMs, const std::atomic<bool>* cancel)
{
    Attempt out;
    std::unique_ptr<CURL, EasyDeleter> easy(curl_easy_init());
    std::unique_ptr<CURLM, MultiDeleter> multi(curl_multi_init());
    if (!easy || !multi) {
        out.error = "libcurl could not create a handle";
        return out;
    }
    Sink sink{&out.reply};
    char errorBuffer[CURL_ERROR_SIZE] = {};
    CURL* h = easy.get();
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, writeBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, writeHeader);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &sink);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, onProgress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(cancel));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connectTimeoutMs));
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(totalTimeoutMs));
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);        // threads: no SIGALRM-based DNS timeouts
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""); // whatever compression libcurl supports
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errorBuffer);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L); // a redirect would resend the key elsewhere

    curl_multi_add_handle(multi.get(), h);
    int running = 1;
    CURLcode code = CURLE_OK;
    bool done = false;
    while (!done) {
        if (cancelled(cancel)) {
            curl_multi_remove_handle(multi.get(), h);
            out.kind = AttemptKind::Cancelled;
            return out;
        }
        CURLMcode mc = curl_multi_perform(multi.get(), &running);
        if (mc == CURLM_OK && running > 0)
            mc = curl_multi_poll(multi.get(), nullptr, 0, kPollMs, nullptr);
        if (mc != CURLM_OK) {
            curl_multi_remove_handle(multi.get(), h);
            out.error = std::string("libcurl multi error: ") + curl_multi_strerror(mc);
            return out;
        }
        int queued = 0;
        while (CURLMsg* msg = curl_multi_info_read(multi.get(), &queued)) {
            if (msg->msg == CURLMSG_DONE && msg->easy_handle == h) {
                code = msg->data.result;
                done = true;
            }
        }
    }
    curl_multi_remove_handle(multi.get(), h);

    if (code == CURLE_OK) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out.reply.status);
        out.kind = AttemptKind::Http;
        return out;
    }
    if (code == CURLE_ABORTED_BY_CALLBACK) {
        out.kind = AttemptKind::Cancelled;
        return out;
    }
    const std::string detail = errorBuffer[0] != '\0' ? std::string(errorBuffer) : curl_easy_strerror(code);
    switch (code) {
    case CURLE_OPERATION_TIMEDOUT: {
        curl_off_t connectUs = 0;
        curl_easy_getinfo(h, CURLINFO_CONNECT_TIME_T, &connectUs);
        if (connectUs == 0) {
            out.kind = AttemptKind::Retryable;
            out.error = "connection timed out after " + std::to_string(connectTimeoutMs) + " ms (connect_timeout_ms)";
        } else {
            // Not retried: the server may still be generating (and billing) the first request, and a
            // reply that did not fit the limit once will not fit it the next time either.
            out.kind = AttemptKind::Fatal;
            out.error = "request timed out after " + std::to_string(totalTimeoutMs) + " ms (total_timeout_ms)";
        }
        return out;
    }
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
        out.kind = AttemptKind::Retryable;
        out.error = "connection failed: " + detail;
        return out;
    case CURLE_WRITE_ERROR:
        if (sink.tooLarge) {
            out.error = "reply larger than " + std::to_string(LlmHttpTransport::kMaxReplyBytes >> 20) + " MiB";
            return out;
        }
        [[fallthrough]];
    default:
        out.error = detail;
        return out;
    }
}

// Retry-After in milliseconds (retry-after-ms, or retry-after as delay-seconds); nullopt when
// absent or an HTTP date (then the exponential backoff applies).
std::optional<std::int64_t> retryAfterMs(const LlmHttpReply& reply)
{
    auto parse = [](const std::string& text) -> std::optional<double> {
        if (text.empty())
            return std::nullopt;
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !(v >= 0))
            return std::nullopt;
        return v;
    };
    if (auto ms = parse(reply.header("retry-after-ms")))
        return static_cast<std::int64_t>(*ms);
    if (auto s = parse(reply.header("retry-after")))
        return static_cast<std::int64_t>(*s * 1000.0);
    return std::nullopt;
}

// Sleeps `ms`, waking every kPollMs to look at the flag; false when cancelled.
bool sleepUnlessCancelled(std::int64_t ms, const std::atomic<bool>* cancel)
{
    const auto until = Clock::now() + std::chrono::milliseconds(ms);
    while (Clock::now() < until) {
        if (cancelled(cancel))
            return false;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
        std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(kPollMs)));
    }
    return !cancelled(cancel);
}

std::string oneLine(std::string text, std::size_t limit)
{
    for (char& c : text) {
        if (c == '\n' || c == '\r' || c == '\t')
            c = ' ';
    }
    if (text.size() > limit)
        text = text.substr(0, limit) + "...";
    return text;
}

std::string attemptsText(int attempts)
{
    return std::to_string(attempts) + (attempts == 1 ? " attempt" : " attempts");
}

} // namespace

std::string LlmHttpReply::header(std::string_view lowerName) const
{
    for (const auto& [name, value] : headers) {
        if (name == lowerName)
            return value;
    }
    return {};
}

LlmHttpTransport::LlmHttpTransport(const LlmProviderConfig& config)
    : m_connectTimeoutMs(config.connectTimeoutMs), m_totalTimeoutMs(config.totalTimeoutMs),
      m_maxRetries(config.maxRetries), m_backoffInitialMs(config.backoffInitialMs), m_backoffMaxMs(config.backoffMaxMs),
      m_retryAfterMaxMs(config.retryAfterMaxMs), m_rng(config.jitterSeed)
{
    initCurlOnce();
}

std::string LlmHttpTransport::redact(std::string text, const std::string& secret)
{
    return redactSecretInText(std::move(text), secret);
}

std::int64_t LlmHttpTransport::backoffMs(int retry)
{
    // Equal jitter: half the exponential step is fixed, half is random, so retries from many
    // clients spread out but never collapse to zero.
    const int shift = std::min(retry - 1, 30);
    const std::int64_t step = std::min<std::int64_t>(m_backoffMaxMs, m_backoffInitialMs << shift);
    const std::int64_t half = step / 2;
    std::lock_guard lock(m_rngMutex);
    std::uniform_int_distribution<std::int64_t> jitter(0, step - half);
    return half + jitter(m_rng);
}

Result<LlmHttpTransport::Outcome> LlmHttpTransport::post(const std::string& context, const std::string& url,
                                                         const std::vector<std::string>& headers,
                                                         const std::string& body, const std::atomic<bool>* cancel,
                                                         const std::string& secret,
                                                         const ErrorMessageFn& errorMessageOf)
{
    const auto start = Clock::now();
    auto fail = [&](ErrorCode code, const std::string& message) {
        return makeError(code, redact(message, secret), context);
    };
    auto cancelledError = [&] { return fail(ErrorCode::Cancelled, "cancelled"); };

    std::unique_ptr<curl_slist, SlistDeleter> list;
    for (const std::string& line : headers) {
        curl_slist* appended = curl_slist_append(list.get(), line.c_str());
        if (appended == nullptr)
            return fail(ErrorCode::Internal, "libcurl could not allocate a header list");
        list.release();
        list.reset(appended);
    }
    // No "Expect: 100-continue" round trip for large prompts.
    if (curl_slist* appended = curl_slist_append(list.get(), "Expect:")) {
        list.release();
        list.reset(appended);
    }

    for (int attemptNo = 1;; ++attemptNo) {
        if (cancelled(cancel))
            return cancelledError();
        Attempt a = attempt(url, list.get(), body, m_connectTimeoutMs, m_totalTimeoutMs, cancel);
        const bool retriesLeft = attemptNo <= m_maxRetries;
        std::optional<std::int64_t> serverDelay;
        switch (a.kind) {
        case AttemptKind::Cancelled:
            return cancelledError();
        case AttemptKind::Fatal:
            return fail(ErrorCode::Io, a.error + " (" + attemptsText(attemptNo) + ")");
        case AttemptKind::Retryable:
            if (!retriesLeft)
                return fail(ErrorCode::Io, a.error + " (gave up after " + attemptsText(attemptNo) + ")");
            break;
        case AttemptKind::Http: {
            const long status = a.reply.status;
            if (status >= 200 && status < 300) {
                // Header values reach the reply (request ids); the body is redacted once parsed.
                for (auto& header : a.reply.headers)
                    header.second = redactSecretInReplyText(std::move(header.second), secret);
                return Outcome{std::move(a.reply), attemptNo, msSince(start)};
            }
            std::string providerMessage = errorMessageOf ? errorMessageOf(a.reply.body) : std::string();
            if (providerMessage.empty())
                providerMessage = a.reply.body.empty() ? "(empty body)" : oneLine(a.reply.body, 300);
            const std::string what = "HTTP " + std::to_string(status) + ": " + oneLine(providerMessage, 1000);
            const bool retryable = status == 429 || status >= 500;
            if (!retryable)
                return fail(status >= 400 && status < 500 ? ErrorCode::InvalidArgument : ErrorCode::Io,
                            what + " (not retried; " + attemptsText(attemptNo) + ")");
            if (!retriesLeft)
                return fail(ErrorCode::Io, what + " (gave up after " + attemptsText(attemptNo) + ")");
            serverDelay = retryAfterMs(a.reply);
            break;
        }
        }
        const std::int64_t delay = serverDelay ? std::min(*serverDelay, m_retryAfterMaxMs) : backoffMs(attemptNo);
        if (!sleepUnlessCancelled(delay, cancel))
            return cancelledError();
    }
}

} // namespace kforge::core
