#include "protocol/WorkerServer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <iostream>
#include <unistd.h>

namespace kforge::core {
namespace {

void logLine(const std::string& line)
{
    std::fprintf(stderr, "kforge-worker: %s\n", line.c_str());
    std::fflush(stderr);
}

} // namespace

Result<WorkerServer::StandardStreams> WorkerServer::claimStandardStreams()
{
    std::fflush(stdout);
    std::cout.flush();
    StandardStreams fds;
    fds.inFd = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fds.inFd < 0)
        return makeError(ErrorCode::Io, std::string("cannot duplicate stdin: ") + std::strerror(errno), "worker");
    fds.outFd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fds.outFd < 0) {
        const int err = errno;
        ::close(fds.inFd);
        return makeError(ErrorCode::Io, std::string("cannot duplicate stdout: ") + std::strerror(err), "worker");
    }
    const int devNull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devNull < 0 || ::dup2(devNull, STDIN_FILENO) < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        const int err = errno;
        if (devNull >= 0)
            ::close(devNull);
        ::close(fds.inFd);
        ::close(fds.outFd);
        return makeError(ErrorCode::Io, std::string("cannot redirect stdin/stdout: ") + std::strerror(err), "worker");
    }
    ::close(devNull);
    return fds;
}

WorkerServer::WorkerServer(int inFd, int outFd, std::uint32_t maxMessageBytes) : m_channel(inFd, outFd, maxMessageBytes)
{
}

void WorkerServer::registerHandler(const std::string& type, Handler handler)
{
    m_handlers[type] = std::move(handler);
}

int WorkerServer::run()
{
    for (;;) {
        MessageChannel::ReadResult in = m_channel.read();
        switch (in.status) {
        case MessageChannel::ReadStatus::Message: {
            bool shutdownRequested = false;
            nlohmann::json reply;
            try {
                reply = handle(in.message, shutdownRequested);
            } catch (const std::exception& e) { // handlers are guarded; this is the loop's own bug
                reply = makeWorkerErrorReply(workerRequestId(in.message), errorCodeName(ErrorCode::Internal),
                                             std::string("worker failed to handle the request: ") + e.what());
            }
            if (!send(reply, workerRequestId(in.message)))
                return kExitProtocolError;
            if (shutdownRequested)
                return kExitOk;
            break;
        }
        case MessageChannel::ReadStatus::EndOfStream:
            return kExitOk;
        case MessageChannel::ReadStatus::Timeout:
            break; // no deadline: cannot happen
        case MessageChannel::ReadStatus::ProtocolError:
            if (m_channel.broken()) {
                logLine("protocol error: " + in.error);
                return kExitProtocolError;
            }
            if (!send(makeWorkerErrorReply(std::nullopt, kWorkerErrorBadRequest, in.error), std::nullopt))
                return kExitProtocolError;
            break;
        case MessageChannel::ReadStatus::IoError:
            logLine("cannot read requests: " + in.error);
            return kExitProtocolError;
        }
    }
}

nlohmann::json WorkerServer::handle(const nlohmann::json& message, bool& shutdownRequested)
{
    Result<WorkerRequest> parsed = parseWorkerRequest(message);
    if (!parsed)
        return makeWorkerErrorReply(workerRequestId(message), kWorkerErrorBadRequest, parsed.error().message);
    const WorkerRequest& request = *parsed;
    const auto handler = m_handlers.find(request.type);

    if (request.type == kWorkerHelloType) {
        nlohmann::json reply = handler != m_handlers.end() ? callHandler(handler->second, request)
                                                           : makeWorkerOkReply(request.id, nullptr);
        if (reply["ok"].get<bool>()) {
            reply["result"] = nlohmann::json{{"protocolVersion", kWorkerProtocolVersion},
                                             {"pid", static_cast<std::int64_t>(::getpid())},
                                             {"info", std::move(reply["result"])}};
        }
        return reply;
    }
    if (request.type == kWorkerShutdownType) {
        shutdownRequested = true;
        return handler != m_handlers.end() ? callHandler(handler->second, request)
                                           : makeWorkerOkReply(request.id, nlohmann::json::object());
    }
    if (handler == m_handlers.end())
        return makeWorkerErrorReply(request.id, kWorkerErrorUnknownType,
                                    "no handler for request type '" + request.type + "'");
    return callHandler(handler->second, request);
}

nlohmann::json WorkerServer::callHandler(const Handler& handler, const WorkerRequest& request)
{
    try {
        Result<nlohmann::json> result = handler(request.message);
        if (result)
            return makeWorkerOkReply(request.id, std::move(result).value());
        const Error& error = result.error();
        return makeWorkerErrorReply(request.id, errorCodeName(error.code), error.message, error.context);
    } catch (const std::exception& e) { // what() may hold a c10 backtrace: the reply keeps one line
        return makeWorkerErrorReply(request.id, kWorkerErrorHandlerException,
                                    "handler of '" + request.type + "' threw: " + e.what());
    } catch (...) {
        return makeWorkerErrorReply(request.id, kWorkerErrorHandlerException,
                                    "handler of '" + request.type + "' threw a non-standard exception");
    }
}

bool WorkerServer::send(const nlohmann::json& reply, std::optional<std::int64_t> id)
{
    MessageChannel::WriteResult out = m_channel.write(reply);
    if (out.status == MessageChannel::WriteStatus::Refused) {
        // Nothing was written: the result is too large or not valid UTF-8. Say so instead.
        out = m_channel.write(makeWorkerErrorReply(id, kWorkerErrorBadReply, "cannot send the reply: " + out.error));
    }
    if (out.ok())
        return true;
    logLine("cannot write reply: " + out.error);
    return false;
}

} // namespace kforge::core
