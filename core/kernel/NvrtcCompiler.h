#pragma once
// NVRTC front end for candidate kernels: CUDA C++ source in, cubin + PTX + located diagnostics out.
// NVRTC itself runs in a kforge-nvrtc child process (docs/nvrtc-compile.md, "The compiler process").

#include "kernel/KernelSource.h"
#include "kernel/NvrtcProcessPool.h"
#include "util/Result.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::core {

/// Compiles one candidate source with NVRTC into a cubin for `CompileOptions::architecture`
/// (e.g. sm_90) and the PTX of the matching virtual architecture (compute_90).
///
/// NVRTC runs in a kforge-nvrtc child process, never in this one (NvrtcProcessPool.h): candidate
/// sources are untrusted, NVRTC can take unbounded time on one, and NVRTC installs its own SIGINT
/// handler while it compiles (Ctrl-C would end the engine with NVRTC's exit code 4). compile() is
/// the parent side: it builds the option list and cache key here, runs the NVRTC calls in the
/// process, and turns the reply into a CompiledKernel here.
///
/// One NVRTC program per call yields both: NVRTC keeps the PTX of a compilation for a real
/// architecture, and that PTX is byte-identical to a separate compilation for compute_XX (checked by
/// the tests, so a future NVRTC that differs fails CI rather than shipping wrong PTX). A second
/// program would double the cost of every compile for no difference in output.
///
/// Options passed, in this order: --gpu-architecture=<arch>, --std=c++17, -default-device,
/// --no-source-include, -lineinfo (when CompileOptions::lineInfo), --include-path=<cuda include>,
/// --include-path=<cuda include>/cccl, then CompileOptions::extraOptions.
///
/// Before NVRTC runs, the source is checked against checkKernelSource (KernelSourcePolicy.h); a
/// refused source is a failed compile (refusedCompile: ok=false, the reason as its one diagnostic),
/// never a Result error. NVRTC's log passes through redactCompileLog before anything reads it, so
/// the log and diagnostics quote no line of any file but the candidate's source.
///
/// Outcomes:
///  - the source compiles: CompiledKernel{ok=true, cubin, ptx, log (warnings), diagnostics};
///  - the source does not compile (front end or ptxas): CompiledKernel{ok=false, log, diagnostics},
///    cubin empty, ptx set only when the front end succeeded and ptxas failed;
///  - NVRTC gives no verdict: CompiledKernel{ok=false, unfinished=reason, log=reason, one Error
///    diagnostic}, when it does not finish within CompileOptions::timeout ("NVRTC did not finish
///    within 60 s ...") or its process dies (killed, crashed, an over-large output);
///  - CompileOptions::stop set before or during the compile: Cancelled (the process is killed);
///  - a malformed architecture: InvalidArgument; NVRTC rejecting an option: InvalidArgument with
///    NVRTC's own one-line reason; NVRTC itself failing (out of memory, internal error): Internal;
///    no usable kforge-nvrtc (missing, not executable, another NVRTC version): NotFound/Internal
///    naming the path.
/// compileMs is the wall time of the whole compile as the caller sees it (process start, when one
/// is needed, included); cacheKey is cacheKey(source, options, sourceName).
///
/// Threads: compile() and every other method may be called from any number of threads at once;
/// each compile has a process to itself. Copies share their processes. The calling thread waits for
/// the reply (a compile takes tens of ms to ~1 s; at most CompileOptions::timeout).
class NvrtcCompiler {
public:
    /// `cudaIncludeDir` names the toolkit's include directory (the one holding cuda_bf16.h; its cccl/
    /// subdirectory holds CUB). Empty: $KFORGE_CUDA_INCLUDE when set and non-empty, else the
    /// directory of the CUDA toolkit found when this library was configured.
    /// `compilerExecutable` is the kforge-nvrtc to run; empty: nvrtcCompilerPath(). Nothing is
    /// started before the first compile.
    explicit NvrtcCompiler(std::string cudaIncludeDir = {}, std::string compilerExecutable = {});

    Result<CompiledKernel> compile(const std::string& source, const CompileOptions& options,
                                   const std::string& sourceName = "candidate.cu") const;

    /// The exact NVRTC option list compile() uses; InvalidArgument for a malformed architecture.
    Result<std::vector<std::string>> nvrtcOptions(const CompileOptions& options) const;

    /// SHA-256 (hex) over a length-prefixed serialization of: NVRTC version, source name, source,
    /// architecture, the full NVRTC option list in order, and the include directory. Everything that
    /// changes NVRTC's output or log is in it, except the contents of headers outside the source
    /// (toolkit headers are pinned by the NVRTC version and include directory; a header that a
    /// candidate pulls in through an extra -I option is hashed by path only).
    Result<std::string> cacheKey(const std::string& source, const CompileOptions& options,
                                 const std::string& sourceName = "candidate.cu") const;

    const std::string& cudaIncludeDir() const { return m_cudaIncludeDir; }
    /// The kforge-nvrtc this compiler runs.
    const std::string& compilerExecutable() const;
    /// "major.minor" from nvrtcVersion(), e.g. "13.0".
    const std::string& nvrtcVersion() const { return m_nvrtcVersion; }

    /// sm_NN, sm_NNN, optionally followed by 'a' (arch-specific) or 'f' (family), e.g. sm_90a.
    static bool isValidArchitecture(std::string_view architecture);
    /// The virtual architecture of a valid real one: sm_90a -> compute_90a.
    static std::string virtualArchitecture(std::string_view architecture);

private:
    Result<CompiledKernel> toCompiledKernel(NvrtcCompileReply reply, std::string key, const std::string& architecture,
                                            const std::string& sourceName) const;

    std::string m_cudaIncludeDir;
    std::string m_nvrtcVersion;
    std::shared_ptr<NvrtcProcessPool> m_processes;
};

} // namespace kforge::core
