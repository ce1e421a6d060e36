#pragma once
// Hand-made call graphs for the region tests: each call gets its own card.

#include "regions/RegionFinder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kforge::core::test_graphs {

// A graph under construction: each call gets its own card (op + its tensor argument count).
class GraphBuilder {
public:
    // Adds a call of `op` reading `inputs` (value ids; -1: a new external value) and returning one
    // new value, whose id it returns.
    std::int32_t call(const std::string& op, std::vector<std::int32_t> inputs, bool vendor = false,
                      bool aliasing = false)
    {
        OperatorCard card;
        card.op = op;
        GraphCall graphCall;
        for (std::int32_t& value : inputs) {
            if (value < 0) {
                value = static_cast<std::int32_t>(m_graph.valueProducers.size());
                m_graph.valueProducers.push_back(-1);
            }
            ArgSpec arg;
            arg.name = card.args.empty() ? "self"
                : card.args.size() == 1  ? "other"
                                         : "arg" + std::to_string(card.args.size());
            arg.kind = ArgKind::Tensor;
            arg.tensors.push_back(TensorSpec{"float32", {4, 8}, {8, 1}, "cuda:0"});
            card.args.push_back(arg);
            graphCall.inputs.push_back({value});
        }
        card.outputs.push_back(TensorSpec{"float32", {4, 8}, {8, 1}, "cuda:0"});
        // Binary arithmetic of two tensors as a capture names it (the pointwise table's overload).
        if (card.args.size() == 2 && (op == "aten::add" || op == "aten::mul" || op == "aten::sub" || op == "aten::div"))
            card.overload = "Tensor";
        card.vendorBacked = vendor;
        card.key = variantKey(card.op, card.overload, card.args);
        card.id = cardIdForKey(card.key);
        card.callCount = 1;
        card.callPositions = {static_cast<std::int64_t>(m_graph.calls.size())};
        card.eager = EagerTiming{"cuda:0", "test", 1.0, 1.0, 1.0, 1};
        graphCall.card = static_cast<std::int32_t>(m_cards.size());
        graphCall.aliasing = aliasing;
        const auto produced = static_cast<std::int32_t>(m_graph.valueProducers.size());
        m_graph.valueProducers.push_back(static_cast<std::int32_t>(m_graph.calls.size()));
        graphCall.outputs.push_back(produced);
        m_graph.calls.push_back(graphCall);
        m_cards.push_back(card);
        return produced;
    }
    // Adds aten::cat of `inputs` (value ids, as call's) as one Tensor[] argument, each of `dtype`;
    // returns its value.
    std::int32_t cat(std::vector<std::int32_t> inputs, const std::vector<std::string>& dtypes = {})
    {
        const std::int32_t produced = call("aten::cat", inputs);
        OperatorCard& card = m_cards.back();
        GraphCall& graphCall = m_graph.calls.back();
        ArgSpec list;
        list.name = "tensors";
        list.kind = ArgKind::TensorList;
        std::vector<std::int32_t> values;
        for (std::size_t i = 0; i < card.args.size(); ++i) {
            TensorSpec t = card.args[i].tensors[0];
            if (i < dtypes.size())
                t.dtype = dtypes[i];
            list.tensors.push_back(t);
            values.push_back(graphCall.inputs[i][0]);
        }
        card.args = {list};
        graphCall.inputs = {values};
        card.outputs[0].sizes = {4, 8 * static_cast<std::int64_t>(values.size())};
        card.outputs[0].strides = {card.outputs[0].sizes[1], 1};
        card.key = variantKey(card.op, card.overload, card.args);
        card.id = cardIdForKey(card.key);
        return produced;
    }
    void output(std::int32_t value) { m_graph.modelOutputs.push_back(value); }
    std::vector<RegionCard> regions()
    {
        EXPECT_EQ(m_graph.problem(m_cards), "");
        return findRegions(m_graph, m_cards);
    }

    const std::vector<OperatorCard>& cards() const { return m_cards; }

private:
    CallGraph m_graph;
    std::vector<OperatorCard> m_cards;
};

} // namespace kforge::core::test_graphs
