#pragma once
// Search trees for the GUI tests, built through SearchTree's public API only (the patterns of
// tests/core/search/SearchTestSupport.h, which the GUI tests do not link). Deterministic.

#include "model/SearchTree.h"

#include <QtGlobal>

#include <algorithm>
#include <cmath>
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

/// A search tree as a run of the built-in proposer leaves it: the root about as fast as eager,
/// revisions that mostly pass with speedups drifting from their parent's (0.4x .. 3x), and the
/// usual failures: compile errors, wrong results, crashes, timeouts, no samples, compile-only
/// nodes and a few still pending.
inline core::SearchTree plausibleTree(const std::string& cardId, int size, std::uint32_t seed)
{
    static const char* const kTransformations[] = {"vector-width 4->8", "unroll 2",        "threads-per-block 256",
                                                   "smem-tile 32",      "warp-reduce",     "fast-math",
                                                   "loop-interchange",  "register-block 4"};
    constexpr double kEagerUs = 40.0;
    core::SearchTree tree(cardId, seed);
    addRoot(tree, passed(kEagerUs / 1.01, kEagerUs));
    std::mt19937 rng(seed);
    std::normal_distribution<double> drift(0.03, 0.09);
    std::vector<std::pair<std::string, double>> revisable{{"n0", 1.01}};
    for (int i = 1; i < size; ++i) {
        const std::size_t recent = std::min<std::size_t>(12, revisable.size());
        const std::size_t pick = rng() % 3 != 0 ? revisable.size() - 1 - rng() % recent : rng() % revisable.size();
        const auto [parent, parentSpeedup] = revisable[pick];
        const std::string id = addChild(tree, parent, kTransformations[rng() % 8]);
        const unsigned roll = rng() % 100;
        if (roll < 62) {
            const double speedup = std::clamp(parentSpeedup * std::exp(drift(rng)), 0.4, 3.0);
            must(tree.recordEvaluation(id, passed(kEagerUs / speedup, kEagerUs)));
            revisable.emplace_back(id, speedup);
        } else if (roll < 74) {
            must(tree.recordEvaluation(
                id, failed(core::NodeStatus::FailedCompile, "error: identifier \"tile\" is undefined")));
        } else if (roll < 82) {
            must(tree.recordEvaluation(id, failed(core::NodeStatus::FailedValidation, "max abs error 0.031")));
        } else if (roll < 86) {
            must(tree.recordEvaluation(id, failed(core::NodeStatus::Crashed, "worker exited, signal 11")));
        } else if (roll < 89) {
            must(tree.recordEvaluation(id, failed(core::NodeStatus::TimedOut, "watchdog: 2 s")));
        } else if (roll < 93) {
            must(tree.recordEvaluation(id, failed(core::NodeStatus::NoSample, "no captured sample")));
        } else if (roll < 97) {
            must(tree.recordEvaluation(id, compiledOnly()));
            revisable.emplace_back(id, parentSpeedup);
        } // else: still pending
    }
    return tree;
}

} // namespace kforge::test
