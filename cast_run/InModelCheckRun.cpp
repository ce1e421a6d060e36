#include "InModelCheckRun.h"

#include "ForwardGpuTimer.h"
#include "ModelHarness.h"
#include "PackageLoad.h"
#include "cast/CastReader.h"
#include "runtime/CastRuntime.h"
#include "runtime/RegionMethod.h"

#include <cstdio>
#include <set>

namespace kforge::runtime {

namespace {

std::string formatMs(double ms)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3f ms", ms);
    return text;
}

// Enables exactly the kernels in `on`.
void enableOnly(const std::vector<std::string>& all, const std::set<std::string>& on)
{
    for (const std::string& id : all)
        (void)setKernelEnabled(id, on.count(id) > 0);
}

core::Result<double> medianForwardMs(ModelHarness& harness, int passes)
{
    std::vector<double> times;
    for (int i = 0; i < passes; ++i) {
        auto pass = runTimedForward(harness);
        if (!pass)
            return pass.error();
        times.push_back(pass->milliseconds);
    }
    return summarizeLatency(times).medianMs;
}

} // namespace

core::InModelCheck checkPackageInModel(const std::filesystem::path& packagePath, const core::CaptureInfo& capture,
                                       const InModelCheckOptions& options)
{
    core::InModelCheck check;
    auto notRun = [&check](std::string why) {
        check.run = false;
        check.reason = std::move(why);
        return check;
    };
    auto package = core::openCast(packagePath);
    if (!package)
        return notRun("the package does not open: " + package.error().toString());
    if (!package->model)
        return notRun("kernels-only package: no model to run");
    std::vector<std::string> custom;
    for (const core::CastKernel& kernel : package->kernels)
        if (kernel.kind == core::KernelKind::Custom)
            custom.push_back(kernel.id);
    if (custom.empty())
        return notRun("no custom kernel to check");
    auto harness = openHarness(*package->model, "model.pt", splitInputSpec(capture.inputs), capture.inputSeed);
    if (!harness)
        return notRun("cannot run the model on the captured inputs: " + harness.error().toString());

    auto reference = runTimedForward(harness.value());
    if (!reference)
        return notRun(reference.error().toString());
    // The float64 run that both eager and the kernels are judged against; element-wise
    // tolerances when the model does not run in float64.
    auto golden = runGoldenForward(harness.value());
    auto judge = [&](const std::vector<at::Tensor>& outputs) {
        return judgeOutputs(outputs, reference->outputs, golden);
    };
    auto regions = prepareRegionMethod(harness->module, package.value());
    if (!regions)
        return notRun("cannot put the region kernels into the model: " + regions.error().toString());
    harness->regionMethod = regions->method;
    PackageLoad runtimeLoad(package.value(), packagePath.string(), harness.value());
    if (auto loaded = runtimeLoad.load(); !loaded) {
        check.run = true;
        check.passed = false;
        check.reason = "the runtime refused the package: " + loaded.error().toString();
        for (const std::string& id : custom)
            check.dropped.push_back({id, "in-model check: the runtime refused the package"});
        return check;
    }
    check.run = true;

    // Correctness: every kernel together, then (on failure) one at a time.
    auto outputsWith = [&](const std::set<std::string>& on) -> core::Result<OutputDifference> {
        enableOnly(custom, on);
        auto pass = runTimedForward(harness.value());
        if (!pass)
            return pass.error();
        return judge(pass->outputs);
    };
    std::set<std::string> kept(custom.begin(), custom.end());
    auto together = outputsWith(kept);
    if (!together) {
        check.passed = false;
        check.reason = "the model failed with the kernels: " + together.error().toString();
        for (const std::string& id : custom)
            check.dropped.push_back({id, "in-model check: the model failed with the kernels loaded"});
        return check;
    }
    OutputDifference finalDifference = together.value();
    if (!together->withinTolerance) {
        for (const std::string& id : custom) {
            auto alone = outputsWith({id});
            if (!alone || !alone->withinTolerance) {
                kept.erase(id);
                check.dropped.push_back({id,
                                         "in-model check: the model's outputs differ from eager with it (" +
                                             (alone ? alone->detail : alone.error().toString()) + ")"});
            }
        }
        auto rest = outputsWith(kept);
        if (!rest || !rest->withinTolerance) {
            const std::string why = rest ? rest->detail : rest.error().toString();
            for (const std::string& id : kept)
                check.dropped.push_back({id,
                                         "in-model check: the outputs differ from eager with the kernels together" +
                                             (why.empty() ? std::string() : " (" + why + ")")});
            kept.clear();
        } else {
            finalDifference = rest.value();
        }
    }

    // Speed (core/cast_export/KernelSpeedCheck.h): each kernel's removal against the full set, then the
    // kernels left against none, interleaved.
    core::KernelSpeedCheck speed;
    std::string gpuTimeNote;
    if (!kept.empty()) {
        runtimeLoad.unload();
        auto probe = medianForwardMs(harness.value(), options.passesPerMeasure);
        if (!probe)
            return notRun(probe.error().toString());
        const int passes = core::passesPerMeasurement(probe.value(), options);
        // GPU time decides each kernel's removal where it can be isolated (ForwardGpuTimer.h); a
        // model where it cannot (a forward pass that synchronizes) is judged by wall time alone.
        GpuTimeWhereIsolated gpuTime(harness.value());
        auto timeWith = [&](const std::set<std::string>& on) -> core::Result<core::ModelTime> {
            if (on.empty()) {
                runtimeLoad.unload();
            } else {
                if (auto loaded = runtimeLoad.load(); !loaded)
                    return loaded.error();
                enableOnly(custom, on);
            }
            auto wall = medianForwardMs(harness.value(), passes);
            if (!wall)
                return wall.error();
            // 0: not measured (from the timer's first failure on, by wall time only)
            return core::ModelTime{
                wall.value(), gpuTime.medianMilliseconds(harness.value(), options.gpuPassesPerMeasure).value_or(0.0)};
        };
        auto timed = core::checkKernelSpeed(kept, timeWith, options);
        gpuTimeNote = gpuTime.note();
        if (!timed)
            return notRun(timed.error().toString());
        speed = std::move(timed.value());
        kept = speed.kept;
        check.dropped.insert(check.dropped.end(), speed.dropped.begin(), speed.dropped.end());
    }
    runtimeLoad.unload();

    check.passed = !kept.empty() || custom.empty();
    char worst[64];
    std::snprintf(worst, sizeof worst, "%.3g", finalDifference.worstErrorRatio);
    check.reason = "outputs with " + std::to_string(kept.size()) + " of " + std::to_string(custom.size()) +
        " custom kernels " +
        (finalDifference.againstFloat64
             ? "within " + finalDifference.tolerance + " (worst ratio " + worst + ")"
             : "within " + finalDifference.tolerance + " of eager (" + finalDifference.float64Error + ")") +
        "; max abs diff vs eager " + std::to_string(finalDifference.maxAbsDiff);
    if (kept.empty())
        check.reason = "no custom kernel kept: " + std::to_string(check.dropped.size()) + " dropped";
    if (speed.noneMs > 0)
        check.reason += "; model " + formatMs(speed.noneMs) + " without the package (kernels off), " +
            formatMs(speed.keptMs) + " with " + std::to_string(speed.comparedCount) +
            (speed.noneGpuMs > 0 ? " (GPU time " + formatMs(speed.noneGpuMs) + " and " + formatMs(speed.keptGpuMs) + ")"
                                 : "") +
            " (medians of interleaved rounds)";
    if (!gpuTimeNote.empty())
        check.reason += "; " + gpuTimeNote + " (removals judged by wall time)";
    return check;
}

} // namespace kforge::runtime
