#pragma once
// What the cards table shows of each card's search: the best node's latency, its speedup, the
// eager time that speedup was measured against and a status word, read from the cards' tree files
// (docs/search.md). "Best" and "speedup" are core's (model/NodeRanking.h), as in every other
// view and in the CLI. Pure value code: summarizeSearches() may run on any thread (the main window
// runs it on a pool thread).

#include "model/Project.h"
#include "model/SearchTree.h"

#include <QHash>
#include <QString>

#include <filesystem>
#include <optional>

namespace kforge::app {

enum class CardSearchStatus {
    NotStarted,    // no tree file
    Searching,     // a run is on this card now (set by the GUI, not read from files)
    Improved,      // a passed node beats eager
    NoGain,        // searched and measured, nothing faster than eager
    CompiledOnly,  // searched without a GPU: candidates compiled, none measured
    ValidatedOnly, // candidates validated on a GPU, none timed (validate-only evaluations)
    NoSample,      // the card has no captured sample, so nothing could be validated
    Failed,        // searched on a GPU, every node failed (the root's reason says why)
    NotCovered,    // the proposer in use has no kernel for it (reason says why); never searched
    NothingToRun,  // a view of an input or the input itself (flatten, transpose, dropout in eval)
    VendorSkipped  // cuBLAS/cuDNN-backed: the search skips it
};
QString cardSearchStatusText(CardSearchStatus status); // "not started", "searching", ...

struct CardSearchSummary {
    CardSearchStatus status = CardSearchStatus::NotStarted;
    QString bestNodeId;            // core::bestNode's id; empty when nothing passed
    std::optional<double> bestUs;  // its median
    std::optional<double> speedup; // its core::nodeSpeedup
    std::optional<double> eagerUs; // the eager median that speedup was measured against (core::nodeEagerUs)
    int nodes = 0;
    /// Why the status is what it is, where there is more to say: the root's failure reason of a
    /// failed or no-sample tree, the proposer's refusal of a card it does not cover.
    QString reason;
};

/// The summary of one card's tree.
CardSearchSummary summarizeTree(const core::SearchTree& tree);

/// One summary per card id (full 16-digit id). A tree file that cannot be read counts as not started.
QHash<QString, CardSearchSummary> summarizeSearches(const std::filesystem::path& projectDir,
                                                    const core::Project& project);

} // namespace kforge::app
