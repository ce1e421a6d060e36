#pragma once
// The colours of the tree pane (docs/gui.md, "MCTS tree pane"): a passed node is filled on a
// continuous scale of its speedup, red below 1.0x through a neutral grey at 1.0x to an ever more
// saturated green up to 2.0x (and beyond, clamped), so that 0.94x and 1.02x look different at a
// glance; every other outcome has its own flat colour. The speedup is core::nodeSpeedup
// (model/NodeRanking.h), never computed here.
//
// Thread: pure functions over values.

#include "model/SearchNode.h"

#include <QColor>
#include <QString>

#include <optional>
#include <vector>

namespace kforge::views {

class SpeedupColours {
public:
    /// What a node's fill says: its speedup, or why it has none.
    enum class Category { Speedup, PassedUnmeasured, InFlight, CompiledOnly, WrongResult, NoSample, Failed };

    /// The end points of the scale: at or below kSlowest fully red, at or above kFastest fully green.
    static constexpr double kSlowest = 0.5;
    static constexpr double kFastest = 2.0;

    static Category categoryOf(const core::SearchNode& node);
    /// The fill of `node`: colourFor(nodeSpeedup) for a passed node with a speedup, else the flat
    /// colour of its category.
    static QColor fillOf(const core::SearchNode& node);
    /// The graded colour of a speedup (see the file comment).
    static QColor colourFor(double speedup);
    /// The flat colour of a category other than Speedup (for Speedup: the colour of 1.0x).
    static QColor categoryColour(Category category);
    /// Black or white, whichever reads better on `fill`.
    static QColor textOn(const QColor& fill);

    /// The legend's entries for the flat categories, in the order the legend shows them.
    struct Swatch {
        QString label;
        QColor colour;
    };
    static std::vector<Swatch> flatSwatches();
};

} // namespace kforge::views
