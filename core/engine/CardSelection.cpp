#include "engine/CardSelection.h"

#include "builtin_proposer/BuiltinProposer.h"

#include <algorithm>

namespace kforge::core {

Result<CardSelection> selectCardsToSearch(const Project& project, const std::vector<std::string>& named, bool builtin)
{
    CardSelection selection;
    if (!named.empty()) {
        for (const std::string& id : named) {
            const OperatorCard* card = project.findCard(id);
            if (!card)
                return makeError(ErrorCode::InvalidArgument, "no card with that id (or the prefix is ambiguous)",
                                 "--cards " + id);
            selection.cards.push_back(card);
        }
        return selection;
    }
    std::vector<const OperatorCard*> byShare;
    for (const OperatorCard& card : project.cards)
        byShare.push_back(&card);
    std::stable_sort(byShare.begin(), byShare.end(),
                     [](const OperatorCard* a, const OperatorCard* b) { return a->timeShare > b->timeShare; });
    for (const OperatorCard* card : byShare) {
        if (card->computesNothing()) {
            selection.skipped.push_back(
                {card, "no kernel to run: its output is a view of an input or the input itself"});
            continue;
        }
        if (card->vendorBacked) {
            selection.skipped.push_back({card, "vendor-backed (cuBLAS/cuDNN)"});
            continue;
        }
        if (builtin) {
            if (auto supported = BuiltinProposer::supports(*card); !supported) {
                selection.skipped.push_back({card, supported.error().message});
                continue;
            }
        }
        selection.cards.push_back(card);
    }
    return selection;
}

} // namespace kforge::core
