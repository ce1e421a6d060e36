#include "llm_proposer/LlmUsage.h"

#include <cstdio>
#include <vector>

namespace kforge::core {

void LlmUsage::add(const LlmUsage& other)
{
    nodes += other.nodes;
    calls += other.calls;
    inputTokens += other.inputTokens;
    outputTokens += other.outputTokens;
    costUsd += other.costUsd;
    costKnown = costKnown && other.costKnown;
}

std::string LlmUsage::summary() const
{
    char buffer[160];
    std::snprintf(buffer, sizeof buffer, "llm %d calls, %lld in + %lld out tokens, ", calls,
                  static_cast<long long>(inputTokens), static_cast<long long>(outputTokens));
    std::string text = buffer;
    if (costKnown) {
        std::snprintf(buffer, sizeof buffer, "$%.4f", costUsd);
        text += buffer;
    } else {
        std::snprintf(buffer, sizeof buffer, "cost unknown (priced part $%.4f)", costUsd);
        text += buffer;
    }
    return text;
}

LlmUsage llmUsageOf(const SearchTree& tree)
{
    LlmUsage usage;
    // Failed root attempts that were retried were paid for too.
    std::vector<const SearchNode*> nodes;
    for (const SearchNode& node : tree.rootAttempts())
        nodes.push_back(&node);
    for (const SearchNode& node : tree.nodes())
        nodes.push_back(&node);
    for (const SearchNode* nodePointer : nodes) {
        const SearchNode& node = *nodePointer;
        if (node.provenance.kind != ProvenanceKind::Llm)
            continue;
        const nlohmann::json& d = node.provenance.details;
        if (!d.is_object())
            continue;
        // A hand-edited tree file may hold other types: such a node counts as unpriced.
        try {
            LlmUsage node;
            node.nodes = 1;
            node.calls = d.value("turns", 0);
            node.inputTokens = d.value("input_tokens", std::int64_t{0});
            node.outputTokens = d.value("output_tokens", std::int64_t{0});
            node.costUsd = d.value("cost_usd", 0.0);
            node.costKnown = d.value("cost_known", false);
            usage.add(node);
        } catch (const nlohmann::json::exception&) {
            ++usage.nodes;
            usage.costKnown = false;
        }
    }
    return usage;
}

} // namespace kforge::core
