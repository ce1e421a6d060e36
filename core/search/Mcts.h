#pragma once
// Monte Carlo Tree Search over kernel revisions (formulas and defaults in docs/search.md).
//
// Every node is a real, evaluated candidate, so there are no random rollouts: a node's reward is
// its own measured speedup (nodeSpeedup, model/NodeRanking.h) in log space,
//     r(n) = clamp(ln(speedup), -rewardClip, +rewardClip),
// which makes the exploration constant mean the same on a 5 us and a 5 ms operator. A Passed node
// without a speedup (no eager time) and a CompiledOnly node have reward 0 (as fast as eager). Failed nodes
// have no reward, keep visits = 0 and are never selected, but stay in the tree.
//
// Selection walks from the root. At a revisable node v with N(v) visits and C(v) children (all
// statuses count):
//   - progressive widening: if C(v) < k * max(N(v), 1)^alpha, v is selected (it gets a new child);
//   - otherwise descend to the revisable child c maximizing
//         UCT(c) = Q(c) + explorationC * sqrt(ln N(v) / N(c)),   Q(c) = valueSum(c) / N(c),
//     with N(c) = 0 scoring +infinity; exact ties are broken by the seeded RNG;
//   - if v has no revisable child, v is selected regardless of the widening limit.
// A proposer may name nodes it has nothing left to propose for (every revision it can make of them
// is already in the tree: Proposer::exhaustedNodes). Selection then never widens such a node and
// descends only into children whose subtree still holds a node to widen, so no iteration is spent
// on a proposal that can only fail; when no such node is left the search space is exhausted and
// select() says so (NotFound). With no exhausted node this is exactly the rule above.
// Parallel search (several candidates in flight, each already a node of status Pending): every
// in-flight node adds a virtual visit worth -virtualLoss to each of its ancestors during selection,
//     N'(c) = N(c) + P(c),   Q'(c) = (valueSum(c) - virtualLoss * P(c)) / N'(c),
// with P(c) the in-flight nodes at or below c, so that concurrent selections spread over the tree
// instead of piling into the branch that looked best before their results came back. In-flight
// nodes are never selected and count as children for the widening limit. With nothing in flight
// (the sequential search) P = 0 and selection is exactly the rule above.
// Backpropagation adds one visit and the reward to every node on the path root -> n. For a failed
// node n the path stops at its parent p, and the value added is r(p): the failed revision is worth
// what its parent already achieves, so it costs the branch exploration (more visits, smaller
// bonus) without pulling its mean below or above the kernel in hand.
//
// Thread: stateless apart from the parameters; all functions are reentrant.

#include "model/SearchNode.h"
#include "model/SearchRng.h"
#include "model/SearchTree.h"
#include "util/Result.h"

#include <optional>
#include <string>
#include <unordered_set>

namespace kforge::core {

struct MctsParams {
    double explorationC = 1.0; // UCT exploration constant, in units of log-speedup
    double widenK = 1.0;       // progressive widening: children allowed while C < k * N^alpha
    double widenAlpha = 0.5;
    double rewardClip = 3.0;  // |reward| <= clip (e^3 ~ 20x speedup or slowdown)
    double virtualLoss = 0.5; // per in-flight descendant, in units of log-speedup (parallel search)
};

class Mcts {
public:
    explicit Mcts(MctsParams params = {}) : m_params(params) {}

    const MctsParams& params() const { return m_params; }

    /// The node's own reward (see the header comment); nullopt for failed and in-flight nodes.
    std::optional<double> reward(const SearchNode& node) const;
    /// The most children a node with `visits` visits may have: the number of child counts C >= 0
    /// with C < k * max(visits, 1)^alpha (a tolerance of 1e-9 absorbs rounding at exact powers).
    int maxChildren(int visits) const;
    /// Whether `node` may receive a new child now (progressive widening).
    bool mayWiden(const SearchNode& node) const;
    /// UCT score of `child` under `parent` (+infinity for an unvisited child).
    double uct(const SearchNode& parent, const SearchNode& child) const;

    /// The node to revise next. NotFound when the tree is empty or its root is not revisable
    /// (failed or in flight), or every revisable node is in `exhausted` (the proposer's
    /// exhaustedNodes), i.e. nothing can be revised.
    Result<std::string> select(const SearchTree& tree, SearchRng& rng,
                               const std::unordered_set<std::string>& exhausted = {}) const;

    /// Backpropagates the reward of a just-recorded node (see the header comment). NotFound for an
    /// unknown id; InvalidArgument for an in-flight node.
    Result<void> backpropagate(SearchTree& tree, const std::string& nodeId) const;

private:
    double uctWithLoad(const SearchNode& parent, int parentPending, const SearchNode& child, int childPending) const;

    MctsParams m_params;
};

} // namespace kforge::core
