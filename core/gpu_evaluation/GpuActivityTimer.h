#pragma once
// GPU time of exactly the work launched inside a bracket, from CUPTI activity records: kernels,
// memsets and memcpys whose launch happened between begin(tag) and end() are summed per tag.
// Work launched outside any bracket (the L2 flush, copies of inputs) is not counted, and work
// that another stream runs later is still attributed to the bracket that launched it.
//
// Internal to the GPU worker (CUDA build only). Thread: one timer per process, used from the thread
// that launches the work. CUPTI allows one activity subscriber: if it cannot be enabled (a profiler
// is attached, or insufficient privileges) create() fails and the caller falls back to CUDA events.

#include "util/Result.h"

#include <cstdint>
#include <map>
#include <memory>

namespace kforge::core {

class GpuActivityTimer {
public:
    /// Enables CUPTI activity recording for kernels, memsets and memcpys.
    static Result<std::unique_ptr<GpuActivityTimer>> create();
    ~GpuActivityTimer();
    GpuActivityTimer(const GpuActivityTimer&) = delete;
    GpuActivityTimer& operator=(const GpuActivityTimer&) = delete;

    /// Work launched from now until end() on this thread is attributed to `tag` (tag > 0).
    void begin(std::uint64_t tag);
    void end();

    struct TagTime {
        double gpuNs = 0;   // sum of the durations of the tag's activities
        int activities = 0; // how many kernels/memsets/memcpys
    };
    /// Waits for queued work, flushes CUPTI's buffers and returns the time per tag collected since
    /// the previous collect(). Records that CUPTI dropped make this an error (never a silent undercount).
    Result<std::map<std::uint64_t, TagTime>> collect();

    /// What the last collect() saw: activity records, external-correlation records, and activities
    /// matched to a tag (for diagnosing a timer that attributes nothing).
    struct Stats {
        size_t activities = 0;
        size_t correlations = 0;
        size_t matched = 0;
    };
    const Stats& lastStats() const { return m_lastStats; }

private:
    GpuActivityTimer() = default;
    Stats m_lastStats;
};

} // namespace kforge::core
