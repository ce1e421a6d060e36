#include "checks/ModelAccuracy.h"

#include <cmath>
#include <limits>

namespace kforge::core {

namespace {

// Unit roundoff of each format (half an ulp at 1.0).
double unitRoundoff(const std::string& dtype)
{
    if (dtype == "float64")
        return 1.1e-16;
    if (dtype == "float16")
        return 4.9e-4;
    if (dtype == "bfloat16")
        return 3.9e-3;
    return 6.0e-8; // float32 and anything else floating
}

} // namespace

double relativeRmse(const double* a, const double* reference, std::int64_t n)
{
    double diff = 0, norm = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        if (!std::isfinite(reference[i])) {
            // Eager's float64 run overflowed or produced NaN: the other side must match it.
            if (!(std::isnan(reference[i]) ? std::isnan(a[i]) : a[i] == reference[i]))
                return std::numeric_limits<double>::infinity();
            continue;
        }
        if (!std::isfinite(a[i]))
            return std::numeric_limits<double>::infinity();
        diff += (a[i] - reference[i]) * (a[i] - reference[i]);
        norm += reference[i] * reference[i];
    }
    if (norm == 0)
        return diff == 0 ? 0.0 : std::numeric_limits<double>::infinity();
    return std::sqrt(diff / norm);
}

GoldenVerdict judgeAgainstGolden(double candidateError, double eagerError, const std::string& dtype)
{
    GoldenVerdict verdict;
    verdict.candidateError = candidateError;
    verdict.eagerError = eagerError;
    verdict.bound = kGoldenMultiplier * eagerError + unitRoundoff(dtype);
    verdict.passed = std::isfinite(candidateError) && candidateError <= verdict.bound;
    return verdict;
}

} // namespace kforge::core
