#pragma once
// Value types of a search tree node (docs/search.md): the candidate kernel, what produced it, how it
// fared, and the MCTS statistics. Plain copyable values; SearchTree owns and mutates them.
// Thread: none of their own; a node is safe to read from any thread once copied out of the tree.

#include "model/EvaluationReport.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kforge::core {

/// Where a node is in its life. Pending/Compiling/Evaluating are in flight (never selected for
/// revision); Passed, CompiledOnly and ValidatedOnly may be revised; every other value is a failure that stays in
/// the tree with its reason and is never revised.
enum class NodeStatus {
    Pending,
    Compiling,
    Evaluating,
    Passed,         // compiled, validated against eager, timed
    CompiledOnly,   // compiled but not measured (no GPU): revisable, reward 0
    FailedProposal, // the proposer could not produce a candidate (e.g. an unparsable LLM reply)
    FailedCompile,
    FailedValidation, // wrong result
    Crashed,          // the worker died running it
    TimedOut,
    Abandoned, // never evaluated: the search stopped (or was killed) while it was in flight
    NoSample,  // compiled, never validated: the card has no captured sample to validate against
    // Validated against eager on a GPU but not timed (a validate-only evaluation): revisable,
    // reward 0, never a best node. Not CompiledOnly, which means no GPU was there.
    ValidatedOnly,
};

const char* nodeStatusName(NodeStatus status); // "passed", "failed-compile", ...
bool nodeStatusFromName(const std::string& name, NodeStatus& out);
bool isInFlight(NodeStatus status);
bool isFailure(NodeStatus status);
/// Passed, CompiledOnly or ValidatedOnly: the node may become the parent of a revision.
bool isRevisable(NodeStatus status);

enum class ProvenanceKind { Root, BuiltinTransformation, Llm, ManualEdit };
const char* provenanceKindName(ProvenanceKind kind); // "root", "builtin-transformation", "llm", "manual-edit"
bool provenanceKindFromName(const std::string& name, ProvenanceKind& out);

/// What produced a candidate. `details` is free-form and kept for audit (e.g. the LLM prompt and
/// response, token counts); it must never hold secrets such as API keys.
struct Provenance {
    ProvenanceKind kind = ProvenanceKind::Root;
    std::string transformation; // built-in transformation name (e.g. "vector-width-4")
    std::string provider;       // LLM provider (e.g. "openai")
    std::string model;          // LLM model name
    nlohmann::json details = nlohmann::json::object();

    bool operator==(const Provenance&) const = default;
};

/// A candidate kernel: CUDA source and its launch plan (docs/kernel-contract.md), opaque here.
struct Candidate {
    std::string source;
    nlohmann::json launchPlan = nlohmann::json::object();

    bool operator==(const Candidate&) const = default;
};

/// One node. `id` is "n<k>" where k is the creation index in the tree, stable for the tree's life.
struct SearchNode {
    std::string id;
    std::optional<std::string> parentId; // empty for the root
    std::vector<std::string> childIds;   // in creation order
    int depth = 0;                       // root = 0
    int iteration = 0;                   // the search iteration that created it (root = 0)
    std::int64_t createdUnixMs = 0;

    NodeStatus status = NodeStatus::Pending;
    std::string failureReason; // one line; empty unless a failure status
    Candidate candidate;
    Provenance provenance;
    /// What the evaluation found, typed ("evaluation_details" in tree.json; e.g. the full compiler
    /// log, the checks, the paired timing). Empty for a node never evaluated.
    EvaluationReport evaluation;

    std::optional<LatencyStats> latency; // set when measured (Passed)
    std::optional<double> eagerUs;       // eager PyTorch latency measured alongside, if any
    /// eagerUs / latency->medianUs when both are known, as recorded. What the tools show and rank
    /// is nodeSpeedup() (model/NodeRanking.h), which prefers the evaluation's paired speedup.
    std::optional<double> speedup;

    // MCTS statistics (see Mcts.h): number of backpropagations through this node and the sum of
    // their rewards. A failed node keeps visits = 0.
    int visits = 0;
    double valueSum = 0;

    bool operator==(const SearchNode&) const = default;
};

} // namespace kforge::core
