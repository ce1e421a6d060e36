#pragma once
// Message shapes of the worker protocol (docs/worker-protocol.md), on top of MessageChannel:
//   request: {"id": N, "type": "...", ...payload fields...}
//   reply:   {"id": N, "ok": true, "result": {...}}
//         or {"id": N, "ok": false, "error": {"code": "...", "message": "...", "context": "...",
//                                              "detail": "..."}}
// "hello" and "shutdown" are defined here; every other type is handler-defined and its payload
// is opaque to this layer.
//
// Thread: reentrant functions over values, no state.

#include "util/Result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kforge::core {

/// Bumped on any incompatible change of framing or message shapes; the client refuses a worker
/// whose hello reply names another version.
inline constexpr int kWorkerProtocolVersion = 1;

inline constexpr const char* kWorkerHelloType = "hello";       // reply: protocolVersion, pid, info
inline constexpr const char* kWorkerShutdownType = "shutdown"; // worker replies, then exits 0

// Error codes of error replies that the protocol itself produces. Handler errors use
// errorCodeName(ErrorCode) ("invalid-argument", "unsupported", ...).
inline constexpr const char* kWorkerErrorUnknownType = "unknown-type";           // no such handler
inline constexpr const char* kWorkerErrorBadRequest = "bad-request";             // not {"id","type"} / not JSON
inline constexpr const char* kWorkerErrorHandlerException = "handler-exception"; // handler threw
inline constexpr const char* kWorkerErrorBadReply = "bad-reply";                 // result too large / not UTF-8

/// A request as received by the worker. `message` is the whole object (id and type included),
/// which is what handlers receive.
struct WorkerRequest {
    std::int64_t id = 0;
    std::string type;
    nlohmann::json message;
};

/// A reply as received by the client.
struct WorkerReply {
    std::optional<std::int64_t> id; // none when the worker could not read the request's id
    bool ok = false;
    nlohmann::json result; // ok replies
    std::string errorCode; // error replies
    std::string errorMessage;
    std::string errorContext;
    std::string errorDetail; // optional: the rest of a message longer than one line
};

/// {"id", "type"} plus the fields of `payload` (an object or null). InvalidArgument when the type
/// is empty, the payload is not an object, or it uses the reserved keys "id" or "type".
Result<nlohmann::json> makeWorkerRequest(std::int64_t id, std::string_view type, const nlohmann::json& payload);

nlohmann::json makeWorkerOkReply(std::optional<std::int64_t> id, nlohmann::json result);
/// An error reply. `message` is reduced to one line (failureText: no backtrace); when it said more,
/// the rest goes in the error's "detail".
nlohmann::json makeWorkerErrorReply(std::optional<std::int64_t> id, std::string_view code, std::string_view message,
                                    std::string_view context = {});

/// Validates a received request. InvalidArgument (one line) when it is not an object with an
/// integer "id" and a non-empty string "type".
Result<WorkerRequest> parseWorkerRequest(const nlohmann::json& message);

/// The request id if `message` carries a usable one (for error replies to malformed requests).
std::optional<std::int64_t> workerRequestId(const nlohmann::json& message);

/// Validates a received reply. InvalidArgument when the shape is not one of the two above.
Result<WorkerReply> parseWorkerReply(const nlohmann::json& message);

/// The request fields other than "id" and "type" (what a handler usually calls its payload).
nlohmann::json workerRequestPayload(const nlohmann::json& message);

} // namespace kforge::core
