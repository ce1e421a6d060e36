#pragma once
// Whole-model output accuracy against a float64 reference ("golden"), for export's in-model check
// and `kforge run`. An element-wise tolerance is the wrong test for a whole model: a deep network
// amplifies one-ulp differences of any kernel (eager's own among them), and some eager models are
// not even reproducible run to run at that tolerance. What matters is that the packaged kernels do
// not make the model less accurate than eager is. So both eager's output and the candidate's are
// compared with the same model run in float64, and the candidate may be at most `multiplier`
// times as far from it as eager is, plus the unit roundoff of the output dtype (the error of one
// rounding, which eager can have by luck close to zero). This is the criterion PyTorch's own
// compiler benchmarks use for the same question (an fp64 reference, relative RMSE, multiplier 2).
// Torch-free so that the arithmetic is unit-tested in CI.

#include <cstdint>
#include <string>

namespace kforge::core {

/// sqrt(mean((a - reference)^2)) / sqrt(mean(reference^2)) over `n` values (0 when both are 0;
/// +inf when `a` has a NaN or infinity where the reference has a finite value).
double relativeRmse(const double* a, const double* reference, std::int64_t n);

struct GoldenVerdict {
    bool passed = false;
    double candidateError = 0; // relative RMSE of the candidate's output vs float64
    double eagerError = 0;     // relative RMSE of eager's output vs float64
    double bound = 0;          // what candidateError had to stay within
};

constexpr double kGoldenMultiplier = 2.0;

/// The verdict for one floating output of canonical dtype `dtype` ("bfloat16").
GoldenVerdict judgeAgainstGolden(double candidateError, double eagerError, const std::string& dtype);

} // namespace kforge::core
