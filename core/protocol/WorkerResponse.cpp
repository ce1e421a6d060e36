#include "protocol/WorkerResponse.h"

#include "protocol/StreamTail.h"
#include "util/FailureText.h"

#include <csignal>
#include <sys/wait.h>

namespace kforge::core {

const char* workerOutcomeName(WorkerOutcome outcome)
{
    switch (outcome) {
    case WorkerOutcome::Ok:
        return "ok";
    case WorkerOutcome::HandlerError:
        return "handler-error";
    case WorkerOutcome::Timeout:
        return "timeout";
    case WorkerOutcome::Crashed:
        return "crashed";
    case WorkerOutcome::ProtocolError:
        return "protocol-error";
    case WorkerOutcome::SpawnFailed:
        return "spawn-failed";
    case WorkerOutcome::InvalidRequest:
        return "invalid-request";
    case WorkerOutcome::Stopped:
        return "stopped";
    }
    return "unknown";
}

std::string WorkerResponse::describe(std::size_t stderrLines) const
{
    if (ok())
        return requestType.empty() ? std::string("ok") : requestType + ": ok";
    std::string line = requestType.empty() ? message : requestType + ": " + message;
    if (outcome == WorkerOutcome::HandlerError && !errorCode.empty())
        line += " [" + errorCode + "]";
    std::string tail = StreamTail::lastLinesOf(withoutBacktraceLines(stderrTail), stderrLines);
    if (!tail.empty()) {
        for (std::size_t pos = tail.find('\n'); pos != std::string::npos; pos = tail.find('\n', pos))
            tail.replace(pos, 1, " | ");
        line += " (stderr: " + tail + ")";
    }
    return line;
}

std::string signalName(int signal)
{
    switch (signal) {
    case SIGHUP:
        return "SIGHUP";
    case SIGINT:
        return "SIGINT";
    case SIGQUIT:
        return "SIGQUIT";
    case SIGILL:
        return "SIGILL";
    case SIGTRAP:
        return "SIGTRAP";
    case SIGABRT:
        return "SIGABRT";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGKILL:
        return "SIGKILL";
    case SIGUSR1:
        return "SIGUSR1";
    case SIGSEGV:
        return "SIGSEGV";
    case SIGUSR2:
        return "SIGUSR2";
    case SIGPIPE:
        return "SIGPIPE";
    case SIGALRM:
        return "SIGALRM";
    case SIGTERM:
        return "SIGTERM";
    case SIGXCPU:
        return "SIGXCPU";
    case SIGXFSZ:
        return "SIGXFSZ";
    case SIGSYS:
        return "SIGSYS";
    default:
        return "signal " + std::to_string(signal);
    }
}

std::string describeWaitStatus(int status)
{
    if (WIFEXITED(status))
        return "worker exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        std::string text = "worker killed by " + signalName(WTERMSIG(status));
#ifdef WCOREDUMP
        if (WCOREDUMP(status))
            text += ", core dumped";
#endif
        return text;
    }
    return "worker stopped with wait status " + std::to_string(status);
}

} // namespace kforge::core
