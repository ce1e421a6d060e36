#pragma once
// The key to the tree graph's colours (SpeedupColours): the speedup scale as a gradient from
// 0.5x through 1.0x to 2.0x with its ticks, then a swatch per flat category (failed, wrong
// result, ...), wrapped into as many lines as the width needs. Sits above the graph.
//
// Thread: GUI thread only.

#include <QRect>
#include <QWidget>

#include <vector>

namespace kforge::views {

class SpeedupLegend : public QWidget {
    Q_OBJECT
public:
    explicit SpeedupLegend(QWidget* parent = nullptr);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    /// Where each swatch (box and label) goes at `width`; `height` gets the legend's height.
    std::vector<QRect> swatchPlaces(int width, int* height) const;
    int scaleWidth() const;
};

} // namespace kforge::views
