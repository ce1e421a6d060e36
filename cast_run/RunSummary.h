#pragma once
// Plain results of whole-model runs (kforge-cast-run), torch-free.

#include <string>

namespace kforge::runtime {

struct LatencySummary {
    double medianMs = 0, minMs = 0, maxMs = 0;
};

/// How far a run's outputs are from eager's (ModelHarness.h, compareModelOutputs).
struct OutputDifference {
    bool withinTolerance = true;
    double maxAbsDiff = 0;
    std::string tolerance;       // "atol 1e-05, rtol 0.0001" (element-wise), or the float64 criterion
    std::string detail;          // the first failure, as the evaluator describes it; empty when within
    bool againstFloat64 = false; // judged with core/checks/ModelAccuracy.h instead of element-wise
    double worstErrorRatio = 0;  // against float64: max over outputs of candidate / eager error
    std::string float64Error;    // element-wise: why the model could not be run in float64
};

} // namespace kforge::runtime
