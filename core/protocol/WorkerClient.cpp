#include "protocol/WorkerClient.h"

#include "protocol/WorkerProtocol.h"
#include "util/FailureText.h"
#include "util/SecretEnvironment.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace kforge::core {
namespace {

using Clock = MessageChannel::Clock;

constexpr int kUnknownStatus = -1; // waitpid() could not tell (SIGCHLD ignored by the engine)
constexpr std::chrono::milliseconds kStderrGraceAfterDeath{500};
constexpr std::chrono::milliseconds kExitGraceAfterEof{2000};
constexpr std::chrono::milliseconds kExitGraceAfterBadReply{100};

std::string seconds(std::chrono::milliseconds ms)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", double(ms.count()) / 1000.0);
    return text;
}

void closeFd(int& fd)
{
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

// A pipe whose both ends are close-on-exec (so workers spawned by other clients on other threads
// do not inherit them and keep them open) and above 2 (so dup2 onto 0/1/2 in the child is real).
bool makePipe(int fds[2])
{
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return false;
    for (int i = 0; i < 2; ++i) {
        if (fds[i] > 2)
            continue;
        const int moved = ::fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
        ::close(fds[i]);
        fds[i] = moved;
    }
    if (fds[0] < 0 || fds[1] < 0) {
        closeFd(fds[0]);
        closeFd(fds[1]);
        return false;
    }
    return true;
}

std::vector<std::string> childEnvironment(const std::vector<std::pair<std::string, std::string>>& overrides)
{
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view entry(*e);
        const std::string_view name = entry.substr(0, entry.find('='));
        bool overridden = false;
        for (const auto& [key, value] : overrides)
            overridden = overridden || key == name;
        // Candidate kernels and sources run in these children: no credential is there to be read.
        if (!overridden && !isSecretEnvironmentName(name))
            env.emplace_back(entry);
    }
    for (const auto& [key, value] : overrides)
        env.push_back(key + "=" + value);
    return env;
}

} // namespace

// Debug-build check of the one-thread-at-a-time contract.
class WorkerClient::UseGuard {
public:
    explicit UseGuard(std::atomic<bool>& flag) : m_flag(flag)
    {
        [[maybe_unused]] const bool wasInUse = m_flag.exchange(true);
        assert(!wasInUse && "WorkerClient used by two threads at once");
    }
    ~UseGuard() { m_flag.store(false); }
    UseGuard(const UseGuard&) = delete;
    UseGuard& operator=(const UseGuard&) = delete;

private:
    std::atomic<bool>& m_flag;
};

WorkerClient::WorkerClient(WorkerCommand command) : m_command(std::move(command)), m_stderr(m_command.stderrTailBytes)
{
}

WorkerClient::~WorkerClient()
{
    shutdown();
}

WorkerResponse WorkerClient::start()
{
    UseGuard guard(m_inUse);
    return startUnguarded();
}

WorkerResponse WorkerClient::startUnguarded()
{
    if (m_pid > 0)
        reapIfExited();
    if (m_pid > 0) {
        WorkerResponse running;
        running.requestType = kWorkerHelloType;
        running.result = m_hello;
        running.workerPid = m_pid;
        return running;
    }

    WorkerResponse failed;
    failed.requestType = kWorkerHelloType;
    failed.outcome = WorkerOutcome::SpawnFailed;
    if (std::string error = spawn(); !error.empty()) {
        failed.message = error;
        return failed;
    }

    const std::int64_t id = ++m_nextId;
    const nlohmann::json hello = makeWorkerRequest(id, kWorkerHelloType, nullptr).value();
    WorkerResponse reply =
        exchange(kWorkerHelloType, hello, id, Clock::now() + m_command.startTimeout, m_command.startTimeout);
    failed.workerPid = reply.workerPid;
    failed.stderrTail = reply.stderrTail;
    failed.exitStatus = reply.exitStatus;
    failed.termSignal = reply.termSignal;
    const std::string who = "worker '" + m_command.executable + "'";
    if (reply.outcome == WorkerOutcome::HandlerError) {
        failed.message = who + " refused hello: " + reply.message;
        releaseWorker(true, kStderrGraceAfterDeath); // kills it: it cannot serve requests
        failed.stderrTail = m_stderr.text();
        return failed;
    }
    if (!reply.ok()) {
        failed.message = who + " did not answer hello: " + reply.message;
        return failed;
    }
    const nlohmann::json& version =
        reply.result.is_object() ? reply.result.value("protocolVersion", nlohmann::json()) : nlohmann::json();
    if (!version.is_number_integer() || version.get<std::int64_t>() != kWorkerProtocolVersion) {
        failed.message = who + " speaks protocol version " + (version.is_null() ? "?" : version.dump()) +
            ", expected " + std::to_string(kWorkerProtocolVersion);
        releaseWorker(true, kStderrGraceAfterDeath);
        failed.stderrTail = m_stderr.text();
        return failed;
    }
    m_hello = reply.result;
    if (m_lostWorker) {
        ++m_restarts;
        m_lostWorker = false;
    }
    return reply;
}

