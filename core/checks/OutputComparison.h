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

} // namespace kforge::core
