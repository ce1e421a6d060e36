#pragma once
// The outcome of evaluating one candidate, as an Evaluator reports it (value type).

#include "model/SearchNode.h"

#include <optional>
#include <string>

namespace kforge::core {

/// `status` is final (never in flight). Passed requires `latency` (finite, median > 0).
/// A failure should carry a `failureReason`: it is stored as one line (oneLineReason; an empty one
/// becomes "<status> (no reason given)"); long logs such as the full compiler output belong in the
/// `report`. `eagerUs`, when set, is the eager latency measured alongside and gives the node's
/// speedup (a paired speedup in the report's timing, when there is one, is preferred: nodeSpeedup).
struct Evaluation {
    NodeStatus status = NodeStatus::Passed;
    std::optional<LatencyStats> latency;
    std::optional<double> eagerUs;
    std::string failureReason;
    EvaluationReport report; // read at the worker boundary (EvaluationReport::fromJson)
};

} // namespace kforge::core