std::string WorkerClient::spawn()
{
    const std::string& exe = m_command.executable;
    const std::string prefix = "cannot start worker '" + exe + "': ";
    if (exe.empty())
        return "cannot start worker: no executable configured";
    struct stat st {};
    if (::stat(exe.c_str(), &st) != 0)
        return prefix + (errno == ENOENT ? std::string("no such file") : std::strerror(errno));
    if (S_ISDIR(st.st_mode))
        return prefix + "is a directory";
    if (::access(exe.c_str(), X_OK) != 0)
        return prefix + "not executable (" + std::strerror(errno) + ")";

    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    if (!makePipe(in) || !makePipe(out) || !makePipe(err)) {
        const std::string reason = prefix + "cannot create pipes: " + std::strerror(errno);
        for (int* p : {in, out, err}) {
            closeFd(p[0]);
            closeFd(p[1]);
        }
        return reason;
    }

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    // Descriptors the engine's libraries opened without close-on-exec stay out of the worker.
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t emptyMask;
    sigemptyset(&emptyMask);
    posix_spawnattr_setsigmask(&attr, &emptyMask);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGCHLD);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

    std::vector<std::string> argStrings{exe};
    argStrings.insert(argStrings.end(), m_command.arguments.begin(), m_command.arguments.end());
    std::vector<char*> argv;
    for (std::string& a : argStrings)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> envStrings = childEnvironment(m_command.environment);
    std::vector<char*> envp;
    for (std::string& e : envStrings)
        envp.push_back(e.data());
    envp.push_back(nullptr);

    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, exe.c_str(), &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    closeFd(in[0]);
    closeFd(out[1]);
    closeFd(err[1]);
    if (rc != 0) {
        closeFd(in[1]);
        closeFd(out[0]);
        closeFd(err[0]);
        return prefix + std::strerror(rc);
    }

    m_pid = pid;
    m_toWorker = in[1];
    m_fromWorker = out[0];
    // Non-blocking so that the request deadline also bounds writing (a worker that stopped reading
    // cannot block the engine). Larger pipes mean fewer wake-ups for megabyte messages (best effort).
    ::fcntl(m_toWorker, F_SETFL, ::fcntl(m_toWorker, F_GETFL) | O_NONBLOCK);
    ::fcntl(m_toWorker, F_SETPIPE_SZ, 1 << 20);
    ::fcntl(m_fromWorker, F_SETPIPE_SZ, 1 << 20);
    m_channel = std::make_unique<MessageChannel>(m_fromWorker, m_toWorker, m_command.maxMessageBytes);
    m_stderr.start(err[0]);
    return {};
}

WorkerResponse WorkerClient::request(std::string_view type, const nlohmann::json& payload,
                                     std::chrono::milliseconds timeout, const std::atomic<bool>* stop)
{
    UseGuard guard(m_inUse);
    WorkerResponse response;
    response.requestType = std::string(type);
    if (type == kWorkerShutdownType) {
        response.outcome = WorkerOutcome::InvalidRequest;
        response.message = "use WorkerClient::shutdown() to stop the worker";
        return response;
    }
    Result<nlohmann::json> message = makeWorkerRequest(m_nextId + 1, type, payload);
    if (!message) {
        response.outcome = WorkerOutcome::InvalidRequest;
        response.message = message.error().toString();
        return response;
    }
    if (m_pid > 0)
        reapIfExited(); // died while idle: replace it before sending
    if (m_pid <= 0) {
        WorkerResponse started = startUnguarded();
        if (!started.ok()) {
            started.requestType = std::string(type);
            return started;
        }
    }
    const std::int64_t id = ++m_nextId;
    message.value()["id"] = id;
    return exchange(type, *message, id, Clock::now() + timeout, timeout, stop);
}

