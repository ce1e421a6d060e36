#include "checks/OutputComparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kforge::core {
namespace {

std::vector<std::int64_t> coordinatesOf(std::int64_t flat, const std::vector<std::int64_t>& sizes)
{
    std::vector<std::int64_t> coordinates(sizes.size(), 0);
    for (size_t d = sizes.size(); d-- > 0;) {
        if (sizes[d] > 0) {
            coordinates[d] = flat % sizes[d];
            flat /= sizes[d];
        }
    }
    return coordinates;
}

std::string formatValue(double value)
{
    char text[40];
    std::snprintf(text, sizeof text, "%.9g", value);
    return text;
}

// Whether a (got, expected) pair is acceptable, and why not (into `why` where given: only the first
// bad element's reason is kept, and formatting one for each of millions would take seconds).
bool acceptable(double got, double expected, const Tolerance& tolerance, std::string* why)
{
    if (std::isnan(expected) || std::isnan(got)) {
        if (std::isnan(expected) && std::isnan(got))
            return true;
        if (why)
            *why = std::isnan(got) ? "NaN where eager has a number" : "a number where eager has NaN";
        return false;
    }
    if (std::isinf(expected) || std::isinf(got)) {
        if (got == expected)
            return true;
        if (why)
            *why = "infinity mismatch";
        return false;
    }
    if (tolerance.exact) {
        if (got == expected)
            return true;
        if (why)
            *why = "not equal (exact comparison)";
        return false;
    }
    const double diff = std::fabs(got - expected);
    if (diff <= tolerance.atol + tolerance.rtol * std::fabs(expected))
        return true;
    if (why)
        *why = "|diff| " + formatValue(diff) + " > " + tolerance.describe() + " * |expected|";
    return false;
}

std::string multiplierText(double multiplier)
{
    return formatValue(multiplier) + "x eager's error vs float64";
}

// compareWithGolden's rule for one element, with eager's error `eagerError` (its own at the
// element, or for a scan the largest so far along the line).
bool acceptableAgainstGolden(double got, double eager, double golden, double eagerError, const Tolerance& tolerance,
                             double multiplier, std::string* why)
{
    if (!std::isfinite(got) || !std::isfinite(eager) || !std::isfinite(golden))
        return acceptable(got, eager, tolerance, why); // NaN/Inf where eager has them, or no exact value
    const double error = std::fabs(got - golden);
    if (error <= multiplier * eagerError + tolerance.atol + tolerance.rtol * std::fabs(golden))
        return true;
    if (why)
        *why = "|got - float64| " + formatValue(error) + " > " + multiplierText(multiplier) + " (eager " +
            formatValue(eager) + ", error " + formatValue(eagerError) + ") + " + tolerance.describe() + " * |float64|";
    return false;
}

} // namespace

std::string ComparisonResult::describe(const Tolerance& tolerance) const
{
    if (passed)
        return "all " + std::to_string(elements) + " elements within " + tolerance.describe() + " (max abs error " +
            formatValue(maxAbsError) + ")";
    std::string where = "[";
    for (size_t i = 0; i < firstBadCoordinates.size(); ++i)
        where += (i ? "," : "") + std::to_string(firstBadCoordinates[i]);
    where += "]";
    return std::to_string(mismatches) + " of " + std::to_string(elements) + " elements differ; first at " + where +
        ": got " + formatValue(firstBadGot) + ", expected " + formatValue(firstBadExpected) + " (" + reason +
        "); max abs error " + formatValue(maxAbsError);
}

