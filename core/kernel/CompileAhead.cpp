#include "kernel/CompileAhead.h"

#include <algorithm>

namespace kforge::core {

CompileAhead::CompileAhead(CachingCompiler& compiler, std::size_t threads) : m_compiler(compiler)
{
    if (threads == 0) {
        const std::size_t hardware = std::thread::hardware_concurrency();
        threads = std::clamp<std::size_t>(hardware > 1 ? hardware - 1 : 1, 1, 4);
    }
    for (std::size_t i = 0; i < threads; ++i)
        m_threads.emplace_back([this](std::stop_token stop) { work(stop); });
}

CompileAhead::~CompileAhead()
{
    {
        std::lock_guard lock(m_mutex);
        m_pending.clear();
    }
    m_stopping = true;
    for (std::jthread& thread : m_threads)
        thread.request_stop();
    m_wake.notify_all();
    // jthread joins on destruction; a running compile ends as Cancelled first.
}

void CompileAhead::submit(std::vector<CompileJob> jobs)
{
    {
        std::lock_guard lock(m_mutex);
        m_pending.assign(std::make_move_iterator(jobs.begin()), std::make_move_iterator(jobs.end()));
    }
    m_wake.notify_all();
}

std::size_t CompileAhead::completed() const
{
    std::lock_guard lock(m_mutex);
    return m_completed;
}

void CompileAhead::work(std::stop_token stop)
{
    for (;;) {
        CompileJob job;
        {
            std::unique_lock lock(m_mutex);
            if (!m_wake.wait(lock, stop, [this] { return !m_pending.empty(); }))
                return; // stop requested
            job = std::move(m_pending.front());
            m_pending.pop_front();
        }
        // The outcome lands in the compiler's cache; errors (which are not cached) are met again,
        // and reported, when the search compiles the candidate itself.
        job.options.stop = &m_stopping;
        (void)m_compiler.compile(job.source, job.options, "candidate.cu");
        std::lock_guard lock(m_mutex);
        ++m_completed;
    }
}

} // namespace kforge::core
