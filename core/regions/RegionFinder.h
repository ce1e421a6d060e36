#pragma once
// Region discovery on a captured forward's call graph: maximal connected groups (2 calls or more)
// of fusible calls (regions/FusibleOps.h) joined by producer -> consumer edges, split where a group
// is not convex (a path from a member through a non-member back into the group), then merged by
// identity: the same chain repeated in several layers is one RegionCard with several occurrences.
// Pure and deterministic: the same capture gives the same regions and ids.

#include "model/CallGraph.h"
#include "model/OperatorCard.h"
#include "regions/RegionCard.h"

#include <vector>

namespace kforge::core {

/// The regions of `graph`, whose call card indices point into `cards` (a graph that passed
/// CallGraph::problem), ordered by their first call position. An empty graph has none.
std::vector<RegionCard> findRegions(const CallGraph& graph, const std::vector<OperatorCard>& cards);

} // namespace kforge::core
