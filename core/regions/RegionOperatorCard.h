#pragma once
// Turns a found region (regions/RegionCard.h) into the card the search, the evaluator and export
// work on: an OperatorCard of op kRegionOp whose arguments are the region's inputs and whose
// `region` holds the chain (model/RegionChain.h). Samples, eager time and time share are the
// capture's to fill.

#include "model/OperatorCard.h"
#include "regions/RegionCard.h"
#include "util/Result.h"

#include <string>
#include <vector>

namespace kforge::core {

/// The region card of `region`, whose member card indices point into `cards`. Unsupported with the
/// reason when the chain cannot stand alone as one card: an in-place member overwrites a value the
/// region hands on (the region's outputs would not be the values eager leaves behind).
Result<OperatorCard> makeRegionCard(const RegionCard& region, const std::vector<OperatorCard>& cards);

/// Single-op card `card` as a one-member region card, so that what generates a chain's kernel
/// generates its: one member with the card's op, overload and arguments; region input in<k> its
/// k-th tensor argument (schema order; member 0's sources say which argument each is); outputs
/// the card's. An in-place op's output 0 is still self's value, written into self. InvalidArgument
/// when the card is a region card already or takes a tensor list.
Result<OperatorCard> makeOpChainCard(const OperatorCard& card);

/// For a card makeOpChainCard made: per region input k, the name of the single-op card's argument
/// that member 0 reads it as ("self", "weight"): what a kernel's plan passes for that input.
std::vector<std::string> opChainArgumentNames(const OperatorCard& chainCard);

} // namespace kforge::core
