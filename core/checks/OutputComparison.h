#pragma once
// Element-by-element comparison of a candidate's output with eager's, on host buffers widened to
// double. The result says whether it passed and, if not, where and by how much (the text feeds the
// GUI log and LLM repair prompts). Torch-free so that the arithmetic is unit-tested in CI.

#include "checks/Tolerance.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::core {

struct ComparisonResult {
    bool passed = true;
    std::int64_t elements = 0;
    std::int64_t mismatches = 0;                   // elements outside tolerance (NaN/Inf mismatches included)
    std::int64_t firstBadIndex = -1;               // flat index in logical (row-major) order
    std::vector<std::int64_t> firstBadCoordinates; // the same, per dimension
    double firstBadGot = 0;
    double firstBadExpected = 0;
    double maxAbsError = 0; // over finite pairs
    double maxRelError = 0; // |got - exp| / |exp| over finite pairs with exp != 0
    std::string reason;     // empty when passed

    /// "3 of 4096 elements differ; first at [0,17]: got 0.25, expected 0.5 (|diff| 0.25 > atol 1e-05 + rtol 0.0001 *
    /// |expected|); max abs error 0.25"
    std::string describe(const Tolerance& tolerance) const;
};

/// Compares two buffers of `sizes` (row-major logical order). NaN must face NaN, +Inf +Inf, -Inf -Inf.
ComparisonResult compareOutputs(const double* got, const double* expected, const std::vector<std::int64_t>& sizes,
                                const Tolerance& tolerance);

/// A fused chain's output (a region card) against the chain run in float64 (`golden`), for where
/// compareOutputs against eager fails. Eager and the kernel each round a member's output, computed
/// in different orders, so near a rounding midpoint they round it to neighbouring values; a later
/// member that cancels (batch_norm's fp16 output plus a residual) turns that one ulp of the
/// intermediate into many ulps of the result, though both are as close to the exact value. An
/// element passes when |got - golden| <= multiplier * |eager - golden|
/// + atol + rtol * |golden|: never farther from the exact value than eager is (times multiplier)
/// beyond the usual tolerance. NaN and Inf must sit where eager has them, as in compareOutputs;
/// where golden is not finite but eager is, the element is judged against eager. Exact tolerances
/// (integer and bool outputs) are compareOutputs's alone. The result's "expected" is golden.
ComparisonResult compareWithGolden(const double* got, const double* eager, const double* golden,
                                   const std::vector<std::int64_t>& sizes, const Tolerance& tolerance,
                                   double multiplier);

/// compareWithGolden for a scan along `dim` (cumsum, cumprod: eager rounds every step, so its error
/// at an element is a random walk that crosses zero, and an element where eager happens to be exact
/// says nothing about the error level reached): eager's error at an element is taken as its largest
/// so far along the scanned dim, in that element's line. A wrong prefix (a lost carry, a shifted
/// element) is off by the data's own magnitude, far above that level. Sizes row-major, `dim` < rank
/// (else compareWithGolden).
ComparisonResult compareScanWithGolden(const double* got, const double* eager, const double* golden,
                                       const std::vector<std::int64_t>& sizes, std::size_t dim,
                                       const Tolerance& tolerance, double multiplier);

/// "all 4096 elements within 2x eager's error vs float64 + atol ... (max abs error vs float64 ...)" or
/// the first failure, for compareWithGolden's (`scan`: compareScanWithGolden's) result.
std::string describeGoldenComparison(const ComparisonResult& result, const Tolerance& tolerance, double multiplier,
                                     bool scan = false);

} // namespace kforge::core
