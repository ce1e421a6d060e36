#include "cast/KernelSpeedCheck.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace kforge::core {

namespace {

std::string formatPercent(double fraction)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f%%", fraction * 100.0);
    return text;
}

} // namespace

double medianOf(std::vector<double> values)
{
    if (values.empty())
        return 0.0;
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

int passesPerMeasurement(double passMs, const KernelSpeedCheckOptions& options)
{
    const int most = std::max(options.passesPerMeasure, options.maxPassesPerMeasure);
    if (!(passMs > 0)) // unknown (or a clock that did not move): as many as allowed
        return most;
    const double wanted = std::ceil(options.minMeasureMs / passMs);
    return static_cast<int>(std::clamp(wanted, double(options.passesPerMeasure), double(most)));
}

Result<KernelSpeedCheck> checkKernelSpeed(const std::set<std::string>& kernels, const TimeKernelSet& timeWith,
                                          const KernelSpeedCheckOptions& options)
{
    KernelSpeedCheck check;
    check.kept = kernels;
    if (kernels.empty())
        return check;
    if (auto warm = timeWith(kernels); !warm) // the kernels' first launches and the allocator
        return warm.error();

    // Step 3: each kernel's removal against the full set, interleaved.
    std::map<std::string, std::vector<double>> ratios; // full-set time / time without the kernel
    for (int round = 0; round < options.rounds; ++round) {
        auto full = timeWith(kernels);
        if (!full)
            return full.error();
        for (const std::string& id : kernels) {
            std::set<std::string> without = kernels;
            without.erase(id);
            auto ms = timeWith(without);
            if (!ms)
                return ms.error();
            ratios[id].push_back(full.value() / ms.value());
        }
    }
    for (const auto& [id, values] : ratios) {
        const double ratio = medianOf(values);
        if (ratio > 1.0 + options.dropThreshold) {
            check.kept.erase(id);
            check.dropped.push_back({id, "in-model check: the model ran " + formatPercent(ratio - 1.0) +
                                             " faster without it"});
        }
    }
    if (check.kept.empty())
        return check;

    // Step 4: the kernels left against none, interleaved.
    std::vector<double> keptTimes, noneTimes, keptOverNone;
    for (int round = 0; round < options.rounds; ++round) {
        auto kept = timeWith(check.kept);
        if (!kept)
            return kept.error();
        auto none = timeWith({});
        if (!none)
            return none.error();
        keptTimes.push_back(kept.value());
        noneTimes.push_back(none.value());
        keptOverNone.push_back(kept.value() / none.value());
    }
    check.comparedCount = check.kept.size();
    check.keptMs = medianOf(keptTimes);
    check.noneMs = medianOf(noneTimes);
    const double slowdown = medianOf(keptOverNone);
    if (slowdown > 1.0 + options.dropThreshold) {
        const std::string reason = "in-model check: the model ran " + formatPercent(slowdown - 1.0) + " slower with the " +
                                   std::to_string(check.kept.size()) + " kernels left than with none";
        for (const std::string& id : check.kept)
            check.dropped.push_back({id, reason});
        check.kept.clear();
    }
    return check;
}

} // namespace kforge::core
