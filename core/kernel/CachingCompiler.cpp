#include "kernel/CachingCompiler.h"

#include <chrono>
#include <exception>
#include <optional>

namespace kforge::core {
namespace {

Result<CompiledKernel> asHit(Result<CompiledKernel> outcome)
{
    if (outcome) {
        outcome->fromCache = true;
        outcome->compileMs = 0;
    }
    return outcome;
}

// The outcome of another thread's compile, or nothing when `stop` is set first.
std::optional<Result<CompiledKernel>> waitFor(const std::shared_future<Result<CompiledKernel>>& pending,
                                              const std::atomic<bool>* stop)
{
    if (stop) {
        while (pending.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
            if (stop->load())
                return std::nullopt;
        }
    }
    return pending.get();
}

} // namespace

CachingCompiler::CachingCompiler(std::filesystem::path diskDirectory)
    : CachingCompiler(NvrtcCompiler(), std::make_shared<CompileCache>(std::move(diskDirectory)))
{
}

CachingCompiler::CachingCompiler(NvrtcCompiler compiler, std::shared_ptr<CompileCache> cache)
    : m_compiler(std::move(compiler)), m_cache(cache ? std::move(cache) : std::make_shared<CompileCache>())
{
}

Result<CompiledKernel> CachingCompiler::compile(const std::string& source, const CompileOptions& options,
                                                const std::string& sourceName)
{
    Result<std::string> key = m_compiler.cacheKey(source, options, sourceName);
    if (!key)
        return key.error();
    for (;;) {
        if (std::optional<CompiledKernel> hit = m_cache->lookup(*key))
            return std::move(*hit);

        std::promise<Result<CompiledKernel>> promise;
        {
            std::unique_lock lock(m_inFlightMutex);
            if (auto it = m_inFlight.find(*key); it != m_inFlight.end()) {
                SharedOutcome pending = it->second;
                lock.unlock();
                std::optional<Result<CompiledKernel>> joined = waitFor(pending, options.stop);
                if (!joined)
                    return makeError(ErrorCode::Cancelled, "stopped while waiting for the same compile", "NVRTC");
                // The other caller was stopped, not this one: compile it here.
                if (!*joined && joined->error().code == ErrorCode::Cancelled)
                    continue;
                return asHit(std::move(*joined));
            }
            // Another thread may have stored it between our lookup and taking the lock.
            if (std::optional<CompiledKernel> hit = m_cache->lookupInMemory(*key))
                return std::move(*hit);
            m_inFlight.emplace(*key, promise.get_future().share());
        }

        // Waiters block on the promise, so it is fulfilled on every path (NvrtcCompiler reports
        // through Result; only allocation failure could throw here).
        Result<CompiledKernel> outcome = makeError(ErrorCode::Internal, "compile did not run", "NVRTC");
        try {
            outcome = m_compiler.compile(source, options, sourceName);
        } catch (const std::exception& e) {
            outcome = makeError(ErrorCode::Internal, std::string("compile failed: ") + e.what(), "NVRTC");
        }
        // An unfinished compile (timeout, the NVRTC process died) says nothing lasting about the source.
        if (outcome && outcome->unfinished.empty())
            m_cache->store(*key, *outcome);
        promise.set_value(outcome);
        {
            std::lock_guard lock(m_inFlightMutex);
            m_inFlight.erase(*key);
        }
        return outcome;
    }
}

} // namespace kforge::core
