#pragma once
// Checks the built-in proposer's tests share: a candidate's plan validates and its source compiles
// with NVRTC for sm_90 without warnings; a search chain grown as MCTS would grow it.

#include "builtin_proposer/BuiltinProposer.h"
#include "kernel/CachingCompiler.h"
#include "model/LaunchPlan.h"
#include "model/SearchTree.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>

namespace kforge::core::test_candidates {

inline Evaluation passed(double us)
{
    Evaluation e;
    e.status = NodeStatus::Passed;
    e.latency = LatencyStats{us, us * 0.95, us * 1.05};
    e.eagerUs = 20.0;
    return e;
}

inline CachingCompiler& compiler()
{
    static CachingCompiler instance; // memory-only cache
    return instance;
}

// The plan parses and validates against the card, the source compiles for sm_90 without errors and
// every planned kernel is an entry of the PTX.
inline void expectGoodCandidate(const OperatorCard& card, const Candidate& candidate, const std::string& what)
{
    SCOPED_TRACE(what);
    auto plan = parseLaunchPlan(candidate.launchPlan, card);
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    auto valid = validateLaunchPlan(plan.value(), card);
    ASSERT_TRUE(valid.ok()) << valid.error().toString();
    auto compiled = compiler().compile(candidate.source, CompileOptions{});
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    ASSERT_TRUE(compiled->ok) << compiled->log << "\n" << candidate.source;
    EXPECT_EQ(compiled->log.find("warning"), std::string::npos) << compiled->log;
    for (const KernelLaunch& launch : plan->launches)
        EXPECT_NE(compiled->ptx.find(".entry " + launch.kernel), std::string::npos) << launch.kernel;
}

// Grows a tree as a search would (root, then `steps` revisions of the latest passed node, each marked
// passed with a fake latency) and checks every candidate when `compile` is set. Returns the tree.
inline SearchTree growChain(const OperatorCard& card, int steps, bool compile, std::uint64_t seed = 7)
{
    BuiltinProposer proposer(card);
    std::atomic<bool> stop{false};
    SearchTree tree(card.id, seed);
    auto root = proposer.proposeRoot(tree, stop);
    EXPECT_TRUE(root.ok()) << (root.ok() ? "" : root.error().toString());
    if (!root.ok())
        return tree;
    EXPECT_TRUE(root->failureReason.empty());
    if (compile)
        expectGoodCandidate(card, root->candidate, "root " + root->provenance.details.dump());
    std::string last = tree.addRoot(root->candidate, root->provenance, 0).value();
    EXPECT_TRUE(tree.recordEvaluation(last, passed(10)).ok());
    for (int i = 0; i < steps; ++i) {
        const SearchNode& parent = *tree.find(last);
        auto p = proposer.propose(tree, parent, stop);
        EXPECT_TRUE(p.ok());
        if (!p.ok() || !p->failureReason.empty())
            break;
        EXPECT_EQ(p->provenance.kind, ProvenanceKind::BuiltinTransformation);
        EXPECT_FALSE(p->provenance.transformation.empty());
        if (compile)
            expectGoodCandidate(card, p->candidate,
                                p->provenance.transformation + " " + p->provenance.details["params"].dump());
        last = tree.addChild(last, p->candidate, p->provenance, 0).value();
        EXPECT_TRUE(tree.recordEvaluation(last, passed(10.0 - i * 0.1)).ok());
    }
    return tree;
}

} // namespace kforge::core::test_candidates
