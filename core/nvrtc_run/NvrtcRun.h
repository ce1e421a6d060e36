#pragma once
// The NVRTC calls of a compile, as the kforge-nvrtc process makes them (docs/nvrtc-compile.md, "The
// compiler process"). Only that process (and tests) runs them: candidate sources are untrusted,
// NVRTC can take unbounded time on them, and NVRTC installs its own SIGINT handler while it
// compiles, so the engine never calls NVRTC on a source itself (kernel/NvrtcCompiler.h).
//
// Thread: reentrant (each call owns its nvrtcProgram); serveNvrtcCompile arms a process-wide alarm
// and belongs to the single-threaded kforge-nvrtc loop.

#include "nvrtc_run/NvrtcMessages.h"
#include "util/Result.h"

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace kforge::core {

/// A log longer than this is cut at a line end and ends with a line saying how much was dropped,
/// so that a source that provokes millions of warnings still gets a reply under the message limit.
inline constexpr std::size_t kMaxNvrtcLogBytes = 1u << 20;

/// Creates one program from `request`, compiles it with `request.options` and collects the log, the
/// PTX (also after a ptxas failure) and the cubin. Never throws; NVRTC's own failures are a reply
/// with status NvrtcFailed or InvalidOption.
NvrtcCompileReply runNvrtc(const NvrtcCompileRequest& request);

/// "major.minor" of the NVRTC library this process loaded, e.g. "13.0"; "unknown" if it cannot say.
std::string nvrtcLibraryVersion();

/// The "compile" handler of kforge-nvrtc: parses the request, compiles it under a backstop alarm
/// (SIGALRM, default action, at the request's timeout plus kBackstopGraceS, so a compile whose
/// parent is gone ends anyway) and returns the reply as JSON. InvalidArgument for a malformed request.
Result<nlohmann::json> serveNvrtcCompile(const nlohmann::json& request);

/// Seconds the backstop alarm allows beyond the request's timeout (the parent kills first).
inline constexpr unsigned kBackstopGraceS = 10;

} // namespace kforge::core
