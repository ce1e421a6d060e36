#pragma once
// The dataflow of one captured forward: every recorded top-level ATen call in execution order, the
// card (variant) it belongs to, and which tensor values it reads and writes. Torch-free; recorded by
// the capture (capture/OpRecorder.h), saved as graph.json (docs/project-format.md) and read by
// region discovery (regions/RegionFinder.h).
//
// Only ids and indices are kept, so the graph of a 10k-call forward stays a few hundred KiB.

#include "model/OperatorCard.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::core {

struct GraphCall {
    std::int32_t card = -1; // index into Project::cards
    // One entry per schema argument of the card (same order as OperatorCard::args): the value ids
    // of that argument's tensors (one for a tensor, one per present tensor of a list, none for a
    // non-tensor argument or an absent tensor).
    std::vector<std::vector<std::int32_t>> inputs;
    std::vector<std::int32_t> outputs; // value ids of the tensor outputs, as OperatorCard::outputs
    // An output shares storage with an input without the op writing an argument (a view, or the
    // input itself), or the call writes in place into a value that other names may see (a view or
    // an external value). Such a call is recorded but bounds every region.
    bool aliasing = false;

    bool operator==(const GraphCall&) const = default;
};

struct CallGraph {
    static constexpr int kFormatVersion = 1;

    std::vector<GraphCall> calls; // index == call position (execution order)
    // Per value id: the call that produced it, or -1 for an external value (first seen as an
    // input: a model input, parameter, buffer or constant). An in-place call makes a new value.
    std::vector<std::int32_t> valueProducers;
    std::vector<std::int32_t> modelOutputs; // value ids of the forward's results (external ones too)

    bool empty() const { return calls.empty(); }
    /// A one-line problem when the graph does not agree with itself or with `cards` (card indices of
    /// op cards, region cards being no call's card,
    /// argument and output counts as the cards', each call among its card's call positions, value
    /// ids in range, producers before consumers, each value produced by the call that lists it),
    /// or "" when it does.
    std::string problem(const std::vector<OperatorCard>& cards) const;

    bool operator==(const CallGraph&) const = default;
};

} // namespace kforge::core
