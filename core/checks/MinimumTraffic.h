#pragma once
// The least memory traffic any correct kernel for a card must make, for the evaluator's timing
// plausibility check: a candidate timed as moving its bytes faster than the device's measured copy
// bandwidth allows is a measurement error or a kernel that skipped its work, and is rejected.
// Torch-free, from the card's captured layouts and the candidate's launch plan.

#include "model/LaunchPlan.h"
#include "model/OperatorCard.h"

#include <cstdint>
#include <string>

namespace kforge::core {

/// Bytes per element of a captured dtype name ("bfloat16" -> 2); 0 for a name it does not know.
int dtypeElementBytes(const std::string& dtype);

/// Distinct elements a tensor of this layout holds: a broadcast (stride 0) dim counts once, and
/// overlapping strides never count more than the storage the layout spans.
std::int64_t distinctElements(const TensorSpec& tensor);

/// True when `op` (qualified, "aten::embedding") reads its argument `arg` only in part (the rows
/// an index picks: embedding's weight, index_select's self) or only for its metadata (type_as's
/// other): such an argument sets no lower bound on the bytes read.
bool readsArgumentOnlyInPart(const std::string& op, const std::string& arg);

/// A lower bound on the bytes a correct kernel moves, so that the check built on it can only
/// reject what is impossible: every output of the plan written once, and every tensor argument
/// the plan passes to a kernel (a list's elements one by one) read once per distinct element,
/// except arguments read only in part. A tensor argument the plan never passes is not read.
std::int64_t minimumBytesMoved(const OperatorCard& card, const LaunchPlan& plan);

} // namespace kforge::core
