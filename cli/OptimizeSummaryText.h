#pragma once
// The few lines `kforge optimize` ends with (docs/search.md, "kforge optimize: outcome and exit
// status"): how many cards got faster, the best speedups, and the cards it skipped grouped by reason.
// Speedups are core's (model/NodeRanking.h), as on every card line.

#include "engine/CardSelection.h"
#include "engine/OptimizeDriver.h"

#include <string>
#include <vector>

namespace kforge::cli {

/// "summary: ..." lines, each ending in a newline. `fastest` caps the list of best speedups.
std::string formatOptimizeSummary(const core::OptimizeSummary& summary, const std::vector<core::SkippedCard>& skipped,
                                  std::size_t fastest = 5);

} // namespace kforge::cli
