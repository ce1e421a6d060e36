#pragma once
// A Proposer backed by a large language model (docs/llm-proposer.md). For one card it prompts the
// model with the card, the hardware, the candidate contract and (for a revision) the parent's
// source, plan, lineage and the failed attempts nearby, and parses the reply into source + plan.
// A reply that cannot be used (no code block, no plan, plan invalid for the card) gets a repair
// turn (the reply as the assistant message, the exact error as the next user message) up to
// maxRepairTurns times; then the proposal fails with the last reason and the search records a
// FailedProposal node. Compile and validation errors found by the evaluator reach the next
// prompt through the failed nodes the revision prompt lists.
//
// Audit: provenance {kind Llm, provider, model (as the reply names it), details} where details
// holds the system prompt, every call (user prompt, response, tokens, cost, latency, parse error)
// and the sums. The texts are inline here; SearchRun moves them to the tree's blob store when the
// node enters the tree (ProvenanceTexts.h). A repair turn sends back at most 512 KiB of the
// unusable reply (the rest replaced by a truncation note). Nothing secret is recorded: the client keeps the API key in
// its auth header and this class never sees a config.
//
// Errors: a client error on the first call of a proposal ends the run with that error (the server
// is unreachable or rejects the request: more iterations would fail the same way); a client error
// in a repair turn fails only this proposal, keeping the calls already paid for in the record.
// `stop` is passed to the client as its cancel flag: Cancelled returns within about 50 ms.
//
// Determinism: none. Models sample; even at temperature 0 providers do not promise identical
// output, so trees grown with an LLM are not reproducible from the seed (docs/llm-proposer.md).
//
// Thread: as Proposer (one call at a time on the search thread). hardwareSource, when set, is
// called on that thread before each prompt.

#include "llm_client/LlmClient.h"
#include "llm_proposer/LlmPrompt.h"
#include "model/OperatorCard.h"
#include "search/Proposer.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>

namespace kforge::core {

struct LlmProposerOptions {
    int maxRepairTurns = 3; // repair turns after the first reply: at most 1 + this many calls
    int maxTokens = 8192;
    std::optional<double> temperature; // unset: the provider's default
    LlmPromptLimits limits;
    /// Optional: returns the current hardware description (e.g. BenchEvaluator::gpu(), which is
    /// null until the worker answered); a non-null result replaces the one given at construction.
    std::function<nlohmann::json()> hardwareSource;
};

class LlmProposer final : public Proposer {
public:
    /// `hardware`: {name, multiprocessors, l2 bytes, bandwidth, architecture, ...} or null.
    LlmProposer(OperatorCard card, std::shared_ptr<LlmClient> client, nlohmann::json hardware,
                LlmProposerOptions options = {});

    Result<Proposal> proposeRoot(const SearchTree& tree, const std::atomic<bool>& stop) override;
    Result<Proposal> propose(const SearchTree& tree, const SearchNode& parent, const std::atomic<bool>& stop) override;

    const OperatorCard& card() const { return m_card; }

private:
    nlohmann::json currentHardware() const;
    Result<Proposal> converse(std::string userPrompt, const std::string& parentId, const std::atomic<bool>& stop);

    OperatorCard m_card;
    std::shared_ptr<LlmClient> m_client;
    nlohmann::json m_hardware;
    LlmProposerOptions m_options;
};

} // namespace kforge::core
