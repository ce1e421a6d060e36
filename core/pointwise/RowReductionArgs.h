#pragma once
// Reading a row-reduction member's arguments (PointwiseRowReductions.cpp, PointwiseRowStatistics.cpp).
// Internal to kforge_pointwise.

#include "model/OperatorCard.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace kforge::core::row_args {

/// The member's argument `name`, its index in `index` when given; nullptr when it has none.
const ArgSpec* named(const ChainMember& member, std::string_view name, std::size_t* index = nullptr);
/// Argument `name` as a number (a bool is 0 / 1); nullopt when absent, None or not a number.
std::optional<double> number(const ChainMember& member, std::string_view name);
/// Whether argument `name` is absent or None.
bool absent(const ChainMember& member, std::string_view name);
/// The dims a reduction's `dim` argument names, normalized to 0..rank-1 and sorted: an int, a list
/// of ints, or None / [] / no argument for every dim. nullopt when it is none of these or out of range.
std::optional<std::vector<std::int64_t>> reducedDims(const ArgSpec* dim, std::int64_t rank);

} // namespace kforge::core::row_args
