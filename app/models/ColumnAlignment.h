#pragma once
// The text alignment the item models give a column: numbers right-aligned so that digits line up,
// text left-aligned (Qt::TextAlignmentRole of both the cells and the header).

#include <QVariant>

namespace kforge::app {

inline QVariant columnAlignment(bool numeric)
{
    return QVariant(int((numeric ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter));
}

} // namespace kforge::app
