#include "capture/EagerReplay.h"

#include "capture/TorchInterop.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/Event.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <functional>

namespace kforge::core {
namespace {

constexpr std::int64_t kL2FlushBytes = 256ll << 20; // larger than any current GPU's L2 (H200: 60 MB)

double quantile(const std::vector<double>& sorted, double q)
{
    if (sorted.empty())
        return 0;
    const double position = q * static_cast<double>(sorted.size() - 1);
    const size_t lower = static_cast<size_t>(position);
    const size_t upper = std::min(lower + 1, sorted.size() - 1);
    const double fraction = position - static_cast<double>(lower);
    return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

bool enoughRepetitions(const std::vector<double>& durationsUs, const ReplayTimingOptions& options)
{
    const int count = static_cast<int>(durationsUs.size());
    if (count >= options.maxRepetitions)
        return true;
    if (count < options.minRepetitions)
        return false;
    double total = 0;
    for (double d : durationsUs)
        total += d;
    return total / 1000.0 >= options.targetTotalMs;
}

std::vector<double> timeOnCuda(const std::function<void()>& run, c10::Device device, const ReplayTimingOptions& options)
{
    c10::impl::VirtualGuardImpl guard(c10::DeviceType::CUDA);
    const c10::Stream stream = guard.getStream(device);
    at::Tensor flush = at::empty({kL2FlushBytes}, at::TensorOptions().dtype(at::kByte).device(device));
    std::vector<double> durationsUs;
    // Batches of repetitions: all events of a batch are recorded, then read after one sync.
    while (!enoughRepetitions(durationsUs, options)) {
        const int batch =
            std::min(options.minRepetitions, options.maxRepetitions - static_cast<int>(durationsUs.size()));
        std::vector<c10::Event> starts;
        std::vector<c10::Event> ends;
        for (int i = 0; i < batch; ++i) {
            starts.emplace_back(c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT);
            ends.emplace_back(c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT);
        }
        for (int i = 0; i < batch; ++i) {
            flush.zero_();
            starts[i].record(stream);
            run();
            ends[i].record(stream);
        }
        ends.back().synchronize();
        for (int i = 0; i < batch; ++i)
            durationsUs.push_back(starts[i].elapsedTime(ends[i]) * 1000.0);
    }
    return durationsUs;
}

std::vector<double> timeOnCpu(const std::function<void()>& run, const ReplayTimingOptions& options)
{
    std::vector<double> durationsUs;
    while (!enoughRepetitions(durationsUs, options)) {
        const auto begin = std::chrono::steady_clock::now();
        run();
        const auto end = std::chrono::steady_clock::now();
        durationsUs.push_back(std::chrono::duration<double, std::micro>(end - begin).count());
    }
    return durationsUs;
}

} // namespace

EagerTiming summarizeDurations(std::vector<double> durationsUs, std::string device, std::string method)
{
    std::sort(durationsUs.begin(), durationsUs.end());
    EagerTiming timing;
    timing.device = std::move(device);
    timing.method = std::move(method);
    timing.medianUs = quantile(durationsUs, 0.5);
    timing.q1Us = quantile(durationsUs, 0.25);
    timing.q3Us = quantile(durationsUs, 0.75);
    timing.repetitions = static_cast<int>(durationsUs.size());
    return timing;
}

Result<EagerTiming> timeEagerWork(const std::function<void()>& run, const std::string& what, c10::Device device,
                                  const std::string& deviceLabel, const ReplayTimingOptions& options)
{
    try {
        c10::InferenceMode inferenceMode;
        for (int i = 0; i < options.warmup; ++i)
            run();
        if (device.is_cuda()) {
            torch::cuda::synchronize(device.index());
            return summarizeDurations(timeOnCuda(run, device, options), deviceLabel, "cuda-events, L2 flushed");
        }
        return summarizeDurations(timeOnCpu(run, options), deviceLabel, "cpu wall clock");
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, "replay failed: " + torchinterop::oneLineError(e), what);
    }
}

Result<EagerTiming> timeEagerReplay(const std::string& op, const std::string& overload,
                                    const std::vector<c10::IValue>& inputs, c10::Device device,
                                    const std::string& deviceLabel, const ReplayTimingOptions& options)
{
    const std::string qualified = overload.empty() ? op : op + "." + overload;
    auto handle = c10::Dispatcher::singleton().findSchema({op, overload});
    if (!handle)
        return makeError(ErrorCode::Unsupported, "operator not found in the dispatcher", qualified);
    const auto run = [&] {
        std::vector<c10::IValue> stack = inputs;
        handle->callBoxed(stack);
    };
    return timeEagerWork(run, qualified, device, deviceLabel, options);
}

} // namespace kforge::core
