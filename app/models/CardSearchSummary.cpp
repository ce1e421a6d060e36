#include "models/CardSearchSummary.h"

#include "model/NodeRanking.h"
#include "search/TreeStore.h"

#include <QCoreApplication>

namespace kforge::app {

QString cardSearchStatusText(CardSearchStatus status)
{
    switch (status) {
    case CardSearchStatus::NotStarted:
        return QCoreApplication::translate("CardSearchSummary", "not started");
    case CardSearchStatus::Searching:
        return QCoreApplication::translate("CardSearchSummary", "searching");
    case CardSearchStatus::Improved:
        return QCoreApplication::translate("CardSearchSummary", "improved");
    case CardSearchStatus::NoGain:
        return QCoreApplication::translate("CardSearchSummary", "no gain");
    case CardSearchStatus::CompiledOnly:
        return QCoreApplication::translate("CardSearchSummary", "compiled only");
    case CardSearchStatus::ValidatedOnly:
        return QCoreApplication::translate("CardSearchSummary", "validated, not timed");
    case CardSearchStatus::NoSample:
        return QCoreApplication::translate("CardSearchSummary", "no sample");
    case CardSearchStatus::Failed:
        return QCoreApplication::translate("CardSearchSummary", "failed");
    case CardSearchStatus::NotCovered:
        return QCoreApplication::translate("CardSearchSummary", "not covered");
    case CardSearchStatus::NothingToRun:
        return QCoreApplication::translate("CardSearchSummary", "no kernel to run");
    case CardSearchStatus::VendorSkipped:
        return QCoreApplication::translate("CardSearchSummary", "skipped (vendor)");
    }
    return {};
}

CardSearchSummary summarizeTree(const core::SearchTree& tree)
{
    CardSearchSummary summary;
    summary.nodes = static_cast<int>(tree.size());
    if (const core::SearchNode* best = core::bestNode(tree)) {
        summary.bestNodeId = QString::fromStdString(best->id);
        summary.bestUs = best->latency->medianUs;
        summary.speedup = core::nodeSpeedup(*best);
        summary.eagerUs = core::nodeEagerUs(*best);
    }
    bool measured = false;
    bool compiledOnly = false;
    bool validatedOnly = false;
    bool noSample = false;
    for (const core::SearchNode& node : tree.nodes()) {
        measured = measured || node.latency.has_value();
        compiledOnly = compiledOnly || node.status == core::NodeStatus::CompiledOnly;
        validatedOnly = validatedOnly || node.status == core::NodeStatus::ValidatedOnly;
        noSample = noSample || node.status == core::NodeStatus::NoSample;
    }
    // "compiled only" is said only of candidates compiled without a GPU; a tree whose nodes all
    // failed says so, and one that had nothing to validate against says that.
    summary.status = summary.speedup && *summary.speedup > 1.0 ? CardSearchStatus::Improved
        : measured                                             ? CardSearchStatus::NoGain
        : validatedOnly                                        ? CardSearchStatus::ValidatedOnly
        : compiledOnly                                         ? CardSearchStatus::CompiledOnly
        : noSample                                             ? CardSearchStatus::NoSample
                                                               : CardSearchStatus::Failed;
    if ((summary.status == CardSearchStatus::Failed || summary.status == CardSearchStatus::NoSample) && tree.root())
        summary.reason = QString::fromStdString(tree.root()->failureReason);
    return summary;
}

QHash<QString, CardSearchSummary> summarizeSearches(const std::filesystem::path& projectDir,
                                                    const core::Project& project)
{
    QHash<QString, CardSearchSummary> summaries;
    for (const core::OperatorCard& card : project.cards) {
        CardSearchSummary summary;
        const std::filesystem::path file = core::TreeStore::defaultPath(projectDir, card.id);
        std::error_code ec;
        auto tree = std::filesystem::exists(file, ec) ? std::optional(core::TreeStore(file).load()) : std::nullopt;
        if (tree && tree->ok()) {
            summary = summarizeTree(tree->value());
        } else if (card.vendorBacked) {
            summary.status = CardSearchStatus::VendorSkipped;
        }
        summaries.insert(QString::fromStdString(card.id), summary);
    }
    return summaries;
}

} // namespace kforge::app
