#pragma once
// The outcome of evaluating one candidate, as an Evaluator reports it (value type).

#include "search/SearchNode.h"

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kforge::core {

/// `status` is final (never in flight). Passed requires `latency` (finite, median > 0).
/// A failure should carry a `failureReason`: its first line is stored (an empty one becomes
/// "<status> (no reason given)"); put long logs such as the full compiler output in `details`.
/// `eagerUs`, when set, is the eager latency measured alongside and gives the node's speedup.
struct Evaluation {
    NodeStatus status = NodeStatus::Passed;
    std::optional<LatencyStats> latency;
    std::optional<double> eagerUs;
    std::string failureReason;
    nlohmann::json details = nlohmann::json::object();
};

} // namespace kforge::core
