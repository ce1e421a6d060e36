#pragma once
// Compiles candidates the search expects to evaluate soon on a small CPU thread pool, into a
// CachingCompiler's cache, while the GPU evaluates the current one: when the search then asks for
// one of them, the compile is a cache hit (or joins the compile already under way) instead of
// leaving the GPU idle behind NVRTC (docs/search.md, "Compiling ahead").
//
// Thread: submit() may be called from any thread. Each submit replaces the jobs not yet started
// (the newest guesses win); compiles already running finish. The destructor drops pending jobs and
// stops running compiles (their NVRTC processes are killed; a search thread waiting for one of them
// compiles the candidate itself), so it returns within tens of milliseconds.
// Each job compiles under its own CompileOptions::timeout; its CompileOptions::stop is replaced by
// the pool's own.

#include "kernel/CachingCompiler.h"

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kforge::core {

struct CompileJob {
    std::string source;
    CompileOptions options;
};

class CompileAhead {
public:
    /// `threads` 0 picks min(4, hardware threads - 1), at least 1.
    explicit CompileAhead(CachingCompiler& compiler, std::size_t threads = 0);
    ~CompileAhead();
    CompileAhead(const CompileAhead&) = delete;
    CompileAhead& operator=(const CompileAhead&) = delete;

    void submit(std::vector<CompileJob> jobs);

    /// Compiles finished by the pool (hits and misses), for tests and the run summary.
    std::size_t completed() const;
    std::size_t threadCount() const { return m_threads.size(); }

private:
    void work(std::stop_token stop);

    CachingCompiler& m_compiler;
    mutable std::mutex m_mutex;
    std::condition_variable_any m_wake;
    std::deque<CompileJob> m_pending;    // guarded by m_mutex
    std::size_t m_completed = 0;         // guarded by m_mutex
    std::atomic<bool> m_stopping{false}; // the stop flag of every compile the pool runs
    std::vector<std::jthread> m_threads;
};

} // namespace kforge::core
