#pragma once
// The engine's side of the kforge-nvrtc processes (docs/nvrtc-compile.md, "The compiler process"):
// sends one compile request to a child process and waits for its reply under the request's
// timeout and the caller's stop flag. Each process is a WorkerClient (protocol/WorkerClient.h): its
// own process group (a terminal's Ctrl-C reaches the engine only, never NVRTC), stdin/stdout
// pipes, stderr captured (last 16 KiB), SIGKILL to the group and a reap on timeout or stop.
//
// Reuse: a process that answered is kept for the next compile (a fresh process per compile
// costs about as much as compiling a small kernel; see the doc's measurements), up to kMaxIdle
// idle processes and kMaxCompilesPerProcess compiles each. A process that timed out, was stopped,
// died or misbehaved is gone; the next compile starts a new one.
//
// Thread: compile() may be called from any number of threads at once; each call has a process to
// itself. The destructor shuts the idle processes down (end of input, then SIGKILL after 0.5 s).

#include "nvrtc_run/NvrtcMessages.h"
#include "util/Result.h"

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kforge::core {

class WorkerClient;

class NvrtcProcessPool {
public:
    static constexpr std::size_t kMaxIdle = 8;
    static constexpr int kMaxCompilesPerProcess = 200;

    /// `executable`: the kforge-nvrtc to start; `expectedNvrtcVersion`: what the engine's cache keys
    /// name ("13.0"); a process that loaded another NVRTC is refused.
    NvrtcProcessPool(std::string executable, std::string expectedNvrtcVersion);
    ~NvrtcProcessPool();
    NvrtcProcessPool(const NvrtcProcessPool&) = delete;
    NvrtcProcessPool& operator=(const NvrtcProcessPool&) = delete;

    /// Runs `request` in a process. The reply NVRTC gave, or a reply with status NotFinished whose
    /// `failure` says why there is none: "NVRTC did not finish within 60 s" (the process was
    /// killed at request.timeout), the process died ("... was killed by SIGSEGV"), sent garbage or
    /// an over-large reply. Errors: Cancelled when `stop` was set before or during the compile (the
    /// process is killed within about 20 ms); NotFound/Internal when no compiler process can be
    /// started (missing or broken executable, another NVRTC version), with the reason.
    Result<NvrtcCompileReply> compile(const NvrtcCompileRequest& request, const std::atomic<bool>* stop);

    const std::string& executable() const { return m_executable; }
    /// Processes waiting for a compile (for tests).
    std::size_t idleCount() const;

private:
    struct Process;
    Result<std::unique_ptr<Process>> take();
    void giveBack(std::unique_ptr<Process> process);

    const std::string m_executable;
    const std::string m_expectedVersion;
    mutable std::mutex m_mutex;
    std::vector<std::unique_ptr<Process>> m_idle; // guarded by m_mutex
};

} // namespace kforge::core
