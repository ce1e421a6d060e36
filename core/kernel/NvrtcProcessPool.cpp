#include "kernel/NvrtcProcessPool.h"

#include "protocol/StreamTail.h"
#include "protocol/WorkerClient.h"
#include "protocol/WorkerProtocol.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace kforge::core {
namespace {

constexpr const char* kWho = "kforge-nvrtc";
// A request without a timeout still needs a deadline for WorkerClient; a year is none in practice.
constexpr std::chrono::milliseconds kNoTimeout = std::chrono::hours(24 * 365);

std::string seconds(std::chrono::milliseconds ms)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", static_cast<double>(ms.count()) / 1000.0);
    return text;
}

NvrtcCompileReply notFinished(std::string why)
{
    NvrtcCompileReply reply;
    reply.status = NvrtcStatus::NotFinished;
    reply.failure = std::move(why);
    return reply;
}

// " (stderr: a | b)" from the last lines the process wrote, or nothing.
std::string stderrNote(const WorkerResponse& response)
{
    std::string tail = StreamTail::lastLinesOf(response.stderrTail, 3);
    if (tail.empty())
        return {};
    for (std::size_t pos = tail.find('\n'); pos != std::string::npos; pos = tail.find('\n', pos))
        tail.replace(pos, 1, " | ");
    return " (stderr: " + tail + ")";
}

std::string howItEnded(const WorkerResponse& response)
{
    if (response.termSignal)
        return std::string(kWho) + " was killed by " + signalName(*response.termSignal);
    if (response.exitStatus)
        return std::string(kWho) + " exited with status " + std::to_string(*response.exitStatus);
    return std::string(kWho) + ": " + response.message;
}

} // namespace

struct NvrtcProcessPool::Process {
    std::unique_ptr<WorkerClient> client;
    int compiles = 0;
};

NvrtcProcessPool::NvrtcProcessPool(std::string executable, std::string expectedNvrtcVersion)
    : m_executable(std::move(executable)), m_expectedVersion(std::move(expectedNvrtcVersion))
{
}

NvrtcProcessPool::~NvrtcProcessPool() = default; // each WorkerClient shuts its process down

std::size_t NvrtcProcessPool::idleCount() const
{
    std::lock_guard lock(m_mutex);
    return m_idle.size();
}

Result<std::unique_ptr<NvrtcProcessPool::Process>> NvrtcProcessPool::take()
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_idle.empty()) {
            std::unique_ptr<Process> process = std::move(m_idle.back());
            m_idle.pop_back();
            return process;
        }
    }
    const std::string hint = " (kforge-nvrtc is installed next to kforge; KFORGE_NVRTC names another path)";
    struct stat st {};
    if (::stat(m_executable.c_str(), &st) != 0) {
        return makeError(ErrorCode::NotFound,
                         std::string("cannot start the NVRTC compiler: ") +
                             (errno == ENOENT ? "no such file" : std::strerror(errno)) + hint,
                         m_executable);
    }
    if (S_ISDIR(st.st_mode) || ::access(m_executable.c_str(), X_OK) != 0)
        return makeError(ErrorCode::NotFound, "cannot start the NVRTC compiler: not an executable file" + hint,
                         m_executable);

    WorkerCommand command;
    command.executable = m_executable;
    command.startTimeout = std::chrono::seconds(30);
    command.shutdownGrace = std::chrono::milliseconds(500);
    command.stderrTailBytes = 16 * 1024;
    auto process = std::make_unique<Process>();
    process->client = std::make_unique<WorkerClient>(command);
    WorkerResponse hello = process->client->start();
    if (!hello.ok())
        return makeError(ErrorCode::Internal, "cannot start the NVRTC compiler: " + hello.describe(), m_executable);
    const nlohmann::json& info = process->client->hello().value("info", nlohmann::json::object());
    const std::string version = info.is_object() ? info.value("nvrtc_version", std::string("?")) : std::string("?");
    if (version != m_expectedVersion) {
        return makeError(ErrorCode::Internal,
                         "the NVRTC compiler loads NVRTC " + version + " but this program uses " + m_expectedVersion +
                             " (install kforge and kforge-nvrtc from the same build)",
                         m_executable);
    }
    return process;
}

void NvrtcProcessPool::giveBack(std::unique_ptr<Process> process)
{
    if (process->compiles >= kMaxCompilesPerProcess)
        return; // its WorkerClient shuts it down; the next compile starts a fresh one
    std::lock_guard lock(m_mutex);
    if (m_idle.size() < kMaxIdle)
        m_idle.push_back(std::move(process));
}

Result<NvrtcCompileReply> NvrtcProcessPool::compile(const NvrtcCompileRequest& request, const std::atomic<bool>* stop)
{
    if (stop && stop->load())
        return makeError(ErrorCode::Cancelled, "stopped before the compile", "NVRTC");
    Result<std::unique_ptr<Process>> taken = take();
    if (!taken)
        return taken.error();
    std::unique_ptr<Process> process = std::move(*taken);
    ++process->compiles;

    const std::chrono::milliseconds timeout = request.timeout.count() > 0 ? request.timeout : kNoTimeout;
    WorkerResponse response = process->client->request(kNvrtcCompileType, toJson(request), timeout, stop);
    switch (response.outcome) {
    case WorkerOutcome::Ok: {
        Result<NvrtcCompileReply> reply = nvrtcCompileReplyFromJson(response.result);
        if (!reply)
            return notFinished(std::string(kWho) + " sent an invalid reply: " + reply.error().message);
        giveBack(std::move(process));
        return reply;
    }
    case WorkerOutcome::Stopped:
        return makeError(ErrorCode::Cancelled, "stopped during the compile (the NVRTC process was killed)", "NVRTC");
    case WorkerOutcome::Timeout:
        return notFinished("NVRTC did not finish within " + seconds(request.timeout) + " s (the compile was stopped)");
    case WorkerOutcome::Crashed:
        return notFinished("NVRTC did not finish: " + howItEnded(response) + stderrNote(response));
    case WorkerOutcome::ProtocolError:
        return notFinished("NVRTC did not finish: " + std::string(kWho) + " sent an invalid reply (" +
                           response.message + ")" + stderrNote(response));
    case WorkerOutcome::InvalidRequest:
        giveBack(std::move(process)); // nothing was sent: the process is as it was
        return notFinished("the source cannot be sent to the NVRTC process: " + response.message);
    case WorkerOutcome::HandlerError:
        // The reply did not fit the message limit (a giant PTX/cubin): the source's fault, not ours.
        if (response.errorCode == kWorkerErrorBadReply)
            return notFinished("NVRTC's output is too large to return: " + response.message);
        return makeError(ErrorCode::Internal, std::string(kWho) + " refused the compile request: " + response.message,
                         m_executable);
    case WorkerOutcome::SpawnFailed:
        return makeError(ErrorCode::Internal, "cannot start the NVRTC compiler: " + response.describe(), m_executable);
    }
    return makeError(ErrorCode::Internal, "unknown outcome of the NVRTC process", m_executable);
}

} // namespace kforge::core
