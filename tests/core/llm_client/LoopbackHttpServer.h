#pragma once
// A small HTTP/1.1 server on 127.0.0.1 for the LLM client tests: it binds an ephemeral port,
// answers each connection with the next scripted response (optionally after a delay) and closes
// it, and records every request's method, path, headers and body.
// Limits: one request per connection (it always answers "Connection: close"), bodies framed by
// Content-Length only, connections served one after another on one thread.
// Thread: the server thread is its own; enqueue()/requests() may be called from any thread.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace kforge::core::test {

struct ScriptedResponse {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers; // extra headers
    std::string body;
    std::string contentType = "application/json";
    /// Waited after the request was read, before anything is sent (a slow model).
    std::chrono::milliseconds delay{0};
};

struct RecordedRequest {
    std::string method;
    std::string path;
    std::vector<std::pair<std::string, std::string>> headers; // names lower-cased
    std::string body;

    /// The first header named `lowerName`, or empty.
    std::string header(const std::string& lowerName) const;
};

class LoopbackHttpServer {
public:
    /// Binds 127.0.0.1:0 and starts serving; aborts the test process if that fails.
    LoopbackHttpServer();
    /// Stops promptly, also while a scripted delay is running.
    ~LoopbackHttpServer();
    LoopbackHttpServer(const LoopbackHttpServer&) = delete;
    LoopbackHttpServer& operator=(const LoopbackHttpServer&) = delete;

    int port() const { return m_port; }
    /// "http://127.0.0.1:PORT"
    std::string baseUrl() const;

    /// Appends a response; requests beyond the script get a 500 "no scripted response".
    void enqueue(ScriptedResponse response);
    /// Every request read so far, in arrival order.
    std::vector<RecordedRequest> requests() const;

private:
    void serve();
    void handle(int fd);
    bool readRequest(int fd, RecordedRequest& out);
    void waitFor(std::chrono::milliseconds delay);

    int m_listenFd = -1;
    int m_port = 0;
    std::atomic<bool> m_stop{false};
    mutable std::mutex m_mutex;
    std::condition_variable m_stopCv;
    std::deque<ScriptedResponse> m_script;   // guarded by m_mutex
    std::vector<RecordedRequest> m_requests; // guarded by m_mutex
    std::thread m_thread;
};

} // namespace kforge::core::test
