#include "ForwardGpuTimer.h"

#include "capture/TorchInterop.h"
#include "capture/TorchModel.h"
#include "cast_export/KernelSpeedCheck.h"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/Sleep.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace kforge::runtime {

using core::ErrorCode;
using core::makeError;

namespace {

constexpr std::int64_t kCalibrationCycles = 2'000'000; // about 1 ms at an H200's clock
constexpr double kLeastSpinMs = 1.0;
constexpr double kSpinOverHost = 3.0; // spin length over the slowest calibration enqueue
constexpr int kRetries = 2;

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct TimedPass {
    double gpuMs = 0;
    double hostMs = 0;     // the time forward() took to return: its enqueue
    double spinMs = 0;     // how long the spin before it ran on the GPU (0: no spin)
    bool isolated = false; // the spin was still running when the whole pass had been enqueued
};

// One forward pass behind a spin of `cycles` (0: none), timed by CUDA events on the current stream.
// Isolation is checked on the GPU itself, not against the spin's expected length (the SM clock,
// which sets a spin's duration, moves between calibration and measurement): when forward() returns
// and the spin has not finished, every kernel of the pass was queued before the first of them could
// run, so the events around it time the kernels back to back.
core::Result<TimedPass> timedPass(ModelHarness& harness, std::int64_t cycles)
{
    try {
        c10::InferenceMode inferenceMode;
        core::synchronizeDevice(harness.device);
        const at::cuda::CUDAStream stream = at::cuda::getCurrentCUDAStream(harness.device.index());
        at::cuda::CUDAEvent spinStart(cudaEventDefault), spinEnd(cudaEventDefault);
        at::cuda::CUDAEvent start(cudaEventDefault), end(cudaEventDefault);
        if (cycles > 0) {
            spinStart.record(stream);
            at::cuda::sleep(cycles);
            spinEnd.record(stream);
        }
        const auto began = Clock::now();
        start.record(stream);
        core::forwardOpByOp(harness.module, harness.inputs, harness.method);
        end.record(stream);
        TimedPass pass;
        pass.hostMs = millisecondsSince(began);
        pass.isolated = cycles > 0 && !spinEnd.query();
        core::synchronizeDevice(harness.device);
        pass.gpuMs = start.elapsed_time(end);
        if (cycles > 0)
            pass.spinMs = spinStart.elapsed_time(spinEnd);
        return pass;
    } catch (const std::exception& e) {
        return makeError(ErrorCode::BadInputs, "the model failed: " + core::torchinterop::oneLineError(e), "forward");
    }
}

} // namespace

core::Result<ForwardGpuTimer> ForwardGpuTimer::calibrate(ModelHarness& harness, int passes)
{
    double spinMs = 0;
    try {
        core::synchronizeDevice(harness.device);
        const at::cuda::CUDAStream stream = at::cuda::getCurrentCUDAStream(harness.device.index());
        at::cuda::CUDAEvent start(cudaEventDefault), end(cudaEventDefault);
        start.record(stream);
        at::cuda::sleep(kCalibrationCycles);
        end.record(stream);
        core::synchronizeDevice(harness.device);
        spinMs = start.elapsed_time(end);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, "cannot time a spin kernel: " + core::torchinterop::oneLineError(e),
                         "GPU timer");
    }
    if (!(spinMs > 0))
        return makeError(ErrorCode::Internal, "a spin kernel took no measurable time", "GPU timer");
    double slowestHostMs = 0;
    for (int i = 0; i < std::max(passes, 1); ++i) {
        auto pass = timedPass(harness, 0);
        if (!pass)
            return pass.error();
        slowestHostMs = std::max(slowestHostMs, pass->hostMs);
    }
    const double cyclesPerMs = static_cast<double>(kCalibrationCycles) / spinMs;
    const double wantedMs = std::max(kLeastSpinMs, kSpinOverHost * slowestHostMs);
    return ForwardGpuTimer(static_cast<std::int64_t>(wantedMs * cyclesPerMs));
}

core::Result<double> ForwardGpuTimer::milliseconds(ModelHarness& harness)
{
    double firstHostMs = 0;
    for (int attempt = 0;; ++attempt) {
        auto pass = timedPass(harness, m_spinCycles);
        if (!pass)
            return pass.error();
        if (pass->isolated)
            return pass->gpuMs;
        if (attempt == 0)
            firstHostMs = pass->hostMs;
        if (attempt == kRetries) {
            // A forward that synchronizes (.item(), a copy to the host) waits for the spin, so its
            // enqueue grows with it; a merely slow host's does not.
            const bool waits = pass->hostMs > 1.5 * firstHostMs;
            return makeError(ErrorCode::Internal,
                             "the host took " + std::to_string(pass->hostMs) +
                                 " ms to enqueue a forward pass, outlasting the " + std::to_string(pass->spinMs) +
                                 " ms spin before it" +
                                 (waits ? " (its enqueue grew with the spin: the forward waits for the GPU, e.g. an "
                                          "aten::item or a copy to the host)"
                                        : "") +
                                 ": its GPU time would include the host's",
                             "GPU timer");
        }
        m_spinCycles *= 2;
    }
}

core::Result<double> ForwardGpuTimer::medianMilliseconds(ModelHarness& harness, int passes)
{
    std::vector<double> times;
    for (int i = 0; i < passes; ++i) {
        auto ms = milliseconds(harness);
        if (!ms)
            return ms.error();
        times.push_back(ms.value());
    }
    return core::medianOf(std::move(times));
}

GpuTimeWhereIsolated::GpuTimeWhereIsolated(ModelHarness& harness)
{
    if (auto calibrated = ForwardGpuTimer::calibrate(harness))
        m_timer.emplace(calibrated.value());
    else
        m_note = "GPU time not measured: " + calibrated.error().message;
}

std::optional<double> GpuTimeWhereIsolated::medianMilliseconds(ModelHarness& harness, int passes,
                                                               const std::string& side)
{
    if (!m_timer)
        return std::nullopt;
    auto ms = m_timer->medianMilliseconds(harness, passes);
    if (!ms) {
        m_note =
            "GPU time not measured" + (side.empty() ? std::string() : " (" + side + ")") + ": " + ms.error().message;
        m_timer.reset();
        return std::nullopt;
    }
    return ms.value();
}

} // namespace kforge::runtime
