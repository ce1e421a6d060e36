#include "search/Mcts.h"

#include "model/NodeRanking.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <vector>

namespace kforge::core {
namespace {

constexpr double kWidenTolerance = 1e-9;

bool sameScore(double a, double b)
{
    if (std::isinf(a) || std::isinf(b))
        return a == b;
    return std::abs(a - b) <= 1e-12 * std::max({1.0, std::abs(a), std::abs(b)});
}

} // namespace

std::optional<double> Mcts::reward(const SearchNode& node) const
{
    if (node.status == NodeStatus::CompiledOnly || node.status == NodeStatus::ValidatedOnly)
        return 0.0;
    if (node.status != NodeStatus::Passed)
        return std::nullopt;
    const std::optional<double> speedup = nodeSpeedup(node); // the speedup every tool shows
    if (!speedup)
        return 0.0;
    return std::clamp(std::log(*speedup), -m_params.rewardClip, m_params.rewardClip);
}

int Mcts::maxChildren(int visits) const
{
    double limit = m_params.widenK * std::pow(static_cast<double>(std::max(visits, 1)), m_params.widenAlpha);
    // Largest C with C < limit - tolerance, plus one (C counts from 0).
    double c = std::ceil(limit - kWidenTolerance);
    return std::max(0, static_cast<int>(c));
}

bool Mcts::mayWiden(const SearchNode& node) const
{
    return static_cast<int>(node.childIds.size()) < maxChildren(node.visits);
}

double Mcts::uct(const SearchNode& parent, const SearchNode& child) const
{
    if (child.visits <= 0)
        return std::numeric_limits<double>::infinity();
    double mean = child.valueSum / child.visits;
    double parentVisits = std::max(parent.visits, 1);
    return mean + m_params.explorationC * std::sqrt(std::log(parentVisits) / child.visits);
}

double Mcts::uctWithLoad(const SearchNode& parent, int parentPending, const SearchNode& child, int childPending) const
{
    if (parentPending == 0 && childPending == 0)
        return uct(parent, child);
    const int visits = child.visits + childPending;
    if (visits <= 0)
        return std::numeric_limits<double>::infinity();
    const double mean = (child.valueSum - m_params.virtualLoss * childPending) / visits;
    const double parentVisits = std::max(parent.visits + parentPending, 1);
    return mean + m_params.explorationC * std::sqrt(std::log(parentVisits) / visits);
}

Result<std::string> Mcts::select(const SearchTree& tree, SearchRng& rng,
                                 const std::unordered_set<std::string>& exhausted) const
{
    const SearchNode* node = tree.root();
    if (!node)
        return makeError(ErrorCode::NotFound, "the search tree has no root", tree.cardId());
    if (!isRevisable(node->status))
        return makeError(ErrorCode::NotFound,
                         std::string("nothing can be revised: the root is ") + nodeStatusName(node->status),
                         tree.cardId());
    // In-flight nodes at or below each node (the virtual loss); empty in a sequential search.
    std::unordered_map<std::string, int> pending;
    for (const SearchNode& n : tree.nodes()) {
        if (!isInFlight(n.status))
            continue;
        for (const SearchNode* ancestor : tree.lineage(n.id))
            ++pending[ancestor->id];
    }
    auto pendingAt = [&pending](const std::string& id) {
        auto found = pending.find(id);
        return found == pending.end() ? 0 : found->second;
    };
    // Nodes at or below which a revisable, not exhausted node remains. Children come after their
    // parents in creation order, so one pass from the newest node settles every subtree.
    std::unordered_set<std::string> open;
    if (!exhausted.empty()) {
        const std::vector<SearchNode>& nodes = tree.nodes();
        for (auto n = nodes.rbegin(); n != nodes.rend(); ++n) {
            if (!isRevisable(n->status))
                continue;
            bool offers = !exhausted.contains(n->id);
            for (const std::string& childId : n->childIds)
                offers = offers || open.contains(childId);
            if (offers)
                open.insert(n->id);
        }
        if (!open.contains(node->id))
            return makeError(ErrorCode::NotFound,
                             "the search space is exhausted: every revision the proposer can make of every node is "
                             "in the tree",
                             tree.cardId());
    }
    const auto offersWork = [&](const SearchNode& n) { return exhausted.empty() || open.contains(n.id); };
    for (;;) {
        const bool widenable = !exhausted.contains(node->id);
        if (widenable && mayWiden(*node))
            return node->id;
        std::vector<const SearchNode*> best;
        double bestScore = -std::numeric_limits<double>::infinity();
        for (const std::string& childId : node->childIds) {
            const SearchNode* child = tree.find(childId);
            if (!child || !isRevisable(child->status) || !offersWork(*child))
                continue;
            double score = uctWithLoad(*node, pendingAt(node->id), *child, pendingAt(child->id));
            if (best.empty() || (!sameScore(score, bestScore) && score > bestScore)) {
                best.assign(1, child);
                bestScore = score;
            } else if (sameScore(score, bestScore)) {
                best.push_back(child);
            }
        }
        if (best.empty())
            return node->id; // every child failed, is in flight or exhausted: widen regardless (an
                             // exhausted node is never here: it is open only through a child)
        node = best[rng.pick(best.size())];
    }
}

Result<void> Mcts::backpropagate(SearchTree& tree, const std::string& nodeId) const
{
    const SearchNode* node = tree.find(nodeId);
    if (!node)
        return makeError(ErrorCode::NotFound, "no node '" + nodeId + "' in the search tree", tree.cardId());
    if (isInFlight(node->status))
        return makeError(ErrorCode::InvalidArgument, "cannot backpropagate a node that is still in flight",
                         tree.cardId() + " " + nodeId);
    std::optional<double> value = reward(*node);
    std::string start = nodeId;
    if (!value) { // failed: credit the parent's own reward to the path root -> parent
        if (!node->parentId)
            return {}; // a failed root: nothing to credit
        start = *node->parentId;
        value = reward(*tree.find(start));
        if (!value)
            value = 0.0;
    }
    std::vector<const SearchNode*> path = tree.lineage(start);
    std::vector<std::string> ids;
    for (const SearchNode* n : path)
        ids.push_back(n->id);
    for (const std::string& id : ids)
        if (auto added = tree.addVisit(id, *value); !added)
            return added.error();
    return {};
}

} // namespace kforge::core
