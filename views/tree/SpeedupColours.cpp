#include "views/tree/SpeedupColours.h"

#include "model/NodeRanking.h"

#include <QCoreApplication>

#include <algorithm>
#include <cmath>

namespace kforge::views {
namespace {

using core::NodeStatus;

const QColor kNeutral(0xbd, 0xbd, 0xbd); // 1.0x
const QColor kSlow(0xe0, 0x3a, 0x34);    // kSlowest and below
const QColor kFast(0x17, 0x85, 0x35);    // kFastest and above

QColor mix(const QColor& from, const QColor& to, double t)
{
    const auto channel = [t](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * t)); };
    return QColor(channel(from.red(), to.red()), channel(from.green(), to.green()), channel(from.blue(), to.blue()));
}

QString tr(const char* text)
{
    return QCoreApplication::translate("kforge::views::SpeedupColours", text);
}

} // namespace

SpeedupColours::Category SpeedupColours::categoryOf(const core::SearchNode& node)
{
    if (core::isInFlight(node.status))
        return Category::InFlight;
    switch (node.status) {
    case NodeStatus::Passed:
        return core::nodeSpeedup(node) ? Category::Speedup : Category::PassedUnmeasured;
    case NodeStatus::ValidatedOnly:
        return Category::PassedUnmeasured;
    case NodeStatus::CompiledOnly:
        return Category::CompiledOnly;
    case NodeStatus::FailedValidation:
        return Category::WrongResult;
    case NodeStatus::NoSample:
        return Category::NoSample;
    default:
        return Category::Failed;
    }
}

QColor SpeedupColours::fillOf(const core::SearchNode& node)
{
    const Category category = categoryOf(node);
    if (category == Category::Speedup)
        return colourFor(*core::nodeSpeedup(node));
    return categoryColour(category);
}

QColor SpeedupColours::colourFor(double speedup)
{
    if (!(speedup > 0)) // zero, negative or NaN: as slow as it gets
        return kSlow;
    // Position on a log2 scale, -1 at kSlowest, +1 at kFastest; the square root spreads the values
    // near 1.0x (where most nodes are) so that a few percent already show as a tint.
    const double span = std::log2(kFastest);
    const double t = std::clamp(std::log2(speedup) / span, -1.0, 1.0);
    const double strength = std::sqrt(std::fabs(t));
    return t < 0 ? mix(kNeutral, kSlow, strength) : mix(kNeutral, kFast, strength);
}

QColor SpeedupColours::categoryColour(Category category)
{
    switch (category) {
    case Category::Speedup:
        return kNeutral;
    case Category::PassedUnmeasured:
        return QColor(0xf1, 0xf1, 0xf1);
    case Category::InFlight:
        return QColor(0xff, 0xe0, 0x8a);
    case Category::CompiledOnly:
        return QColor(0xb3, 0xd4, 0xf0);
    case Category::WrongResult:
        return QColor(0xff, 0xa7, 0x4d);
    case Category::NoSample:
        return QColor(0x8f, 0xc9, 0xc3);
    case Category::Failed:
        return QColor(0xc9, 0xa6, 0xdb);
    }
    return {};
}

QColor SpeedupColours::textOn(const QColor& fill)
{
    // Relative luminance, sRGB weights; 0.45 keeps dark text on the grey and the light tints.
    const double luminance = 0.2126 * fill.redF() + 0.7152 * fill.greenF() + 0.0722 * fill.blueF();
    return luminance < 0.45 ? QColor(Qt::white) : QColor(0x21, 0x21, 0x21);
}

std::vector<SpeedupColours::Swatch> SpeedupColours::flatSwatches()
{
    return {
        {tr("failed"), categoryColour(Category::Failed)},
        {tr("wrong result"), categoryColour(Category::WrongResult)},
        {tr("no sample"), categoryColour(Category::NoSample)},
        {tr("compiled only"), categoryColour(Category::CompiledOnly)},
        {tr("passed, no speedup"), categoryColour(Category::PassedUnmeasured)},
        {tr("running"), categoryColour(Category::InFlight)},
    };
}

} // namespace kforge::views
