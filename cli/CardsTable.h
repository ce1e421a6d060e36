#pragma once
// Text and JSON views of a project's operator cards for the terminal.

#include "model/Project.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kforge::cli {

/// Cards sorted by share of model time (largest first), then by first call position.
std::vector<const core::OperatorCard*> cardsByShare(const core::Project& project);

/// A fixed-width table: id, op (a region card: "region: op -> op -> ...", its whole chain on the next
/// line when the column cuts it), shapes/dtypes, calls, eager us, share, notes; then how many of the
/// cards are fused regions.
std::string formatCardsTable(const core::Project& project);

/// {"capture": {...}, "cards": [...]} with cards in table order (a region card carries "region").
nlohmann::json cardsJson(const core::Project& project);

} // namespace kforge::cli