WorkerResponse WorkerClient::exchange(std::string_view type, const nlohmann::json& message, std::int64_t id,
                                      Clock::time_point deadline, std::chrono::milliseconds limit,
                                      const std::atomic<bool>* stop)
{
    WorkerResponse response;
    response.requestType = std::string(type);
    response.workerPid = m_pid;

    const MessageChannel::WriteResult sent = m_channel->write(message, deadline);
    switch (sent.status) {
    case MessageChannel::WriteStatus::Written:
        break;
    case MessageChannel::WriteStatus::Refused:
        response.outcome = WorkerOutcome::InvalidRequest;
        response.message = sent.error;
        return response;
    case MessageChannel::WriteStatus::Timeout:
        return timedOut(std::move(response), limit);
    case MessageChannel::WriteStatus::PeerClosed:
    case MessageChannel::WriteStatus::IoError:
        return died(std::move(response));
    }

    bool stopped = false;
    const MessageChannel::ReadResult received = readReply(deadline, stop, stopped);
    if (stopped)
        return stoppedWhileWaiting(std::move(response));
    switch (received.status) {
    case MessageChannel::ReadStatus::Message:
        break;
    case MessageChannel::ReadStatus::Timeout:
        return timedOut(std::move(response), limit);
    case MessageChannel::ReadStatus::EndOfStream:
        return died(std::move(response));
    case MessageChannel::ReadStatus::ProtocolError:
    case MessageChannel::ReadStatus::IoError:
        return protocolFailure(std::move(response), received.error);
    }

    Result<WorkerReply> reply = parseWorkerReply(received.message);
    if (!reply)
        return protocolFailure(std::move(response), reply.error().message);
    // An id-less error reply is the worker rejecting a message it could not parse as a request.
    if (reply->id ? *reply->id != id : reply->ok)
        return protocolFailure(std::move(response),
                               "reply " + (reply->id ? std::to_string(*reply->id) : "null") + " to request " +
                                   std::to_string(id));
    if (reply->ok) {
        response.result = std::move(reply->result);
        return response;
    }
    response.outcome = WorkerOutcome::HandlerError;
    response.errorCode = reply->errorCode;
    // One line whatever the worker sent (a worker of an earlier build sent exception text whole).
    const FailureText text = failureText(reply->errorMessage);
    response.message = reply->errorContext.empty() ? text.line : reply->errorContext + ": " + text.line;
    response.detail = reply->errorDetail.empty() ? text.detail : reasonDetail(reply->errorDetail);
    return response;
}

// Waits for the reply in slices of kStopPollInterval when there is a stop flag to watch; a slice that
// ends without the whole reply keeps what arrived (MessageChannel buffers partial messages).
MessageChannel::ReadResult WorkerClient::readReply(Clock::time_point deadline, const std::atomic<bool>* stop,
                                                   bool& stopped)
{
    stopped = false;
    if (!stop)
        return m_channel->read(deadline);
    for (;;) {
        if (stop->load()) {
            stopped = true;
            return MessageChannel::ReadResult{MessageChannel::ReadStatus::Timeout, {}, "stopped"};
        }
        const Clock::time_point slice = std::min(deadline, Clock::now() + kStopPollInterval);
        MessageChannel::ReadResult received = m_channel->read(slice);
        if (received.status != MessageChannel::ReadStatus::Timeout || slice >= deadline)
            return received;
    }
}

WorkerResponse WorkerClient::stoppedWhileWaiting(WorkerResponse response)
{
    killAndReap();
    response.outcome = WorkerOutcome::Stopped;
    response.message = "stopped while waiting for the reply (worker killed)";
    releaseWorker(true, kStderrGraceAfterDeath);
    response.stderrTail = m_stderr.text();
    return response;
}

WorkerResponse WorkerClient::timedOut(WorkerResponse response, std::chrono::milliseconds limit)
{
    killAndReap();
    response.outcome = WorkerOutcome::Timeout;
    response.message = "timed out after " + seconds(limit) + " s (worker killed)";
    releaseWorker(true, kStderrGraceAfterDeath);
    response.stderrTail = m_stderr.text();
    return response;
}

WorkerResponse WorkerClient::died(WorkerResponse response)
{
    // The worker closed its pipes: it is exiting or dead. Give it a moment to finish exiting.
    bool exited = false;
    int status = waitForExit(kExitGraceAfterEof, exited);
    response.outcome = WorkerOutcome::Crashed;
    if (!exited) {
        killAndReap();
        response.message = "worker closed its pipes but did not exit (killed)";
    } else if (status == kUnknownStatus) {
        response.message = "worker exited (status unknown: SIGCHLD is ignored in this process)";
    } else {
        response.message = describeWaitStatus(status);
        if (WIFEXITED(status))
            response.exitStatus = WEXITSTATUS(status);
        else if (WIFSIGNALED(status))
            response.termSignal = WTERMSIG(status);
    }
    releaseWorker(true, kStderrGraceAfterDeath);
    response.stderrTail = m_stderr.text();
    return response;
}

