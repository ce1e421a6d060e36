#include "model/Project.h"

namespace kforge::core {

const OperatorCard* Project::findCard(const std::string& idOrPrefix) const
{
    if (idOrPrefix.empty())
        return nullptr;
    const OperatorCard* match = nullptr;
    for (const OperatorCard& card : cards) {
        if (card.id == idOrPrefix)
            return &card;
        if (card.id.starts_with(idOrPrefix)) {
            if (match)
                return nullptr; // ambiguous prefix
            match = &card;
        }
    }
    return match;
}

} // namespace kforge::core
