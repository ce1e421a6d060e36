#pragma once
// A long command's job on a worker thread while the main thread shows its progress, with Ctrl-C
// turned into a clean stop: the signal only sets a flag that the job polls (its stop token), so the
// job ends where it is safe and writes nothing half-done. Used by `kforge capture` and `kforge export`.

#include <atomic>
#include <chrono>
#include <csignal>
#include <optional>
#include <thread>
#include <utility>

namespace kforge::cli {

/// Set by SIGINT (and SIGTERM where asked) while runInterruptible runs; pass it to the job as its
/// stop token. Lock-free, so setting it is safe in a signal handler.
inline std::atomic<bool> g_interruptRequested{false};

/// Calls `work()` on a thread and, every 100 ms until it returns, `tick()` on this one. Meanwhile
/// SIGINT, and SIGTERM when `alsoSigterm`, set g_interruptRequested; the previous handlers are
/// restored afterwards. Returns what `work()` returned.
template <class Work, class Tick>
auto runInterruptible(Work work, Tick tick, bool alsoSigterm) -> decltype(work())
{
    const auto requestStop = [](int) { g_interruptRequested = true; };
    auto previousInt = std::signal(SIGINT, requestStop);
    auto previousTerm = alsoSigterm ? std::signal(SIGTERM, requestStop) : SIG_DFL;
    std::optional<decltype(work())> result;
    std::atomic<bool> finished{false};
    std::thread worker([&] {
        result.emplace(work());
        finished = true;
    });
    while (!finished) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        tick();
    }
    worker.join();
    std::signal(SIGINT, previousInt);
    if (alsoSigterm)
        std::signal(SIGTERM, previousTerm);
    return std::move(*result);
}

} // namespace kforge::cli
