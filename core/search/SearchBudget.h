#pragma once
// When a search run stops (docs/search.md). Iterations count nodes in the tree (one node per
// iteration, the root included), so a resumed run continues to the same total.
// Thread: a plain value; shouldStop is reentrant.

#include "model/SearchTree.h"

#include <optional>

namespace kforge::core {

enum class StopReason {
    IterationLimit,  // the tree holds maxIterations nodes
    TimeLimit,       // this run has used wallTimeLimitS
    Plateau,         // the best speedup stopped improving
    Requested,       // the stop flag was set (or the proposer/evaluator reported cancellation)
    NothingToRevise, // no revisable node (e.g. the root failed)
};
const char* stopReasonName(StopReason reason); // "iteration-limit", "time-limit", ...

struct SearchBudget {
    int maxIterations = 50;       // nodes in the tree, root included; <= 0: no limit
    double wallTimeLimitS = 0;    // wall time of this run() call; <= 0: no limit
    int plateauIterations = 0;    // N; <= 0: no plateau stop
    double plateauMinGain = 0.01; // X as a fraction: stop unless the best improved by more than X

    /// Checked before each iteration. Plateau: with n nodes and n > N, let B_old be the best
    /// speedup among nodes of iterations < n - N and B the best overall; stop when
    /// B <= B_old * (1 + plateauMinGain). No plateau stop while B_old does not exist (no measured
    /// node before the window). Order of checks: Requested, IterationLimit, TimeLimit, Plateau.
    std::optional<StopReason> shouldStop(const SearchTree& tree, double elapsedS, bool stopRequested) const;
};

} // namespace kforge::core