namespace {

// The element loop both comparisons share: `acceptableAt(i, why)` judges element i (its reason into
// *why until the first bad element has one, then why is null), and the errors, the first bad element
// and its "expected" are measured against `reference`.
template <typename Judge>
ComparisonResult compareElements(const double* got, const double* reference, const std::vector<std::int64_t>& sizes,
                                 Judge acceptableAt)
{
    ComparisonResult result;
    std::int64_t count = 1;
    for (std::int64_t s : sizes)
        count *= s;
    result.elements = count;
    for (std::int64_t i = 0; i < count; ++i) {
        std::string why;
        const bool ok = acceptableAt(i, result.firstBadIndex < 0 ? &why : nullptr);
        if (std::isfinite(got[i]) && std::isfinite(reference[i])) {
            const double diff = std::fabs(got[i] - reference[i]);
            result.maxAbsError = std::max(result.maxAbsError, diff);
            if (reference[i] != 0)
                result.maxRelError = std::max(result.maxRelError, diff / std::fabs(reference[i]));
        }
        if (ok)
            continue;
        ++result.mismatches;
        if (result.firstBadIndex < 0) {
            result.firstBadIndex = i;
            result.firstBadCoordinates = coordinatesOf(i, sizes);
            result.firstBadGot = got[i];
            result.firstBadExpected = reference[i];
            result.reason = why;
        }
    }
    result.passed = result.mismatches == 0;
    return result;
}

} // namespace

ComparisonResult compareOutputs(const double* got, const double* expected, const std::vector<std::int64_t>& sizes,
                                const Tolerance& tolerance)
{
    return compareElements(got, expected, sizes, [&](std::int64_t i, std::string* why) {
        return acceptable(got[i], expected[i], tolerance, why);
    });
}

ComparisonResult compareWithGolden(const double* got, const double* eager, const double* golden,
                                   const std::vector<std::int64_t>& sizes, const Tolerance& tolerance,
                                   double multiplier)
{
    if (tolerance.exact)
        return compareOutputs(got, eager, sizes, tolerance);
    return compareElements(got, golden, sizes, [&](std::int64_t i, std::string* why) {
        return acceptableAgainstGolden(got[i], eager[i], golden[i], std::fabs(eager[i] - golden[i]), tolerance,
                                       multiplier, why);
    });
}

ComparisonResult compareScanWithGolden(const double* got, const double* eager, const double* golden,
                                       const std::vector<std::int64_t>& sizes, std::size_t dim,
                                       const Tolerance& tolerance, double multiplier)
{
    if (tolerance.exact || dim >= sizes.size())
        return compareWithGolden(got, eager, golden, sizes, tolerance, multiplier);
    const std::int64_t length = std::max<std::int64_t>(sizes[dim], 1);
    std::int64_t inner = 1;
    for (std::size_t d = dim + 1; d < sizes.size(); ++d)
        inner *= std::max<std::int64_t>(sizes[d], 1);
    // Element i = (outer * length + step) * inner + column: compareElements visits them in order, so
    // one running maximum per column, restarted at step 0, is eager's largest error so far.
    std::vector<double> largest(static_cast<std::size_t>(inner), 0.0);
    return compareElements(got, golden, sizes, [&](std::int64_t i, std::string* why) {
        double& level = largest[static_cast<std::size_t>(i % inner)];
        if ((i / inner) % length == 0)
            level = 0;
        if (std::isfinite(eager[i]) && std::isfinite(golden[i]))
            level = std::max(level, std::fabs(eager[i] - golden[i]));
        return acceptableAgainstGolden(got[i], eager[i], golden[i], level, tolerance, multiplier, why);
    });
}

std::string describeGoldenComparison(const ComparisonResult& result, const Tolerance& tolerance, double multiplier,
                                     bool scan)
{
    if (tolerance.exact)
        return result.describe(tolerance);
    const std::string against = scan ? "the scan run in float64" : "the chain run in float64";
    if (result.passed)
        return "all " + std::to_string(result.elements) + " elements within " + multiplierText(multiplier) +
            (scan ? " (its largest so far along the scanned dim)" : "") + " + " + tolerance.describe() +
            " * |float64| of " + against +
            (scan ? " (eager rounds every step" : " (eager rounds every member's output") +
            "; max abs error vs float64 " + formatValue(result.maxAbsError) + ")";
    return "against " + against + ": " + result.describe(tolerance);
}

} // namespace kforge::core
