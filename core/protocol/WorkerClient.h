#pragma once
// The engine's handle on one kforge-worker process (docs/worker-protocol.md). It spawns the
// worker with its stdin/stdout as the protocol pipes, captures its stderr (last 64 KiB), sends one
// request at a time and waits for the reply under a per-request time limit: the watchdog.
//
// Failure handling: a request that times out gets the worker killed (SIGKILL to its process
// group) and reaped; a worker that dies while handling a request is reaped and reported with its
// exit status or signal and its stderr tail; either way the next request transparently starts a
// fresh worker (restartCount() counts them). A worker found dead between requests is replaced the
// same way before the next request is sent.
//
// Processes: the worker runs in its own process group (a terminal's Ctrl-C reaches the engine,
// which shuts workers down, not the workers directly) with default SIGPIPE/SIGCHLD dispositions
// and an empty signal mask; only the descriptors 0, 1, 2 are passed on. The client never calls
// waitpid() on anything but its own child. If the engine ignores SIGCHLD (children auto-reaped),
// exit statuses are reported as unknown.
// Thread: one client is used by one thread at a time (asserted in debug builds): its methods are
// not reentrant. Several clients may run in parallel on different threads (one per GPU); they
// share no state. Each running worker owns one stderr reader thread inside the client.
// Blocking: request() blocks for at most its timeout plus the time to kill and reap a worker;
// start() for at most WorkerCommand::startTimeout; shutdown() for about shutdownGrace.

#include "protocol/MessageChannel.h"
#include "protocol/StreamTail.h"
#include "protocol/WorkerResponse.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kforge::core {

/// How to start a worker.
struct WorkerCommand {
    std::string executable;             // a path (not searched in PATH)
    std::vector<std::string> arguments; // argv[1...]
    /// Set in the worker's environment on top of the engine's (e.g. CUDA_VISIBLE_DEVICES=1).
    std::vector<std::pair<std::string, std::string>> environment;
    /// From spawn to the hello reply (a CUDA worker initializes its context before answering).
    std::chrono::milliseconds startTimeout{30000};
    /// shutdown(): how long a worker may take to answer "shutdown" and exit before SIGKILL.
    std::chrono::milliseconds shutdownGrace{2000};
    std::size_t stderrTailBytes = 64 * 1024;
    std::uint32_t maxMessageBytes = MessageChannel::kDefaultMaxMessageBytes;
};

class WorkerClient {
public:
    explicit WorkerClient(WorkerCommand command);
    /// shutdown(): never leaves a running child or a zombie behind.
    ~WorkerClient();
    WorkerClient(const WorkerClient&) = delete;
    WorkerClient& operator=(const WorkerClient&) = delete;

    /// Starts a worker and exchanges hello, unless one is running. Ok: `result` is the hello
    /// result {"protocolVersion", "pid", "info"}. SpawnFailed (one line in `message`): the
    /// executable is missing or not executable, the worker died or hung before answering hello
    /// (stderr tail included), it answered hello with an error, or it speaks another protocol
    /// version. request() calls this itself; calling it first just moves the start-up cost.
    WorkerResponse start();

    /// Sends {"id", "type": type, ...payload} and waits up to `timeout` (writing the request
    /// included; starting a worker first is not) for the reply. `payload` is a JSON object or
    /// null and must not use the keys "id"/"type". Outcomes: see WorkerOutcome.
    /// `stop`, when given, is polled (every kStopPollInterval) while the reply is awaited; once it is
    /// set the worker is killed and reaped like on a timeout and the outcome is Stopped.
    WorkerResponse request(std::string_view type, const nlohmann::json& payload, std::chrono::milliseconds timeout,
                           const std::atomic<bool>* stop = nullptr);

    /// How often request() looks at its stop flag while it waits.
    static constexpr std::chrono::milliseconds kStopPollInterval{20};

    /// Asks the worker to shut down, waits up to shutdownGrace for it to exit, then kills it;
    /// always reaps it. Does nothing when no worker runs. A later request() starts a new worker
    /// (not counted as a restart).
    void shutdown();

    bool running() const { return m_pid > 0; }
    /// The running worker's process id; 0 when none runs.
    pid_t pid() const { return m_pid; }
    /// Workers started to replace one that was lost (timeout, crash, protocol error, failed hello).
    int restartCount() const { return m_restarts; }
    /// The last successful hello result ({"protocolVersion", "pid", "info"}); null before one.
    const nlohmann::json& hello() const { return m_hello; }
    /// What the current (or last) worker wrote to stderr, at most stderrTailBytes.
    std::string stderrTail() const { return m_stderr.text(); }
    const WorkerCommand& command() const { return m_command; }

private:
    class UseGuard;

    WorkerResponse startUnguarded();
    std::string spawn();
    WorkerResponse exchange(std::string_view type, const nlohmann::json& message, std::int64_t id,
                            MessageChannel::Clock::time_point deadline, std::chrono::milliseconds limit,
                            const std::atomic<bool>* stop = nullptr);
    MessageChannel::ReadResult readReply(MessageChannel::Clock::time_point deadline, const std::atomic<bool>* stop,
                                         bool& stopped);
    WorkerResponse timedOut(WorkerResponse response, std::chrono::milliseconds limit);
    WorkerResponse stoppedWhileWaiting(WorkerResponse response);
    WorkerResponse died(WorkerResponse response);
    WorkerResponse protocolFailure(WorkerResponse response, const std::string& error);
    bool reapIfExited();
    int waitForExit(std::chrono::milliseconds limit, bool& exited);
    int killAndReap();
    void releaseWorker(bool lost, std::chrono::milliseconds stderrGrace);

    const WorkerCommand m_command;
    pid_t m_pid = 0;
    int m_toWorker = -1;   // our end of the worker's stdin (non-blocking)
    int m_fromWorker = -1; // our end of the worker's stdout
    std::unique_ptr<MessageChannel> m_channel;
    StreamTail m_stderr;
    nlohmann::json m_hello;
    std::int64_t m_nextId = 0;
    int m_restarts = 0;
    bool m_lostWorker = false;
    std::atomic<bool> m_inUse{false};
};

} // namespace kforge::core
