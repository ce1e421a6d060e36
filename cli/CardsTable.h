#pragma once
// Text and JSON views of a project's operator cards for the terminal.

#include "model/Project.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kforge::cli {

/// Cards sorted by share of model time (largest first), then by first call position.
std::vector<const core::OperatorCard*> cardsByShare(const core::Project& project);

/// A fixed-width table: id, op, shapes/dtypes, calls, eager us, share, notes.
std::string formatCardsTable(const core::Project& project);

/// {"capture": {...}, "cards": [...]} with cards in table order.
nlohmann::json cardsJson(const core::Project& project);

} // namespace kforge::cli
