#pragma once
// One definition of a node's speedup and of a tree's best node (docs/search.md, "Best node and
// speedup"). The search's summary, `kforge tree`, `kforge optimize`, export and every GUI pane
// (cards table, tree badge, charts, log) use these and nothing else, so no two of them can
// disagree about which node is best or how fast it is.
//
// Thread: pure functions over values.

#include "model/SearchTree.h"

#include <map>
#include <optional>
#include <string>

namespace kforge::core {

/// The speedup a node's evaluation measured over eager: the paired speedup (the median of the
/// per-repetition ratios eager / candidate, timed interleaved on the same GPU) where it was
/// measured, else eager median / candidate median (SearchNode::speedup: synthetic evaluators,
/// trees written before the paired speedup existed); nullopt when neither was measured. Whatever
/// the node's status: a candidate timed and then rejected (by the sanitizer, say) has one too.
std::optional<double> measuredSpeedup(const SearchNode& node);

/// The speedup of a passed node over eager: measuredSpeedup() for a node that passed, nullopt for
/// any other. What every tool shows as a node's speedup and ranks by.
std::optional<double> nodeSpeedup(const SearchNode& node);

/// The eager latency measuredSpeedup() was measured against: the eager median of the evaluation's
/// timing where the paired speedup is used, else SearchNode::eagerUs; nullopt when there is none.
std::optional<double> nodeEagerUs(const SearchNode& node);

/// How much faster `node` is than `baseline`, both measured: baseline median / node median (not
/// paired: the two were timed in separate evaluations, perhaps minutes apart). What the GUI shows
/// when a node other than eager is the baseline of a comparison; nullopt when either has no latency.
std::optional<double> medianSpeedupOver(const SearchNode& node, const SearchNode& baseline);

/// Whether passed node `a` ranks above passed node `b`: a node with a speedup above one without;
/// the higher speedup; at equal speedups (or none) the lower median latency. Neither ranks above
/// the other when both are equal: the earlier node stays best.
bool ranksAbove(const SearchNode& a, const SearchNode& b);

/// The GPU model whose nodes compete for best (speedups are only compared within one model): the
/// model with the most passed nodes that have a speedup, or when none has one, the most passed
/// nodes; ties go to the name that sorts first. "" for an unnamed device, or a tree where nothing
/// passed.
std::string rankedGpuModel(const SearchTree& tree);

/// The best node of each GPU model (EvaluationReport::gpuModel): the passed node no other passed
/// node of that model ranks above (ties: the earlier node), keyed by model.
std::map<std::string, const SearchNode*> bestNodeByGpu(const SearchTree& tree);

/// The speedup of each GPU model's best node (bestNodeByGpu), where it has one.
std::map<std::string, double> bestSpeedupByGpu(const SearchTree& tree);

/// The best node of the tree: bestNodeByGpu's entry for rankedGpuModel. Null when nothing passed.
const SearchNode* bestNode(const SearchTree& tree);

} // namespace kforge::core
