#include "search/SearchBudget.h"

#include "model/NodeRanking.h"

#include <algorithm>

namespace kforge::core {

const char* stopReasonName(StopReason reason)
{
    switch (reason) {
    case StopReason::IterationLimit:
        return "iteration-limit";
    case StopReason::TimeLimit:
        return "time-limit";
    case StopReason::Plateau:
        return "plateau";
    case StopReason::Requested:
        return "requested";
    case StopReason::NothingToRevise:
        return "nothing-to-revise";
    }
    return "unknown";
}

std::optional<StopReason> SearchBudget::shouldStop(const SearchTree& tree, double elapsedS, bool stopRequested) const
{
    if (stopRequested)
        return StopReason::Requested;
    const int n = static_cast<int>(tree.size());
    if (maxIterations > 0 && n >= maxIterations)
        return StopReason::IterationLimit;
    if (wallTimeLimitS > 0 && elapsedS >= wallTimeLimitS)
        return StopReason::TimeLimit;
    if (plateauIterations > 0 && n > plateauIterations) {
        std::optional<double> bestOld, best;
        for (const SearchNode& node : tree.nodes()) {
            const std::optional<double> speedup = nodeSpeedup(node);
            if (!speedup)
                continue;
            best = std::max(best.value_or(*speedup), *speedup);
            if (node.iteration < n - plateauIterations)
                bestOld = std::max(bestOld.value_or(*speedup), *speedup);
        }
        if (bestOld && *best <= *bestOld * (1.0 + plateauMinGain))
            return StopReason::Plateau;
    }
    return std::nullopt;
}

} // namespace kforge::core
