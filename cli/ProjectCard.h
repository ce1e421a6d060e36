#pragma once
// The card a command works on: PROJECT_DIR opened and the card found by id or unique id prefix.

#include "model/OperatorCard.h"
#include "util/Result.h"

#include <string>

namespace kforge::cli {

/// The card, or the one-line error to print (the project's own, or "--card ID: no card ...").
core::Result<core::OperatorCard> openProjectCard(const std::string& projectDir, const std::string& cardId);

} // namespace kforge::cli
