#pragma once
// The outcome of one request to a worker, as WorkerClient reports it. Every way a request can end
// is a distinct WorkerOutcome so the engine can record why a candidate failed (a kernel that hangs
// is a Timeout, one that faults is a Crashed with the signal and the CUDA error line from stderr).
//
// Thread: plain value type.

#include <cstddef>
#include <optional>
#include <string>
#include <sys/types.h>

#include <nlohmann/json.hpp>

namespace kforge::core {

enum class WorkerOutcome {
    Ok,             // the handler's result is in `result`
    HandlerError,   // the worker replied with an error (`errorCode`); the worker lives on
    Timeout,        // no reply within the request's time limit: the worker was killed (SIGKILL)
    Crashed,        // the worker died while handling the request: exit status or signal
    ProtocolError,  // the worker sent something that is not a valid reply: it was killed
    SpawnFailed,    // no worker could be started (missing executable, failed hello, ...)
    InvalidRequest, // the request was not sent (bad payload, over the size limit); worker untouched
    Stopped,        // the caller's stop flag was set while it waited: the worker was killed (SIGKILL)
};

/// "ok", "handler-error", "timeout", "crashed", "protocol-error", "spawn-failed", "invalid-request",
/// "stopped".
const char* workerOutcomeName(WorkerOutcome outcome);

struct WorkerResponse {
    WorkerOutcome outcome = WorkerOutcome::Ok;
    std::string requestType;
    nlohmann::json result;         // Ok: the reply's "result"
    std::string errorCode;         // HandlerError: the reply's code ("invalid-argument", "unknown-type", ...)
    std::string message;           // not Ok: one line, e.g. "timed out after 2 s", "worker killed by SIGSEGV"
    std::string detail;            // HandlerError: the rest of a longer message (no backtrace), else empty
    std::string stderrTail;        // Timeout/Stopped/Crashed/ProtocolError/SpawnFailed: the worker's last stderr bytes
    pid_t workerPid = 0;           // the worker that handled the request; 0 when none was running
    std::optional<int> exitStatus; // Crashed: exit status of a worker that exited
    std::optional<int> termSignal; // Crashed: the signal that killed the worker

    bool ok() const { return outcome == WorkerOutcome::Ok; }

    /// One line for logs and candidate records, e.g.
    /// "evaluate: worker killed by SIGSEGV (stderr: CUDA error: an illegal memory access was encountered)".
    /// Up to `stderrLines` last non-empty stderr lines are appended, joined by " | "; backtrace
    /// lines (a c10 error's "frame #N: ...") are not counted.
    std::string describe(std::size_t stderrLines = 3) const;
};

/// "SIGSEGV", "SIGABRT", ... for the usual signals; "signal N" otherwise.
std::string signalName(int signal);

/// A waitpid() status as a phrase: "worker exited with status 1", "worker killed by SIGSEGV"
/// (", core dumped" when the kernel says so).
std::string describeWaitStatus(int status);

} // namespace kforge::core
