#include "views/tree/SpeedupLegend.h"

#include "views/tree/SpeedupColours.h"

#include <QFontMetrics>
#include <QLinearGradient>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace kforge::views {
namespace {

constexpr int kBarWidth = 150;
constexpr int kSwatch = 11;
constexpr int kGap = 10;
constexpr int kGradientStops = 16;

} // namespace

SpeedupLegend::SpeedupLegend(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("speedupLegend"));
    QSizePolicy policy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
    setToolTip(tr("Node colours: passed nodes by their speedup over eager; the others by outcome.\n"
                  "Keys: arrows move, Enter selects, Space/+/- collapse, * expand all, Home root, B best, F fit, "
                  "Ctrl+/- zoom."));
}

int SpeedupLegend::scaleWidth() const
{
    return QFontMetrics(font()).horizontalAdvance(tr("speedup")) + kGap + kBarWidth + 2 * kGap + 2;
}

std::vector<QRect> SpeedupLegend::swatchPlaces(int width, int* height) const
{
    const QFontMetrics metrics(font());
    const int line = metrics.height();
    const int left = scaleWidth();
    std::vector<QRect> places;
    int x = left;
    int y = 0;
    for (const SpeedupColours::Swatch& swatch : SpeedupColours::flatSwatches()) {
        const int w = kSwatch + 4 + metrics.horizontalAdvance(swatch.label);
        if (x > left && x + w > width) {
            x = left;
            y += line;
        }
        places.emplace_back(x, y, w, line);
        x += w + kGap;
    }
    *height = std::max(2 * line, y + line) + 2;
    return places;
}

QSize SpeedupLegend::sizeHint() const
{
    const QFontMetrics metrics(font());
    int width = scaleWidth();
    for (const SpeedupColours::Swatch& swatch : SpeedupColours::flatSwatches())
        width += kSwatch + 4 + metrics.horizontalAdvance(swatch.label) + kGap;
    int height = 0;
    swatchPlaces(width, &height);
    return {width, height};
}

QSize SpeedupLegend::minimumSizeHint() const
{
    return {0, sizeHint().height()};
}

int SpeedupLegend::heightForWidth(int width) const
{
    int height = 0;
    swatchPlaces(width, &height);
    return height;
}

void SpeedupLegend::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing, true);
    const QFontMetrics metrics(font());
    const int line = metrics.height();
    const QColor text = palette().color(QPalette::WindowText);
    int x = 2;
    painter.setPen(text);
    const QString title = tr("speedup");
    painter.drawText(QRect(x, 0, metrics.horizontalAdvance(title), line), Qt::AlignVCenter, title);
    x += metrics.horizontalAdvance(title) + kGap;

    // The bar, log-scaled like the colours: 0.5x at the left end, 1.0x in the middle, 2.0x right.
    const QRect bar(x, 2, kBarWidth, line - 4);
    QLinearGradient gradient(bar.topLeft(), bar.topRight());
    const double lo = std::log2(SpeedupColours::kSlowest);
    const double hi = std::log2(SpeedupColours::kFastest);
    for (int i = 0; i <= kGradientStops; ++i) {
        const double t = static_cast<double>(i) / kGradientStops;
        gradient.setColorAt(t, SpeedupColours::colourFor(std::exp2(lo + (hi - lo) * t)));
    }
    painter.fillRect(bar, gradient);
    painter.setPen(text);
    for (const double tick : {SpeedupColours::kSlowest, 1.0, SpeedupColours::kFastest}) {
        const int at = bar.left() + static_cast<int>(std::lround((std::log2(tick) - lo) / (hi - lo) * kBarWidth));
        painter.drawLine(at, bar.bottom(), at, bar.bottom() + 3);
        const QString label = QString::number(tick, 'g', 2) + QLatin1Char('x');
        const int width = metrics.horizontalAdvance(label);
        const int left = std::clamp(at - width / 2, bar.left() - 2, bar.right() - width + 2);
        painter.drawText(QRect(left, line, width, line), Qt::AlignCenter, label);
    }

    int height = 0;
    const std::vector<QRect> places = swatchPlaces(width(), &height);
    const auto swatches = SpeedupColours::flatSwatches();
    for (std::size_t i = 0; i < swatches.size(); ++i) {
        const QRect place = places[i];
        const QRect box(place.left(), place.top() + (line - kSwatch) / 2, kSwatch, kSwatch);
        painter.setPen(swatches[i].colour.darker(160));
        painter.setBrush(swatches[i].colour);
        painter.drawRect(box);
        painter.setPen(text);
        painter.drawText(place.adjusted(kSwatch + 4, 0, 0, 0), Qt::AlignVCenter, swatches[i].label);
    }
}

} // namespace kforge::views
