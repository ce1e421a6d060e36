#pragma once
// The request loop of kforge-worker (docs/worker-protocol.md). The executable's main() claims the
// standard streams, registers one handler per request type and returns run()'s exit code.
//
//   auto fds = WorkerServer::claimStandardStreams();   // stray printf() can no longer corrupt
//   WorkerServer server(fds->inFd, fds->outFd);        // the protocol stream
//   server.registerHandler("hello", deviceInfo);       // optional: becomes hello's "info"
//   server.registerHandler("evaluate", evaluate);
//   return server.run();
//
// Contract: every request gets exactly one reply. A handler's Error becomes an error reply with
// code errorCodeName(error.code); a handler that throws becomes a "handler-exception" reply; an
// unknown type a "unknown-type" reply; in each case the loop goes on. Faults that kill the process
// (a poisoned CUDA context, SIGSEGV) are the client's business: it sees the worker die.
// Thread: single-threaded; construct, register and run on one thread. Handlers run on it too.

#include "protocol/MessageChannel.h"
#include "protocol/WorkerProtocol.h"
#include "util/Result.h"

#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace kforge::core {

class WorkerServer {
public:
    /// Receives the whole request object ({"id", "type", ...payload}); returns the reply's result.
    using Handler = std::function<Result<nlohmann::json>(const nlohmann::json& request)>;

    /// Exit codes of run().
    static constexpr int kExitOk = 0;            // shutdown request, or the engine closed the pipe
    static constexpr int kExitProtocolError = 2; // framing lost or the pipes failed

    struct StandardStreams {
        int inFd = -1;
        int outFd = -1;
    };

    /// Moves the protocol off descriptors 0 and 1: returns private duplicates of them (close-on-
    /// exec), then points 0 at /dev/null and 1 at stderr, so that libraries printing to stdout
    /// (CUDA, LibTorch, printf debugging in a handler) end up in the captured stderr instead of
    /// corrupting the message stream. Call once, first thing in main(), before any thread starts.
    static Result<StandardStreams> claimStandardStreams();

    /// Does not take ownership of the descriptors (the process exits after run() anyway).
    WorkerServer(int inFd, int outFd, std::uint32_t maxMessageBytes = MessageChannel::kDefaultMaxMessageBytes);

    /// Registers (or replaces) the handler of `type`. "hello": its result becomes the "info" of
    /// the hello reply (e.g. device properties or {"gpu": false}). "shutdown": runs before the
    /// reply (cleanup); its result becomes the reply's result; the worker exits 0 either way.
    void registerHandler(const std::string& type, Handler handler);

    /// Serves requests until a shutdown request (returns kExitOk after replying), end of stream
    /// (kExitOk: the engine is gone) or a framing/pipe failure (kExitProtocolError, with one line
    /// on stderr). A well-framed message that is not a valid request gets a "bad-request" reply.
    int run();

private:
    nlohmann::json handle(const nlohmann::json& message, bool& shutdownRequested);
    nlohmann::json callHandler(const Handler& handler, const WorkerRequest& request);
    bool send(const nlohmann::json& reply, std::optional<std::int64_t> id);

    MessageChannel m_channel;
    std::map<std::string, Handler> m_handlers;
};

} // namespace kforge::core
