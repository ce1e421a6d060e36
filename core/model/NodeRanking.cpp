#include "model/NodeRanking.h"

#include <cmath>

namespace kforge::core {
namespace {

// Passed with a median: a node "best" may pick (a passed node always has one; a file may not).
bool passed(const SearchNode& node)
{
    return node.status == NodeStatus::Passed && node.latency && node.latency->medianUs > 0;
}

bool usesPairedSpeedup(const SearchNode& node)
{
    return node.evaluation.timing && node.evaluation.timing->pairedSpeedup;
}

} // namespace

std::optional<double> measuredSpeedup(const SearchNode& node)
{
    if (usesPairedSpeedup(node))
        return node.evaluation.timing->pairedSpeedup;
    if (!node.latency || !(node.latency->medianUs > 0))
        return std::nullopt;
    if (node.speedup)
        return node.speedup;
    if (node.eagerUs && std::isfinite(*node.eagerUs) && *node.eagerUs > 0)
        return *node.eagerUs / node.latency->medianUs;
    return std::nullopt;
}

std::optional<double> nodeSpeedup(const SearchNode& node)
{
    return passed(node) ? measuredSpeedup(node) : std::nullopt;
}

std::optional<double> nodeEagerUs(const SearchNode& node)
{
    if (usesPairedSpeedup(node) && node.evaluation.timing->eager)
        return node.evaluation.timing->eager->medianUs;
    return node.eagerUs;
}

std::optional<double> medianSpeedupOver(const SearchNode& node, const SearchNode& baseline)
{
    if (!node.latency || !baseline.latency || node.latency->medianUs <= 0)
        return std::nullopt;
    return baseline.latency->medianUs / node.latency->medianUs;
}

bool ranksAbove(const SearchNode& a, const SearchNode& b)
{
    const std::optional<double> sa = nodeSpeedup(a);
    const std::optional<double> sb = nodeSpeedup(b);
    if (sa.has_value() != sb.has_value())
        return sa.has_value();
    if (sa && *sa != *sb)
        return *sa > *sb;
    return a.latency->medianUs < b.latency->medianUs;
}

std::string rankedGpuModel(const SearchTree& tree)
{
    std::map<std::string, int> withSpeedup;
    std::map<std::string, int> passedNodes;
    for (const SearchNode& node : tree.nodes()) {
        if (!passed(node))
            continue;
        ++passedNodes[node.evaluation.gpuModel];
        if (nodeSpeedup(node))
            ++withSpeedup[node.evaluation.gpuModel];
    }
    const std::map<std::string, int>& counts = withSpeedup.empty() ? passedNodes : withSpeedup;
    std::string model; // the map's order makes the first of equal counts win
    int most = 0;
    for (const auto& [name, count] : counts) {
        if (count > most) {
            model = name;
            most = count;
        }
    }
    return model;
}

std::map<std::string, const SearchNode*> bestNodeByGpu(const SearchTree& tree)
{
    std::map<std::string, const SearchNode*> best;
    for (const SearchNode& node : tree.nodes()) {
        if (!passed(node))
            continue;
        const SearchNode*& slot = best[node.evaluation.gpuModel];
        if (!slot || ranksAbove(node, *slot))
            slot = &node;
    }
    return best;
}

std::map<std::string, double> bestSpeedupByGpu(const SearchTree& tree)
{
    std::map<std::string, double> speedups;
    for (const auto& [model, node] : bestNodeByGpu(tree))
        if (const std::optional<double> speedup = nodeSpeedup(*node))
            speedups[model] = *speedup;
    return speedups;
}

const SearchNode* bestNode(const SearchTree& tree)
{
    const std::map<std::string, const SearchNode*> best = bestNodeByGpu(tree);
    const auto it = best.find(rankedGpuModel(tree));
    return it == best.end() ? nullptr : it->second;
}

} // namespace kforge::core
