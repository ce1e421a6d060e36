#pragma once
// What the cards table shows of each card's search: best latency, speedup and a status word, read
// from the cards' tree files (docs/search.md). Pure value code: summarizeSearches() may run on any
// thread (the main window runs it on a pool thread).

#include "project/Project.h"

#include <QHash>
#include <QString>

#include <filesystem>
#include <optional>

namespace kforge::app {

enum class CardSearchStatus {
    NotStarted,   // no tree file
    Searching,    // a run is on this card now (set by the GUI, not read from files)
    Improved,     // a passed node beats eager
    NoGain,       // searched and measured, nothing faster than eager
    CompiledOnly, // searched without a GPU: candidates compiled, none measured
    VendorSkipped // cuBLAS/cuDNN-backed: the search skips it
};
QString cardSearchStatusText(CardSearchStatus status); // "not started", "searching", ...

struct CardSearchSummary {
    CardSearchStatus status = CardSearchStatus::NotStarted;
    std::optional<double> bestUs;  // the fastest passed node's median
    std::optional<double> speedup; // that node's speedup over eager
    int nodes = 0;
};

/// One summary per card id (full 16-digit id). A tree file that cannot be read counts as not started.
QHash<QString, CardSearchSummary> summarizeSearches(const std::filesystem::path& projectDir,
                                                    const core::Project& project);

} // namespace kforge::app
