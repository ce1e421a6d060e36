#include "model/CallGraph.h"

#include <algorithm>

namespace kforge::core {

std::string CallGraph::problem(const std::vector<OperatorCard>& cards) const
{
    const auto valueCount = static_cast<std::int64_t>(valueProducers.size());
    const auto inRange = [&](std::int32_t id) { return id >= 0 && id < valueCount; };
    std::vector<std::int64_t> producedCount(valueProducers.size(), 0);
    std::int64_t cardCalls = 0;
    for (const OperatorCard& card : cards)
        if (!card.isRegion()) // a region card's calls are its members' calls
            cardCalls += card.callCount;
    if (cardCalls != static_cast<std::int64_t>(calls.size()))
        return "the graph has " + std::to_string(calls.size()) + " calls, the cards " + std::to_string(cardCalls);
    for (size_t i = 0; i < calls.size(); ++i) {
        const GraphCall& call = calls[i];
        const std::string where = "call " + std::to_string(i) + ": ";
        if (call.card < 0 || static_cast<size_t>(call.card) >= cards.size())
            return where + "card index " + std::to_string(call.card) + " out of range";
        const OperatorCard& card = cards[static_cast<size_t>(call.card)];
        if (card.isRegion())
            return where + "its card " + card.id + " is a fused region, not an op";
        if (!std::binary_search(card.callPositions.begin(), card.callPositions.end(), static_cast<std::int64_t>(i)))
            return where + "not among the call positions of its card " + card.id;
        if (call.inputs.size() != card.args.size())
            return where + "has " + std::to_string(call.inputs.size()) + " arguments, its card " +
                std::to_string(card.args.size());
        for (size_t a = 0; a < call.inputs.size(); ++a) {
            if (call.inputs[a].size() != card.args[a].tensors.size())
                return where + "argument " + std::to_string(a) + " has " + std::to_string(call.inputs[a].size()) +
                    " tensors, its card " + std::to_string(card.args[a].tensors.size());
            for (std::int32_t id : call.inputs[a]) {
                if (!inRange(id))
                    return where + "input value " + std::to_string(id) + " out of range";
                if (valueProducers[static_cast<size_t>(id)] >= static_cast<std::int32_t>(i))
                    return where + "reads value " + std::to_string(id) + " before it is produced";
            }
        }
        if (call.outputs.size() != card.outputs.size())
            return where + "has " + std::to_string(call.outputs.size()) + " outputs, its card " +
                std::to_string(card.outputs.size());
        for (std::int32_t id : call.outputs) {
            if (!inRange(id))
                return where + "output value " + std::to_string(id) + " out of range";
            if (valueProducers[static_cast<size_t>(id)] != static_cast<std::int32_t>(i))
                return where + "output value " + std::to_string(id) + " has another producer";
            if (++producedCount[static_cast<size_t>(id)] > 1)
                return where + "output value " + std::to_string(id) + " listed twice";
        }
    }
    for (size_t v = 0; v < valueProducers.size(); ++v) {
        const std::int32_t producer = valueProducers[v];
        if (producer < -1 || producer >= static_cast<std::int64_t>(calls.size()))
            return "value " + std::to_string(v) + ": producer " + std::to_string(producer) + " out of range";
        if (producer >= 0 && producedCount[v] != 1)
            return "value " + std::to_string(v) + ": not among the outputs of its producer";
    }
    for (std::int32_t id : modelOutputs)
        if (!inRange(id))
            return "model output value " + std::to_string(id) + " out of range";
    return {};
}

} // namespace kforge::core
