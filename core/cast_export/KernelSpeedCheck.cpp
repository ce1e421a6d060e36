#include "cast_export/KernelSpeedCheck.h"

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

// Per-round ratios of two configurations, by wall time and by GPU time; the GPU ratios are used
// only when every round had both GPU times.
struct RoundRatios {
    std::vector<double> wall, gpu;
    bool gpuInEveryRound = true;

    void add(const ModelTime& numerator, const ModelTime& denominator)
    {
        wall.push_back(numerator.wallMs / denominator.wallMs);
        if (numerator.gpuMs > 0 && denominator.gpuMs > 0)
            gpu.push_back(numerator.gpuMs / denominator.gpuMs);
        else
            gpuInEveryRound = false;
    }
    bool byGpu() const { return gpuInEveryRound && !gpu.empty(); }
};

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
    std::map<std::string, RoundRatios> ratios; // full-set time / time without the kernel
    for (int round = 0; round < options.rounds; ++round) {
        auto full = timeWith(kernels);
        if (!full)
            return full.error();
        for (const std::string& id : kernels) {
            std::set<std::string> without = kernels;
            without.erase(id);
            auto time = timeWith(without);
            if (!time)
                return time.error();
            ratios[id].add(full.value(), time.value());
        }
    }
    for (const auto& [id, values] : ratios) {
        const bool byGpu = values.byGpu();
        const double ratio = medianOf(byGpu ? values.gpu : values.wall);
        if (ratio > 1.0 + options.dropThreshold) {
            check.kept.erase(id);
            check.dropped.push_back(
                {id,
                 byGpu ? "in-model check: the model's GPU time was " + formatPercent(1.0 - 1.0 / ratio) +
                         " lower without it"
                       : "in-model check: the model ran " + formatPercent(ratio - 1.0) + " faster without it"});
        }
    }
    if (check.kept.empty())
        return check;

    // Step 4: the kernels left against none, interleaved.
    std::vector<double> keptWall, noneWall, keptGpu, noneGpu;
    RoundRatios keptOverNone;
    for (int round = 0; round < options.rounds; ++round) {
        auto kept = timeWith(check.kept);
        if (!kept)
            return kept.error();
        auto none = timeWith({});
        if (!none)
            return none.error();
        keptWall.push_back(kept->wallMs);
        noneWall.push_back(none->wallMs);
        keptGpu.push_back(kept->gpuMs);
        noneGpu.push_back(none->gpuMs);
        keptOverNone.add(kept.value(), none.value());
    }
    check.comparedCount = check.kept.size();
    check.keptMs = medianOf(keptWall);
    check.noneMs = medianOf(noneWall);
    if (keptOverNone.byGpu()) {
        check.keptGpuMs = medianOf(keptGpu);
        check.noneGpuMs = medianOf(noneGpu);
    }
    const double slowdown = medianOf(keptOverNone.wall);
    const double gpuSlowdown = keptOverNone.byGpu() ? medianOf(keptOverNone.gpu) : 0.0;
    std::string slower;
    if (slowdown > 1.0 + options.dropThreshold)
        slower = "ran " + formatPercent(slowdown - 1.0) + " slower";
    else if (gpuSlowdown > 1.0 + options.dropThreshold)
        slower = "took " + formatPercent(gpuSlowdown - 1.0) + " more GPU time";
    if (!slower.empty()) {
        const std::string reason = "in-model check: the model " + slower + " with the " +
            std::to_string(check.kept.size()) + " kernels left than with none";
        for (const std::string& id : check.kept)
            check.dropped.push_back({id, reason});
        check.kept.clear();
    }
    return check;
}

} // namespace kforge::core
