#include "CardsTable.h"

#include "project/ProjectJson.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace kforge::cli {
namespace {

std::string tensorSummary(const core::OperatorCard& card)
{
    std::string text;
    for (const core::ArgSpec& arg : card.args) {
        if (arg.kind != core::ArgKind::Tensor && arg.kind != core::ArgKind::TensorList)
            continue;
        if (!text.empty())
            text += ' ';
        text += arg.toShortString();
    }
    return text;
}

std::string truncate(const std::string& text, size_t width)
{
    return text.size() <= width ? text : text.substr(0, width - 3) + "...";
}

std::string notesOf(const core::OperatorCard& card)
{
    std::string notes;
    if (card.vendorBacked)
        notes += "vendor ";
    notes += std::to_string(card.samples.size()) + " sample" + (card.samples.size() == 1 ? "" : "s");
    if (!card.eager)
        notes += "; not timed: " + card.eagerNote;
    return notes;
}

} // namespace

std::vector<const core::OperatorCard*> cardsByShare(const core::Project& project)
{
    std::vector<const core::OperatorCard*> cards;
    for (const core::OperatorCard& card : project.cards)
        cards.push_back(&card);
    std::stable_sort(cards.begin(), cards.end(), [](const core::OperatorCard* a, const core::OperatorCard* b) {
        if (a->timeShare != b->timeShare)
            return a->timeShare > b->timeShare;
        return a->callPositions.front() < b->callPositions.front();
    });
    return cards;
}

std::string formatCardsTable(const core::Project& project)
{
    std::ostringstream out;
    const core::CaptureInfo& info = project.capture;
    out << "model " << info.modelPath << "\n"
        << "device " << info.device
        << (info.device == "cpu"
                ? " (CPU: latencies are CPU wall-clock times, indicative only: a busy host moves them; not GPU times)"
                : " (" + info.deviceName + ")")
        << ", torch " << info.torchVersion << ", " << info.totalCalls << " top-level ATen calls, "
        << project.cards.size() << " cards\n";
    char line[512];
    std::snprintf(line, sizeof line, "%-8s  %-32s  %-44s  %5s  %10s  %6s  %s\n", "card", "op", "tensors", "calls",
                  "eager us", "share", "notes");
    out << line;
    for (const core::OperatorCard* card : cardsByShare(project)) {
        char eager[32] = "-";
        if (card->eager)
            std::snprintf(eager, sizeof eager, "%.2f", card->eager->medianUs);
        std::snprintf(line, sizeof line, "%-8s  %-32s  %-44s  %5lld  %10s  %5.1f%%  %s\n",
                      card->id.substr(0, 8).c_str(), truncate(card->displayName(), 32).c_str(),
                      truncate(tensorSummary(*card), 44).c_str(), static_cast<long long>(card->callCount), eager,
                      card->timeShare * 100.0, notesOf(*card).c_str());
        out << line;
        // A region's chain rarely fits the op column: the whole chain follows on its own line.
        if (card->region && card->displayName().size() > 32)
            out << "          chain: " << card->region->text() << "\n";
    }
    const auto regions = std::count_if(project.cards.begin(), project.cards.end(),
                                       [](const core::OperatorCard& card) { return card.isRegion(); });
    if (regions == 0 && project.graph.empty())
        out << "no call graph (captured before graph.json): no fused regions\n";
    else
        out << regions << " fused-region card" << (regions == 1 ? "" : "s")
            << " (a chain of native ops one kernel may replace; eager us is the chain replayed alone, share its "
               "members' calls; its member ops keep their own cards)\n";
    return out.str();
}

nlohmann::json cardsJson(const core::Project& project)
{
    nlohmann::json cards = nlohmann::json::array();
    for (const core::OperatorCard* card : cardsByShare(project))
        cards.push_back(core::toJson(*card));
    return nlohmann::json{{"capture", core::toJson(project.capture)}, {"cards", cards}};
}

} // namespace kforge::cli
