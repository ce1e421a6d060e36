#include "CastModelRun.h"

#include "ForwardGpuTimer.h"
#include "ModelHarness.h"
#include "PackageLoad.h"
#include "cast/CastReader.h"
#include "cast_export/KernelStatsSum.h"
#include "runtime/CastRuntime.h"
#include "runtime/RegionMethod.h"
#include "util/AtomicFile.h"

#include <ATen/cuda/CUDAContext.h>

#include <algorithm>
#include <optional>

namespace kforge::runtime {

using core::ErrorCode;
using core::makeError;
using nlohmann::json;

namespace {

core::Result<std::vector<double>> timeRuns(ModelHarness& harness, int warmup, int runs)
{
    for (int i = 0; i < warmup; ++i)
        if (auto pass = runTimedForward(harness); !pass)
            return pass.error();
    std::vector<double> times;
    for (int i = 0; i < runs; ++i) {
        auto pass = runTimedForward(harness);
        if (!pass)
            return pass.error();
        times.push_back(pass->milliseconds);
    }
    return times;
}

constexpr int kGpuPasses = 10; // GPU time varies little: fewer passes than the wall time needs

json latencyJson(const LatencySummary& s)
{
    return {{"median", s.medianMs}, {"min", s.minMs}, {"max", s.maxMs}};
}

constexpr int kBlocksPerSide = 5; // alternating blocks of passes per side (fewer when runs is smaller)
constexpr int kBlockWarmup = 1;   // untimed passes after each switch but the first (options.warmup)

} // namespace

core::Result<CastRunReport> runCastModel(const CastRunOptions& options)
{
    if (options.runs < 1 || options.warmup < 0)
        return makeError(ErrorCode::InvalidArgument, "runs must be at least 1", "kforge run");
    auto package = core::openCast(options.castFile);
    if (!package)
        return package.error();
    CastRunReport report;
    std::string modelBytes;
    if (options.modelFile) {
        auto bytes = core::readWholeFile(*options.modelFile);
        if (!bytes)
            return bytes.error();
        modelBytes = std::move(bytes.value());
        report.model = options.modelFile->string();
    } else {
        if (!package->model)
            return makeError(ErrorCode::InvalidArgument,
                             "kernels-only package (exported with --no-model): pass the model with --model",
                             options.castFile.string());
        modelBytes = *package->model;
        report.model = options.castFile.string() + " (model.pt)";
    }
    auto harness = openHarness(modelBytes, report.model, options.inputs, options.seed);
    if (!harness)
        return harness.error();
    auto regions = prepareRegionMethod(harness->module, package.value());
    if (!regions)
        return regions.error();
    harness->regionMethod = regions->method;
    report.notes = regions->notes;
    report.device = harness->device.str() + " " + at::cuda::getDeviceProperties(harness->device.index())->name;
    report.runs = options.runs;

    auto reference = runTimedForward(harness.value());
    if (!reference)
        return reference.error();
    const int gpuPasses = std::min(options.runs, kGpuPasses);
    GpuTimeWhereIsolated gpuTime(harness.value());
    if (!options.kernels) {
        auto eager = timeRuns(harness.value(), options.warmup, options.runs);
        if (!eager)
            return eager.error();
        report.eagerGpuMs = gpuTime.medianMilliseconds(harness.value(), gpuPasses, "eager");
        report.gpuTimeNote = gpuTime.note();
        report.eager = summarizeLatency(eager.value());
        return report;
    }

    // Blocks alternate eager (package not loaded) and the loaded package, each block starting
    // with untimed passes, so a host whose speed drifts during the run moves both sides alike.
    // (Eager, package, eager in three blocks read 0.93x for a package with no kernel at all on a
    // host-bound model: suite run 8, Gemma s512.)
    const int blocks = std::min(options.runs, kBlocksPerSide);
    std::vector<double> eagerTimes, castTimes;
    std::optional<ForwardResult> withKernels;
    for (int block = 0; block < blocks; ++block) {
        const int passes = options.runs / blocks + (block < options.runs % blocks ? 1 : 0);
        const int warmup = block == 0 ? options.warmup : std::min(options.warmup, kBlockWarmup);
        auto eager = timeRuns(harness.value(), warmup, passes);
        if (!eager)
            return eager.error();
        eagerTimes.insert(eagerTimes.end(), eager->begin(), eager->end());
        if (block == 0)
            report.eagerGpuMs = gpuTime.medianMilliseconds(harness.value(), gpuPasses, "eager");

        PackageLoad loaded(package.value(), options.castFile.string(), harness.value()); // unloaded at the block's end
        if (auto ok = loaded.load(); !ok)
            return ok.error();
        if (!withKernels) {
            auto pass = runTimedForward(harness.value());
            if (!pass)
                return pass.error();
            withKernels = std::move(pass.value());
        }
        auto cast = timeRuns(harness.value(), warmup, passes);
        if (!cast)
            return cast.error();
        castTimes.insert(castTimes.end(), cast->begin(), cast->end());
        if (block == blocks - 1)
            report.castGpuMs = gpuTime.medianMilliseconds(harness.value(), gpuPasses, "with the package");
        core::addKernelStats(report.kernels, runtimeStats());
    }
    auto golden = runGoldenForward(harness.value());
    report.output = judgeOutputs(withKernels->outputs, reference->outputs, golden);
    report.cast = summarizeLatency(castTimes);
    report.eager = summarizeLatency(eagerTimes);
    report.gpuTimeNote = gpuTime.note();
    return report;
}

json toJson(const CastRunReport& report)
{
    json j{{"model", report.model}, {"device", report.device},
           {"runs", report.runs},   {"eager_ms", latencyJson(report.eager)},
           {"cast_ms", nullptr},    {"speedup", nullptr},
           {"output", nullptr},     {"kernels", report.kernels}};
    if (report.cast) {
        j["cast_ms"] = latencyJson(*report.cast);
        j["speedup"] = report.cast->medianMs > 0 ? report.eager.medianMs / report.cast->medianMs : 0.0;
    }
    j["eager_gpu_ms"] = report.eagerGpuMs ? json(*report.eagerGpuMs) : json(nullptr);
    j["cast_gpu_ms"] = report.castGpuMs ? json(*report.castGpuMs) : json(nullptr);
    j["gpu_speedup"] = report.eagerGpuMs && report.castGpuMs && *report.castGpuMs > 0
        ? json(*report.eagerGpuMs / *report.castGpuMs)
        : json(nullptr);
    if (!report.gpuTimeNote.empty())
        j["gpu_time_note"] = report.gpuTimeNote;
    j["notes"] = report.notes;
    if (report.output)
        j["output"] = {{"max_abs_diff", report.output->maxAbsDiff},
                       {"within_tolerance", report.output->withinTolerance},
                       {"tolerance", report.output->tolerance},
                       {"against_float64", report.output->againstFloat64},
                       {"worst_error_ratio", report.output->worstErrorRatio},
                       {"float64_error", report.output->float64Error},
                       {"detail", report.output->detail}};
    return j;
}

} // namespace kforge::runtime
