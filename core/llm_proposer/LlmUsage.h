#pragma once
// Token and cost totals of LLM calls, read back from the provenance the LLM proposer records
// (details "input_tokens", "output_tokens", "cost_usd", "cost_known", "turns"), so a resumed tree
// and a fresh one count the same way.

#include "model/SearchTree.h"

#include <cstdint>
#include <string>

namespace kforge::core {

struct LlmUsage {
    int nodes = 0; // nodes with LLM provenance
    int calls = 0; // model calls (initial + repair turns)
    std::int64_t inputTokens = 0;
    std::int64_t outputTokens = 0;
    double costUsd = 0;    // sum of the calls whose price is known
    bool costKnown = true; // false when any call had no price in the config

    void add(const LlmUsage& other);
    /// "llm 3 calls, 1200 in + 800 out tokens, $0.0123" ("cost unknown" when a price was missing).
    std::string summary() const;
};

/// Sums every node of `tree` whose provenance kind is Llm, earlier root attempts included.
LlmUsage llmUsageOf(const SearchTree& tree);

} // namespace kforge::core
