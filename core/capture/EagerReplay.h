#pragma once
// Times one operator variant by replaying it through the dispatcher on real inputs.
// GPU: CUDA events on the current stream around the op alone, with the L2 cache flushed (a
// 256 MiB buffer is zeroed) before every repetition; CPU: wall clock. Median and quartiles.
// Internal to core (includes LibTorch). Thread: the calling thread; the op runs in InferenceMode.

#include "model/OperatorCard.h"
#include "util/Result.h"

#include <ATen/core/ivalue.h>

#include <functional>
#include <string>
#include <vector>

namespace kforge::core {

struct ReplayTimingOptions {
    int warmup = 3;
    int minRepetitions = 10;
    int maxRepetitions = 100;
    double targetTotalMs = 100; // stop after this much measured time once minRepetitions are done
};

/// Statistics of a sample of durations: median and quartiles (linear interpolation).
EagerTiming summarizeDurations(std::vector<double> durationsUs, std::string device, std::string method);

/// Times `run` (any eager work enqueued on the current stream, e.g. a region's chain) the same way:
/// warm-up, then repetitions around `run` alone. `what` names it in errors.
Result<EagerTiming> timeEagerWork(const std::function<void()>& run, const std::string& what, c10::Device device,
                                  const std::string& deviceLabel, const ReplayTimingOptions& options);

/// Replays `op.overload` on copies-by-reference of `inputs` (in-place ops mutate them) and times it.
/// `deviceLabel` is stored with the result. Errors name the op.
Result<EagerTiming> timeEagerReplay(const std::string& op, const std::string& overload,
                                    const std::vector<c10::IValue>& inputs, c10::Device device,
                                    const std::string& deviceLabel, const ReplayTimingOptions& options);

} // namespace kforge::core
