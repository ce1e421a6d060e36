#include "CastModelRun.h"

#include "CastRuntime.h"
#include "ForwardGpuTimer.h"
#include "ModelHarness.h"
#include "cast/CastReader.h"
#include "util/AtomicFile.h"

#include <ATen/cuda/CUDAContext.h>

#include <algorithm>

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

// The kernels of the runtime's stats with the last fallback reason folded into each.
json kernelsWithReasons(const json& stats)
{
    json kernels = json::array();
    for (json kernel : stats.value("kernels", json::array())) {
        const json& reasons = stats.value("fallback_reasons", json::object());
        kernel["last_fallback_reason"] = reasons.value(kernel.value("id", std::string()), std::string());
        kernels.push_back(std::move(kernel));
    }
    return kernels;
}

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
    report.device = harness->device.str() + " " + at::cuda::getDeviceProperties(harness->device.index())->name;
    report.runs = options.runs;

    auto reference = runTimedForward(harness.value());
    if (!reference)
        return reference.error();
    const int firstHalf = (options.runs + 1) / 2;
    auto eager = timeRuns(harness.value(), options.warmup, options.kernels ? firstHalf : options.runs);
    if (!eager)
        return eager.error();
    const int gpuPasses = std::min(options.runs, kGpuPasses);
    GpuTimeWhereIsolated gpuTime(harness.value());
    report.eagerGpuMs = gpuTime.medianMilliseconds(harness.value(), gpuPasses, "eager");
    if (options.kernels) {
        auto handle = loadPackage(options.castFile.string());
        if (!handle)
            return handle.error();
        auto withKernels = runTimedForward(harness.value());
        core::Result<std::vector<double>> castTimes =
            withKernels ? timeRuns(harness.value(), options.warmup, options.runs) : core::Result<std::vector<double>>(withKernels.error());
        if (castTimes)
            report.castGpuMs = gpuTime.medianMilliseconds(harness.value(), gpuPasses, "with the package");
        report.kernels = kernelsWithReasons(runtimeStats());
        (void)unloadPackage(handle.value());
        if (!castTimes)
            return castTimes.error();
        auto golden = runGoldenForward(harness.value());
        report.output = judgeOutputs(withKernels->outputs, reference->outputs, golden);
        report.cast = summarizeLatency(castTimes.value());
        auto eagerAgain = timeRuns(harness.value(), options.warmup, options.runs - firstHalf);
        if (!eagerAgain)
            return eagerAgain.error();
        eager->insert(eager->end(), eagerAgain->begin(), eagerAgain->end());
    }
    report.gpuTimeNote = gpuTime.note();
    report.eager = summarizeLatency(eager.value());
    return report;
}

json toJson(const CastRunReport& report)
{
    json j{{"model", report.model}, {"device", report.device}, {"runs", report.runs},
           {"eager_ms", latencyJson(report.eager)}, {"cast_ms", nullptr}, {"speedup", nullptr},
           {"output", nullptr}, {"kernels", report.kernels}};
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
