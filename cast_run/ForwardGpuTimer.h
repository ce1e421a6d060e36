#pragma once
// The GPU time of one forward pass of a whole model, without the host's launch overhead: the pass is
// enqueued while a spin kernel (at::cuda::sleep) keeps the GPU busy, so the CUDA events around it
// see the model's kernels (and the gaps between them) run back to back, whatever Python or
// TorchScript's interpreter cost on the host. Export's in-model check decides each kernel's removal
// by this time: on a host-bound model the wall time moves by more than one kernel saves (host
// drift between rounds), and kernels were dropped on noise. bench/card_bench.py
// model_device_time_ms measures the same way from Python. CUDA builds only.

#include "ModelHarness.h"
#include "util/Result.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kforge::runtime {

class ForwardGpuTimer {
public:
    /// Measures the spin kernel's rate and the host's time to enqueue one forward pass (the
    /// slowest of `passes`), and sizes the spin to three times that.
    static core::Result<ForwardGpuTimer> calibrate(ModelHarness& harness, int passes = 3);

    /// One pass's GPU time in milliseconds. When the spin had finished before the host finished
    /// enqueuing the pass (the GPU may then have waited for the host), the spin is doubled and the
    /// pass timed again, twice at most; then an error: the time would include the host's.
    core::Result<double> milliseconds(ModelHarness& harness);
    /// The median of `passes` such times; the first error stops it.
    core::Result<double> medianMilliseconds(ModelHarness& harness, int passes);

private:
    explicit ForwardGpuTimer(std::int64_t spinCycles) : m_spinCycles(spinCycles) {}

    std::int64_t m_spinCycles;
};

/// A ForwardGpuTimer for callers that fall back to wall time: calibrated at construction, off from
/// its first failure on (a forward pass that synchronizes stays one), note() saying why.
class GpuTimeWhereIsolated {
public:
    explicit GpuTimeWhereIsolated(ModelHarness& harness);

    /// The median of `passes` GPU times, or nullopt when the timer is off or fails now; `side`
    /// ("eager", ...) names the measurement in the note when given.
    std::optional<double> medianMilliseconds(ModelHarness& harness, int passes, const std::string& side = {});
    /// "GPU time not measured[ (side)]: why"; empty while every measurement succeeded.
    const std::string& note() const { return m_note; }

private:
    std::optional<ForwardGpuTimer> m_timer;
    std::string m_note;
};

} // namespace kforge::runtime
