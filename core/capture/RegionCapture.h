#pragma once
// The capture's region step: the fused regions of the recorded forward (regions/RegionFinder.h) as
// region cards (regions/RegionOperatorCard.h), each with one real sample of its first occurrence
// and the eager time of its chain replayed alone. Internal to core (includes LibTorch).
//
// The sample comes from a second forward that copies, at the first occurrence's call positions,
// the tensors the region reads from outside and the values it hands on. The chain is then replayed
// on those inputs and must reproduce the forward's values, so a region whose replay is not what
// the model computed (a different op order, state the capture cannot see) gets no card.
//
// Thread: the capture's thread.

#include "capture/OpRecorder.h"
#include "model/CallGraph.h"
#include "model/OperatorCard.h"
#include "util/Result.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace kforge::core {

struct RegionCaptureOptions {
    c10::Device device = c10::Device(c10::kCPU); // the capture device
    std::string deviceLabel;                     // as the op cards' eager timings name it
    std::int64_t sampleBytesLeft = 0;            // what the sample budget leaves for region samples
    std::int64_t expectedCalls = 0;              // top-level calls of the recorded forward
    double modelEagerUs = 0;                     // the model's total op time, for time shares
    std::filesystem::path projectDir;            // where samples/<card id>/ go
    bool saveSamples = true; // false (--samples 0): the chain is still checked and timed, no file kept
};

struct RegionCaptureResult {
    std::vector<OperatorCard> cards;
    std::vector<std::string> notes; // regions left out and why, samples skipped for the budget
};

/// The region cards of `graph` over the op `cards`. `recordForward` runs the model once more under
/// the recorder it is given (started and stopped by the callee). Errors only for I/O; a region
/// that cannot be sampled or replayed is left out with a note.
Result<RegionCaptureResult> captureRegionCards(const CallGraph& graph, const std::vector<OperatorCard>& cards,
                                               const std::function<Result<void>(OpRecorder&)>& recordForward,
                                               const RegionCaptureOptions& options,
                                               const std::atomic<bool>* stop = nullptr);

} // namespace kforge::core