WorkerResponse WorkerClient::protocolFailure(WorkerResponse response, const std::string& error)
{
    // A reply cut short is usually a worker that died while writing it: report the death.
    bool exited = false;
    const int status = waitForExit(kExitGraceAfterBadReply, exited);
    if (exited && status != kUnknownStatus && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        response.outcome = WorkerOutcome::Crashed;
        response.message = describeWaitStatus(status);
        if (WIFEXITED(status))
            response.exitStatus = WEXITSTATUS(status);
        else if (WIFSIGNALED(status))
            response.termSignal = WTERMSIG(status);
    } else {
        if (!exited)
            killAndReap();
        response.outcome = WorkerOutcome::ProtocolError;
        response.message = "invalid reply from worker: " + error + (exited ? "" : " (worker killed)");
    }
    releaseWorker(true, kStderrGraceAfterDeath);
    response.stderrTail = m_stderr.text();
    return response;
}

bool WorkerClient::reapIfExited()
{
    bool exited = false;
    waitForExit(std::chrono::milliseconds(0), exited);
    if (exited)
        releaseWorker(true, kStderrGraceAfterDeath);
    return exited;
}

// Once a worker is reaped its pid may be reused at once, even by another client's worker, so
// every reaping path sets m_pid to 0 right away and nothing signals or waits on a stale pid.
int WorkerClient::waitForExit(std::chrono::milliseconds limit, bool& exited)
{
    exited = false;
    if (m_pid <= 0) {
        exited = true;
        return kUnknownStatus;
    }
    const auto deadline = Clock::now() + limit;
    auto pause = std::chrono::microseconds(500);
    for (;;) {
        int status = 0;
        const pid_t r = ::waitpid(m_pid, &status, WNOHANG);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == m_pid || r < 0) { // r < 0 (ECHILD): auto-reaped because SIGCHLD is ignored
            exited = true;
            m_pid = 0;
            return r < 0 ? kUnknownStatus : status;
        }
        const auto now = Clock::now();
        if (now >= deadline)
            return 0;
        std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
        pause = std::min(pause * 2, std::chrono::microseconds(10000));
    }
}

int WorkerClient::killAndReap()
{
    if (m_pid <= 0) // never kill(0) / kill(-0): that is our own process group
        return kUnknownStatus;
    ::kill(-m_pid, SIGKILL); // the worker's process group: anything it started dies with it
    ::kill(m_pid, SIGKILL);  // in case it left its group
    int status = kUnknownStatus;
    for (;;) {
        const pid_t r = ::waitpid(m_pid, &status, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            status = kUnknownStatus;
        break;
    }
    m_pid = 0;
    return status;
}

void WorkerClient::releaseWorker(bool lost, std::chrono::milliseconds stderrGrace)
{
    if (m_pid > 0)
        killAndReap();
    m_channel.reset();
    closeFd(m_toWorker);
    closeFd(m_fromWorker);
    m_stderr.stop(stderrGrace);
    if (lost)
        m_lostWorker = true;
}

void WorkerClient::shutdown()
{
    UseGuard guard(m_inUse);
    if (m_pid <= 0)
        return;
    const auto deadline = Clock::now() + m_command.shutdownGrace;
    bool exited = false;
    waitForExit(std::chrono::milliseconds(0), exited);
    if (!exited && m_channel) {
        const std::int64_t id = ++m_nextId;
        const nlohmann::json bye = makeWorkerRequest(id, kWorkerShutdownType, nullptr).value();
        if (m_channel->write(bye, deadline).ok())
            (void)m_channel->read(deadline); // the reply's content does not matter
        // End of input too, for a worker that ignores "shutdown" but stops on end-of-stream.
        m_channel.reset();
        closeFd(m_toWorker);
        const auto now = Clock::now();
        waitForExit(
            std::chrono::ceil<std::chrono::milliseconds>(deadline > now ? deadline - now : Clock::duration::zero()),
            exited);
    }
    releaseWorker(false, std::chrono::milliseconds(200)); // kills it if it is still running
}

} // namespace kforge::core
