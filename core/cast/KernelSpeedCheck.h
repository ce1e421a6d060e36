#pragma once
// The timing half of export's in-model check (docs/cast-format.md, "In-model check", steps 3-4),
// torch-free: the caller supplies a function that times the model with exactly a given set of
// custom kernels enabled, so the decisions are tested on the CPU with a simulated model.
//
// 3. Each kernel's removal is timed against the full set, interleaved over `rounds` rounds; a
//    kernel whose removal makes the model faster by more than `dropThreshold` (median of the
//    per-round ratios) is dropped.
// 4. The kernels left are timed against none, interleaved again; when the model runs slower with
//    them than with none by more than `dropThreshold`, they are all dropped. Kernels whose removals
//    each cost less than the noise can still add up to a slower model (a host-bound model where
//    every launch costs more than the kernel saves), and a package must never make the model slower.

#include "cast/CastExport.h"
#include "util/Result.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace kforge::core {

struct KernelSpeedCheckOptions {
    int rounds = 5;              // interleaved timing rounds
    int passesPerMeasure = 3;    // fewest forward passes per configuration per round (median); used by the caller
    double minMeasureMs = 20.0;  // a measurement's passes together last at least this long...
    int maxPassesPerMeasure = 50; // ...within this many passes (host jitter swamps one 2 ms pass)
    double dropThreshold = 0.01; // 1%: below the run-to-run noise of a whole model, above none
};

/// Forward passes per measurement for a model whose one pass takes `passMs`: enough to last
/// minMeasureMs, within [passesPerMeasure, maxPassesPerMeasure].
int passesPerMeasurement(double passMs, const KernelSpeedCheckOptions& options);

/// Milliseconds of one measurement of the model with exactly `enabled` kernels on (the caller's
/// median of a few forward passes); an Error stops the check.
using TimeKernelSet = std::function<Result<double>(const std::set<std::string>& enabled)>;

struct KernelSpeedCheck {
    std::set<std::string> kept;
    std::vector<DroppedKernel> dropped; // reasons start with "in-model check: "
    std::size_t comparedCount = 0; // kernels timed against none in step 4
    double keptMs = 0;             // their median over the rounds of step 4 (0 when step 4 did not run)
    double noneMs = 0;
};

/// Steps 3 and 4 above on `kernels` (all of which passed the output check). Warms the full set once
/// before timing.
Result<KernelSpeedCheck> checkKernelSpeed(const std::set<std::string>& kernels, const TimeKernelSet& timeWith,
                                          const KernelSpeedCheckOptions& options);

/// The median of `values` (the mean of the middle two for an even count); 0 for none.
double medianOf(std::vector<double> values);

} // namespace kforge::core
