#pragma once
// Search trees for the GUI tests, built through SearchTree's public API only (the patterns of
// tests/core/search/SearchTestSupport.h, which the GUI tests do not link). Deterministic.

#include "model/SearchTree.h"

#include <QtGlobal>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace kforge::test {

inline std::string must(core::Result<std::string> result)
{
    if (!result)
        qFatal("search tree: %s", result.error().toString().c_str());
    return *result;
}

inline void must(core::Result<void> result)
{
    if (!result)
        qFatal("search tree: %s", result.error().toString().c_str());
}

inline core::Candidate candidate(const std::string& source)
{
    core::Candidate c;
    c.source = source;
    c.launchPlan = {{"block", 128}};
    return c;
}

inline core::Provenance builtin(const std::string& transformation)
{
    core::Provenance p;
    p.kind = core::ProvenanceKind::BuiltinTransformation;
    p.transformation = transformation;
    return p;
}

/// Passed with quartiles around the median; speedup eagerUs / medianUs.
inline core::Evaluation passed(double medianUs, double eagerUs = 50.0)
{
    core::Evaluation e;
    e.status = core::NodeStatus::Passed;
    e.latency = core::LatencyStats{medianUs, medianUs * 0.97, medianUs * 1.04};
    e.eagerUs = eagerUs;
    return e;
}

inline core::Evaluation failed(core::NodeStatus status, const std::string& reason)
{
    core::Evaluation e;
    e.status = status;
    e.failureReason = reason;
    return e;
}

inline core::Evaluation compiledOnly()
{
    core::Evaluation e;
    e.status = core::NodeStatus::CompiledOnly;
    return e;
}

/// The root ("n0"), evaluated with `evaluation`.
inline std::string addRoot(core::SearchTree& tree, const core::Evaluation& evaluation)
{
    core::Provenance root;
    root.kind = core::ProvenanceKind::Root;
    const std::string id = must(tree.addRoot(candidate("k"), root, 1700000000000));
    must(tree.recordEvaluation(id, evaluation));
    return id;
}

/// A pending child of `parent` made by the built-in `transformation`.
inline std::string addChild(core::SearchTree& tree, const std::string& parent, const std::string& transformation)
{
    return must(
        tree.addChild(parent, candidate(parent + "." + transformation), builtin(transformation), 1700000000000));
}

inline std::string addChild(core::SearchTree& tree, const std::string& parent, const std::string& transformation,
                            const core::Evaluation& evaluation)
{
    const std::string id = addChild(tree, parent, transformation);
    must(tree.recordEvaluation(id, evaluation));
    return id;
}

/// Grows `tree` (which must have a passed root) by `count` nodes the way a search does: each new
/// node revises a random revisable node (half the time one of the 16 newest, else any), and ends
/// passed (~60%), failed (~25%, every failure kind), compiled-only (~5%) or still pending (~10%).
inline void growRandomly(core::SearchTree& tree, int count, std::mt19937& rng)
{
    static const char* const kTransformations[] = {"vector-width-4", "unroll-2",    "block-256",
                                                   "smem-tile",      "warp-reduce", "fast-math"};
    static const core::NodeStatus kFailures[] = {core::NodeStatus::FailedProposal, core::NodeStatus::FailedCompile,
                                                 core::NodeStatus::FailedValidation, core::NodeStatus::Crashed,
                                                 core::NodeStatus::TimedOut};
    std::vector<std::string> revisable;
    for (const core::SearchNode& node : tree.nodes()) {
        if (core::isRevisable(node.status))
            revisable.push_back(node.id);
    }
    if (revisable.empty())
        qFatal("growRandomly: nothing to revise");
    for (int i = 0; i < count; ++i) {
        const std::size_t recent = std::min<std::size_t>(16, revisable.size());
        const std::size_t pick = (rng() % 2 == 0) ? revisable.size() - 1 - rng() % recent : rng() % revisable.size();
        const std::string id = addChild(tree, revisable[pick], kTransformations[rng() % 6]);
        const unsigned roll = rng() % 100;
        if (roll < 60) {
            must(tree.recordEvaluation(id, passed(5.0 + static_cast<double>(rng() % 5000) / 100.0)));
            revisable.push_back(id);
        } else if (roll < 85) {
            must(tree.recordEvaluation(id, failed(kFailures[rng() % 5], "error in " + id + "\nsecond line")));
        } else if (roll < 90) {
            must(tree.recordEvaluation(id, compiledOnly()));
            revisable.push_back(id);
        } // else: still pending
    }
}

/// A tree of `size` nodes for `cardId` (see growRandomly).
inline core::SearchTree randomTree(const std::string& cardId, int size, std::uint32_t seed)
{
    core::SearchTree tree(cardId, seed);
    addRoot(tree, passed(60.0));
    std::mt19937 rng(seed);
    growRandomly(tree, size - 1, rng);
    return tree;
}

} // namespace kforge::test
