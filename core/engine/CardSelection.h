#pragma once
// Which cards a search covers (docs/search.md): the ones named, else every card by share of model
// time, largest first, without the vendor-backed ones (cuBLAS/cuDNN) and, for the built-in
// proposer, without those it does not cover (an LLM may write a kernel for any op).
// Thread: pure functions over a project; reentrant.

#include "model/Project.h"
#include "util/Result.h"

#include <string>
#include <vector>

namespace kforge::core {

/// A card left out of a search, and why ("vendor-backed (cuBLAS/cuDNN)", the proposer's reason).
struct SkippedCard {
    const OperatorCard* card = nullptr;
    std::string reason;
};

struct CardSelection {
    std::vector<const OperatorCard*> cards; // in search order
    std::vector<SkippedCard> skipped;       // only when no card was named
};

/// `named`: ids or unique id prefixes, searched in the order given (an error names the first that
/// matches no card). Empty: the default choice above, for the built-in proposer when `builtin`.
Result<CardSelection> selectCardsToSearch(const Project& project, const std::vector<std::string>& named, bool builtin);

} // namespace kforge::core
