#pragma once
// NvrtcCompiler behind a CompileCache: what the engine calls to turn a candidate into a cubin.

#include "kernel/CompileCache.h"
#include "kernel/NvrtcCompiler.h"
#include "util/Result.h"

#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace kforge::core {

/// compile() looks the candidate up by NvrtcCompiler::cacheKey(); on a miss it compiles with NVRTC
/// and stores the outcome, failed compiles included. A hit returns the stored kernel with
/// fromCache=true and compileMs=0. Result errors (bad architecture, NVRTC itself failing, a stop)
/// and unfinished compiles (CompiledKernel::unfinished: a timeout, the NVRTC process died) are
/// never cached. CompileOptions::timeout and stop are not part of the key.
///
/// Threads: compile() may be called from any number of threads at once. Concurrent calls for the same
/// key compile once: the others wait for that compile and receive its outcome as a cache hit
/// (fromCache=true, compileMs=0). A waiter honours its own stop flag (Cancelled), and when the
/// compile it waited for was stopped by its caller, it compiles the source itself. Calls for
/// different keys compile in parallel on their own threads.
class CachingCompiler {
public:
    /// Memory-only cache of the default capacity unless a directory is given.
    explicit CachingCompiler(std::filesystem::path diskDirectory = {});
    CachingCompiler(NvrtcCompiler compiler, std::shared_ptr<CompileCache> cache);

    CachingCompiler(const CachingCompiler&) = delete;
    CachingCompiler& operator=(const CachingCompiler&) = delete;

    Result<CompiledKernel> compile(const std::string& source, const CompileOptions& options,
                                   const std::string& sourceName = "candidate.cu");

    const NvrtcCompiler& compiler() const { return m_compiler; }
    CompileCache& cache() { return *m_cache; }

private:
    using SharedOutcome = std::shared_future<Result<CompiledKernel>>;

    const NvrtcCompiler m_compiler;
    const std::shared_ptr<CompileCache> m_cache;

    std::mutex m_inFlightMutex;
    std::map<std::string, SharedOutcome> m_inFlight; // key -> compile under way; guarded by m_inFlightMutex
};

} // namespace kforge::core
