#include "views/tree/TreeMinimap.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace kforge::views {
namespace {

constexpr int kBorder = 1;
const QColor kBackground(255, 255, 255, 235);
const QColor kFrame(0x78, 0x90, 0x9c);
const QColor kVisibleFill(0x1e, 0x63, 0xd6, 40);
const QColor kVisibleFrame(0x1e, 0x63, 0xd6);

} // namespace

TreeMinimap::TreeMinimap(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("treeMinimap"));
    setCursor(Qt::PointingHandCursor);
    setToolTip(tr("Overview: click or drag to move the view"));
    resize(kMaxWidth, kMaxHeight);
}

double TreeMinimap::scale() const
{
    if (m_scene.isEmpty())
        return 1.0;
    return std::min((width() - 2.0 * kBorder) / m_scene.width(), (height() - 2.0 * kBorder) / m_scene.height());
}

void TreeMinimap::setTree(const QRectF& sceneRect, const std::vector<QRectF>& boxes, const std::vector<QColor>& colours)
{
    m_scene = sceneRect;
    if (m_scene.isEmpty()) {
        m_image = QImage();
        update();
        return;
    }
    const double maxWidth = std::clamp(m_limit.width(), 40, kMaxWidth);
    const double maxHeight = std::clamp(m_limit.height(), 24, kMaxHeight);
    const double fit = std::min(maxWidth / m_scene.width(), maxHeight / m_scene.height());
    resize(std::max(24, static_cast<int>(std::ceil(m_scene.width() * fit))) + 2 * kBorder,
           std::max(16, static_cast<int>(std::ceil(m_scene.height() * fit))) + 2 * kBorder);
    m_image = QImage(size(), QImage::Format_ARGB32_Premultiplied);
    m_image.fill(Qt::transparent);
    QPainter painter(&m_image);
    const double s = scale();
    for (std::size_t k = 0; k < boxes.size() && k < colours.size(); ++k) {
        // At least a pixel per node, so a wide tree does not vanish.
        const QPointF topLeft = fromScene(boxes[k].topLeft());
        const QSizeF size(std::max(1.0, boxes[k].width() * s), std::max(1.0, boxes[k].height() * s));
        painter.fillRect(QRectF(topLeft, size), colours[k].darker(115));
    }
    update();
}

void TreeMinimap::setVisibleRect(const QRectF& visible)
{
    if (visible == m_visible)
        return;
    m_visible = visible;
    update();
}

QPointF TreeMinimap::toScene(const QPointF& widgetPos) const
{
    const double s = scale();
    return m_scene.topLeft() + (widgetPos - QPointF(kBorder, kBorder)) / s;
}

QPointF TreeMinimap::fromScene(const QPointF& scenePos) const
{
    return QPointF(kBorder, kBorder) + (scenePos - m_scene.topLeft()) * scale();
}

void TreeMinimap::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.fillRect(rect(), kBackground);
    painter.setPen(kFrame);
    painter.drawRect(rect().adjusted(0, 0, -1, -1));
    if (m_scene.isEmpty())
        return;
    painter.drawImage(0, 0, m_image);
    const QRectF shown = QRectF(fromScene(m_visible.topLeft()), fromScene(m_visible.bottomRight()))
                             .intersected(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5));
    if (shown.isEmpty())
        return;
    painter.setPen(QPen(kVisibleFrame, 1.5));
    painter.setBrush(kVisibleFill);
    painter.drawRect(shown);
}

void TreeMinimap::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton)
        return;
    Q_EMIT panRequested(toScene(event->position()));
    event->accept();
}

void TreeMinimap::mouseMoveEvent(QMouseEvent* event)
{
    if (!(event->buttons() & Qt::LeftButton))
        return;
    Q_EMIT panRequested(toScene(event->position()));
    event->accept();
}

void TreeMinimap::mouseReleaseEvent(QMouseEvent* event)
{
    event->accept(); // the press panned; nothing reaches the graph under the overview
}

} // namespace kforge::views
