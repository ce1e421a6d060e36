#pragma once
// The read-only description of one operator card as HTML: schema, arguments, outputs, calls,
// samples and eager timing. Pure function of the value; used by CardDetailsPane.

#include "model/OperatorCard.h"

#include <QString>

namespace kforge::views {

QString cardDetailsHtml(const core::OperatorCard& card);

} // namespace kforge::views
