#pragma once
// Value types of a compiled candidate kernel, shared by the compiler, the cache, the worker
// protocol and the editor (diagnostics on their lines). Torch-free, Qt-free.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kforge::core {

/// The largest candidate source accepted, in bytes (a real kernel is a few KiB): the source policy
/// refuses a larger file before it is scanned, the LLM proposer a larger reply before it is stored.
inline constexpr std::size_t kMaxKernelSourceBytes = 256 * 1024;

enum class DiagnosticSeverity { Error, Warning, Remark };
const char* diagnosticSeverityName(DiagnosticSeverity severity);

/// One compiler message, located in the candidate's source.
struct Diagnostic {
    std::string file; // the name the source was compiled under (e.g. "candidate.cu")
    int line = 0;     // 1-based; 0 when the compiler named no line
    int column = 0;   // 1-based; 0 when unknown
    DiagnosticSeverity severity = DiagnosticSeverity::Error;
    std::string message;

    bool operator==(const Diagnostic&) const = default;
};

/// How to compile: architecture, extraOptions and lineInfo change the compiled code (all part of the
/// cache key); timeout and stop only bound the compile (not part of the key).
struct CompileOptions {
    std::string architecture = "sm_90";    // target GPU, e.g. "sm_90" (H200); from a setting or the device
    std::vector<std::string> extraOptions; // more NVRTC options, e.g. "--use_fast_math"
    bool lineInfo = true;                  // -lineinfo (sanitizer and profiler line mapping)
    /// NVRTC gets this long per compile (callers pass their evaluation timeout); then its process is
    /// killed and the compile fails with CompiledKernel::unfinished set. 0: no limit.
    std::chrono::milliseconds timeout{60000};
    /// When set during a compile, its process is killed and compile() returns Cancelled. Not owned;
    /// must outlive the call.
    const std::atomic<bool>* stop = nullptr;
};

/// The output of one NVRTC compilation.
struct CompiledKernel {
    bool ok = false;
    std::vector<std::uint8_t> cubin; // SASS for `architecture`
    std::string ptx;                 // PTX for the matching compute_XX (JIT on newer GPUs)
    std::string log;                 // NVRTC's full log
    std::vector<Diagnostic> diagnostics;
    std::string cacheKey; // hex digest of source + options + architecture + NVRTC version
    double compileMs = 0; // 0 when served from the cache
    bool fromCache = false;
    /// Set when NVRTC gave no verdict on the source: it did not finish within the timeout, or its
    /// process died ("NVRTC did not finish within 60 s ..."). ok is false, the log and one Error
    /// diagnostic (line 0) say the same, and such an outcome is never cached.
    std::string unfinished;
};

} // namespace kforge::core
