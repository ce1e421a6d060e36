#pragma once
// Turns a found region (regions/RegionCard.h) into the card the search, the evaluator and export
// work on: an OperatorCard of op kRegionOp whose arguments are the region's inputs and whose
// `region` holds the chain (model/RegionChain.h). Samples, eager time and time share are the
// capture's to fill.

#include "model/OperatorCard.h"
#include "regions/RegionCard.h"
#include "util/Result.h"

#include <vector>

namespace kforge::core {

/// The region card of `region`, whose member card indices point into `cards`. Unsupported with the
/// reason when the chain cannot stand alone as one card: an in-place member overwrites a value the
/// region hands on (the region's outputs would not be the values eager leaves behind).
Result<OperatorCard> makeRegionCard(const RegionCard& region, const std::vector<OperatorCard>& cards);

} // namespace kforge::core
