#pragma once
// Keeps the last bytes a child process writes to a pipe (the worker's stderr: CUDA error lines,
// LibTorch warnings, a crash message) without ever letting the pipe fill up and block the child.
//
// Thread: a private reader thread drains the descriptor into a bounded buffer; text() and
// lastLines() may be called from any thread; start()/stop() from the owning thread only.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

namespace kforge::core {

class StreamTail {
public:
    explicit StreamTail(std::size_t capacityBytes = 64 * 1024);
    ~StreamTail(); // stop(0)
    StreamTail(const StreamTail&) = delete;
    StreamTail& operator=(const StreamTail&) = delete;

    /// Clears the buffer and starts draining `fd`, taking ownership of it. A running reader is
    /// stopped first (stop(0)).
    void start(int fd);

    /// Waits up to `grace` for end-of-stream (every writer closed: the child died and nothing it
    /// spawned still holds the pipe), then stops the reader and closes the descriptor. The
    /// buffered text stays readable. Safe to call when not started.
    void stop(std::chrono::milliseconds grace);

    /// The last `capacityBytes` written (all of it if less).
    std::string text() const;

    /// The last `count` non-empty lines of text(), joined with '\n'.
    std::string lastLines(std::size_t count) const;

    /// The last `count` non-empty lines of `text`, joined with '\n'.
    static std::string lastLinesOf(const std::string& text, std::size_t count);

private:
    void readLoop(int fd, int wakeFd);

    const std::size_t m_capacity;
    mutable std::mutex m_mutex;
    std::condition_variable m_eofChanged;
    std::string m_data; // guarded by m_mutex; may exceed m_capacity by up to m_capacity
    bool m_eof = false; // guarded by m_mutex
    std::atomic<bool> m_stopping{false};
    std::thread m_thread;
    int m_fd = -1;
    int m_wakeWrite = -1; // wakes the reader on stop()
    int m_wakeRead = -1;
};

} // namespace kforge::core
