#pragma once
// Compiles, validates and times a candidate for a search run. SearchRun depends only on this.

#include "model/Evaluation.h"
#include "model/SearchNode.h"
#include "util/Result.h"

#include <atomic>
#include <map>
#include <string>
#include <vector>

namespace kforge::core {

/// Thread: called only on the thread that runs SearchRun::run(), one call at a time. `stop` may be
/// set from any thread. A candidate that fails (compile error, wrong result, crash, timeout) is a
/// value with a failure status, not an error. Errors mean the candidate could not be judged and
/// stop the run without recording it: Cancelled ends the run as Requested, anything else (e.g. the
/// worker cannot be started) ends run() with that error.
class Evaluator {
public:
    virtual ~Evaluator() = default;
    virtual Result<Evaluation> evaluate(const Candidate& candidate, const std::atomic<bool>& stop) = 0;
    /// Candidates the search may evaluate next: an evaluator may prepare them (compile ahead on
    /// other threads) while evaluate() runs. A hint only: it must not change any evaluation's result.
    virtual void prepareAhead(const std::vector<Candidate>& likelyNext) { (void)likelyNext; }
    /// The speedup of the card's best node on each GPU model (NodeRanking.h: bestSpeedupByGpu), given
    /// before each evaluate(): an evaluator may stop timing a candidate clearly slower than its GPU
    /// model's best (docs/validation.md, "Stopping early"). Its speedup is then measured over fewer
    /// repetitions; a candidate that could become the best is always timed in full.
    virtual void noteBestSpeedups(const std::map<std::string, double>& byGpuModel) { (void)byGpuModel; }
};

} // namespace kforge::core
