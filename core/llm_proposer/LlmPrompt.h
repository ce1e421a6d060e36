#pragma once
// The text an LLM proposer sends (docs/llm-proposer.md): a system prompt with the candidate contract
// and the rules, and user prompts for a first kernel, a revision of a parent, and a repair turn.
// Pure functions of their inputs; no I/O.

#include "model/OperatorCard.h"
#include "model/SearchNode.h"
#include "model/SearchTree.h"

#include <nlohmann/json.hpp>

#include <string>

namespace kforge::core {

/// A concise version of docs/kernel-contract.md, written for a model.
extern const char* const kLlmCandidateContract;

/// How much of the tree a revision prompt shows.
struct LlmPromptLimits {
    int lineageSteps = 5;           // the parent and up to this many ancestors' steps, nearest last
    int failedNodes = 6;            // failed attempts shown (most recent)
    std::size_t reasonChars = 1500; // a failure reason is cut to this length
};

/// The role, the rules (custom CUDA only: no cuBLAS/cuDNN calls, CUB/CCCL allowed; exactly one
/// ```cuda block carrying a /*kforge-plan {...} */ block) and the contract.
std::string llmSystemPrompt();

/// A region card's chain as prompt text: one line per member call ("m1 = aten::add.Tensor(self=m0,
/// other=in2, alpha=1)  -> float32[8,64]") and which members the region outputs are.
std::string describeChainForPrompt(const RegionChain& chain);

/// The card (op, schema, every argument with dtype/sizes/strides or value, the chain of a region
/// card, outputs, eager time) as prompt text.
std::string describeCardForPrompt(const OperatorCard& card);

/// The hardware description (BenchEvaluator::gpu(): name, SMs, L2, bandwidth, architecture) as
/// prompt text; null or empty says it is unknown and names sm_90 as the compile target.
std::string describeHardwareForPrompt(const nlohmann::json& hardware);

/// The first prompt of an empty tree: ask for a first correct, fast kernel.
std::string llmRootPrompt(const OperatorCard& card, const nlohmann::json& hardware);

/// A revision of `parent`: card, hardware, the parent's source and plan, its lineage (step,
/// status, latency, speedup), the failed attempts to learn from (earlier failed children of
/// `parent` and the failed siblings of `parent`, with their reasons).
std::string llmRevisionPrompt(const OperatorCard& card, const nlohmann::json& hardware, const SearchTree& tree,
                              const SearchNode& parent, const LlmPromptLimits& limits = {});

/// A repair turn after a reply that could not be used: the exact error and the format reminder.
std::string llmRepairPrompt(const std::string& error);

} // namespace kforge::core
