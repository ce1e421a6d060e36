#pragma once
// The request and reply of one compile in the kforge-nvrtc process (docs/nvrtc-compile.md, "The
// compiler process"). They travel as worker-protocol messages (protocol/WorkerProtocol.h) of type
// "compile". Every byte string (source, name, options, log, PTX, cubin) is carried as base64, so a
// source or a log that is not UTF-8 crosses the pipe unchanged.
//
// Thread: value types and reentrant functions.

#include "util/Result.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kforge::core {

/// The worker-protocol request type of a compile.
inline constexpr const char* kNvrtcCompileType = "compile";

struct NvrtcCompileRequest {
    std::string source;
    std::string sourceName;
    std::vector<std::string> options; // the full NVRTC option list, in order
    /// The parent kills the process when the compile takes longer; the process also arms its own
    /// backstop from it (so a compile whose parent died does not run on). 0: no limit.
    std::chrono::milliseconds timeout{0};
};

enum class NvrtcStatus {
    Compiled,      // NVRTC_SUCCESS: cubin and PTX set
    CompileError,  // NVRTC_ERROR_COMPILATION: the source does not compile (log); PTX after a ptxas failure
    InvalidOption, // NVRTC_ERROR_INVALID_OPTION: `failure` is NVRTC's first log line
    NvrtcFailed,   // any other NVRTC failure: `failure` names the call and NVRTC's error string
    NotFinished,   // set by the parent only: the process timed out or died; `failure` says which
};

/// "compiled", "compile-error", "invalid-option", "nvrtc-failed", "not-finished".
const char* nvrtcStatusName(NvrtcStatus status);

struct NvrtcCompileReply {
    NvrtcStatus status = NvrtcStatus::NvrtcFailed;
    std::string log; // NVRTC's program log
    std::string ptx;
    std::vector<std::uint8_t> cubin;
    std::string failure;
    double compileMs = 0; // NVRTC's own time in the process
};

nlohmann::json toJson(const NvrtcCompileRequest& request);
/// InvalidArgument (one line) for a message that is not a well-formed compile request.
Result<NvrtcCompileRequest> nvrtcCompileRequestFromJson(const nlohmann::json& message);

nlohmann::json toJson(const NvrtcCompileReply& reply);
/// InvalidArgument (one line) for a result that is not a well-formed compile reply (NotFinished is
/// refused: no process sends it).
Result<NvrtcCompileReply> nvrtcCompileReplyFromJson(const nlohmann::json& result);

} // namespace kforge::core
