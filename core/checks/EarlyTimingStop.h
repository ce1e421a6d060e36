#pragma once
// When the evaluator may stop timing a candidate before its repetitions are done (docs/validation.md,
// "Stopping early"): a search needs a full measurement only of a candidate that could become the
// card's best node, so one clearly slower than the best its GPU model has is timed for a few
// brackets and reported with those. Torch-free, so that the rule is tested on the CPU.

#include <vector>

namespace kforge::core {

/// Cold repetitions timed before the rule looks; the warm-L2 repetitions of a stopped candidate.
inline constexpr int kEarlyLookRepetitions = 10;
inline constexpr int kStoppedWarmRepetitions = 3;

/// A candidate is clearly slower when the third quartile of its paired ratios (eager / candidate,
/// one per bracket) is below this share of the best node's speedup: in three brackets of four it
/// loses more than 10% to the best, so its median (what ranks nodes) cannot reach the best's.
inline constexpr double kClearlySlowerShare = 0.9;

/// Whether timing may stop after `pairedRatios` (at least kEarlyLookRepetitions of them) because
/// the candidate is clearly slower than `bestSpeedup`, the best paired speedup of the card's tree
/// on this GPU model (0 or less: there is none, and timing never stops early).
bool clearlySlowerThanBest(const std::vector<double>& pairedRatios, double bestSpeedup);

/// The third quartile of `values` (linear between the two nearest ranks); 0 for none.
double thirdQuartile(std::vector<double> values);

} // namespace kforge::core
