#pragma once
// Ctrl-C (and SIGTERM where asked) for the long commands (`kforge capture`, `bench`, `export`,
// `optimize`): a clean stop instead of a kill. One scheme for all of them:
//
// - InterruptSignals, made first thing in the command (before any thread or child starts), blocks
//   the signals in the calling thread, so every thread started after it inherits the block; the
//   command's main thread then takes them synchronously (sigtimedwait) and turns them into
//   g_interruptRequested, the stop token the job polls. No thread runs a handler in the middle of
//   its work (NVRTC's own SIGINT handler once exited the process from inside a compile).
// - A handler that only sets the flag is installed as well, for a thread that existed before the
//   block (a library's), so that a signal delivered there is not the default kill.
// - Child processes are spawned with an empty signal mask (core/util/ChildProcess, WorkerClient):
//   they get Ctrl-C from the terminal as they would without kforge.
// The previous mask and handlers are restored on destruction, after any signal still pending was
// taken.

#include <atomic>
#include <chrono>
#include <csignal>
#include <ctime>
#include <optional>
#include <pthread.h>
#include <thread>
#include <utility>

namespace kforge::cli {

/// Set by SIGINT (and SIGTERM where asked) while an InterruptSignals exists; pass it to the job as
/// its stop token. Lock-free, so setting it is safe in a signal handler.
inline std::atomic<bool> g_interruptRequested{false};

class InterruptSignals {
public:
    explicit InterruptSignals(bool alsoSigterm) : m_alsoSigterm(alsoSigterm)
    {
        sigemptyset(&m_set);
        sigaddset(&m_set, SIGINT);
        if (alsoSigterm)
            sigaddset(&m_set, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &m_set, &m_oldMask);
        struct sigaction flagOnly {};
        flagOnly.sa_handler = [](int) { g_interruptRequested = true; };
        sigemptyset(&flagOnly.sa_mask);
        sigaction(SIGINT, &flagOnly, &m_oldInt);
        if (alsoSigterm)
            sigaction(SIGTERM, &flagOnly, &m_oldTerm);
    }
    ~InterruptSignals()
    {
        while (dequeue(std::chrono::milliseconds(0))) {}
        sigaction(SIGINT, &m_oldInt, nullptr);
        if (m_alsoSigterm)
            sigaction(SIGTERM, &m_oldTerm, nullptr);
        pthread_sigmask(SIG_SETMASK, &m_oldMask, nullptr);
    }
    InterruptSignals(const InterruptSignals&) = delete;
    InterruptSignals& operator=(const InterruptSignals&) = delete;

    /// Waits up to `wait` for one of the signals; true (and g_interruptRequested set) when one came,
    /// or when the flag handler caught one on another thread.
    bool taken(std::chrono::milliseconds wait)
    {
        if (dequeue(wait))
            g_interruptRequested = true;
        return g_interruptRequested.load();
    }

private:
    /// Takes one pending signal of the set, waiting up to `wait`; false when none came.
    bool dequeue(std::chrono::milliseconds wait)
    {
        timespec timeout{static_cast<time_t>(wait.count() / 1000), static_cast<long>(wait.count() % 1000) * 1000000L};
        const int signal = sigtimedwait(&m_set, nullptr, &timeout);
        return signal == SIGINT || signal == SIGTERM;
    }

    bool m_alsoSigterm;
    sigset_t m_set;
    sigset_t m_oldMask;
    struct sigaction m_oldInt {};
    struct sigaction m_oldTerm {};
};

/// Calls `work()` on a thread and, every 100 ms until it returns, `tick()` on this one, which takes
/// the signals of `signals` meanwhile. Returns what `work()` returned.
template <class Work, class Tick>
auto runInterruptible(InterruptSignals& signals, Work work, Tick tick) -> decltype(work())
{
    std::optional<decltype(work())> result;
    std::atomic<bool> finished{false};
    std::thread worker([&] {
        result.emplace(work());
        finished = true;
    });
    while (!finished) {
        signals.taken(std::chrono::milliseconds(100));
        tick();
    }
    worker.join();
    return std::move(*result);
}

} // namespace kforge::cli
