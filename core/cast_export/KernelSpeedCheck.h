#pragma once
// The timing half of export's in-model check (docs/cast-format.md, "In-model check", steps 3-4),
// torch-free: the caller supplies a function that times the model with exactly a given set of
// custom kernels enabled, so the decisions are tested on the CPU with a simulated model.
//
// 3. Each kernel's removal is timed against the full set, interleaved over `rounds` rounds; a
//    kernel whose removal makes the model faster by more than `dropThreshold` (median of the
//    per-round ratios) is dropped. Judged by the model's GPU time where every measurement has one
//    (cast_run/ForwardGpuTimer.h: the host's launch overhead hidden), else by its wall time: on a
//    host-bound model the wall time drifts between rounds by more than one kernel saves, and
//    kernels 5x faster alone were dropped on that noise.
// 4. The kernels left are timed against none, interleaved again; when the model runs slower with
//    them than with none by more than `dropThreshold`, by its wall time or by its GPU time, they
//    are all dropped. Kernels whose removals each cost less than the noise can still add up to a
//    slower model (a host-bound model where every launch costs more than the kernel saves: the
//    wall time sees that, the GPU time does not), and a package must never make the model slower.

#include "cast_export/CastExport.h"
#include "util/Result.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace kforge::core {

struct KernelSpeedCheckOptions {
    int rounds = 5;               // interleaved timing rounds
    int passesPerMeasure = 3;     // fewest forward passes per configuration per round (median); used by the caller
    double minMeasureMs = 20.0;   // a measurement's passes together last at least this long...
    int maxPassesPerMeasure = 50; // ...within this many passes (host jitter swamps one 2 ms pass)
    int gpuPassesPerMeasure = 3;  // GPU-time passes per measurement (median; used by the caller)
    double dropThreshold = 0.01;  // 1%: below the run-to-run noise of a whole model, above none
};

/// Forward passes per measurement for a model whose one pass takes `passMs`: enough to last
/// minMeasureMs, within [passesPerMeasure, maxPassesPerMeasure].
int passesPerMeasurement(double passMs, const KernelSpeedCheckOptions& options);

/// One measurement of the model with a set of kernels on: the caller's medians of a few forward
/// passes, by wall clock (synchronized) and by GPU time (0: not measured, e.g. a model whose
/// forward pass synchronizes, so the host's time cannot be hidden).
struct ModelTime {
    double wallMs = 0;
    double gpuMs = 0;
};

/// One measurement of the model with exactly `enabled` kernels on; an Error stops the check.
using TimeKernelSet = std::function<Result<ModelTime>(const std::set<std::string>& enabled)>;

struct KernelSpeedCheck {
    std::set<std::string> kept;
    std::vector<DroppedKernel> dropped; // reasons start with "in-model check: "
    std::size_t comparedCount = 0;      // kernels timed against none in step 4
    double keptMs = 0;                  // their median wall time over the rounds of step 4 (0 when it did not run)
    double noneMs = 0;
    double keptGpuMs = 0; // the same by GPU time (0 when not every measurement had one)
    double noneGpuMs = 0;
};

/// Steps 3 and 4 above on `kernels` (all of which passed the output check). Warms the full set once
/// before timing.
Result<KernelSpeedCheck> checkKernelSpeed(const std::set<std::string>& kernels, const TimeKernelSet& timeWith,
                                          const KernelSpeedCheckOptions& options);

/// The median of `values` (the mean of the middle two for an even count); 0 for none.
double medianOf(std::vector<double> values);

} // namespace kforge::core
