#pragma once
// Text and JSON views of a project's operator cards for the terminal.

#include "model/Project.h"
#include "regions/RegionCard.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kforge::cli {

/// Cards sorted by share of model time (largest first), then by first call position.
std::vector<const core::OperatorCard*> cardsByShare(const core::Project& project);

/// A fixed-width table: id, op, shapes/dtypes, calls, eager us, share, notes; then the fused regions
/// (regions/RegionFinder.h), one line each (formatRegionLine).
std::string formatCardsTable(const core::Project& project);

/// "region 3f2a1b2c x12  batch_norm -> relu_ -> add  (3 in, 1 out, eager ~4.20 us)".
std::string formatRegionLine(const core::RegionCard& region);

/// {"capture": {...}, "cards": [...], "regions": [...]} with cards in table order, regions in order
/// of first call.
nlohmann::json cardsJson(const core::Project& project);

} // namespace kforge::cli
