#pragma once
// The overview in a corner of the tree graph: the whole tree (shown nodes as dots in their fill
// colour) and the rectangle the graph shows now. Clicking or dragging in it asks the graph to
// centre there (panRequested); the graph owns the zoom and the scroll position.
//
// Cost: the tree is drawn into a cached image when it changes (setTree), so following a pan only
// repaints the image and the rectangle.
//
// Thread: GUI thread only.

#include <QColor>
#include <QImage>
#include <QRectF>
#include <QWidget>

#include <vector>

namespace kforge::views {

class TreeMinimap : public QWidget {
    Q_OBJECT
public:
    /// The largest size the overview takes; it keeps the tree's aspect ratio inside it.
    static constexpr int kMaxWidth = 220;
    static constexpr int kMaxHeight = 140;

    explicit TreeMinimap(QWidget* parent = nullptr);

    /// The largest size to take (at most kMaxWidth x kMaxHeight): the graph keeps it to a part of
    /// its viewport. Applies at the next setTree().
    void setLimit(const QSize& limit) { m_limit = limit; }
    /// The tree to show: its scene rectangle and one box (scene coordinates) and colour per shown
    /// node. Resizes the widget to the tree's aspect ratio within the limit.
    void setTree(const QRectF& sceneRect, const std::vector<QRectF>& boxes, const std::vector<QColor>& colours);
    /// The part of the scene the graph shows now.
    void setVisibleRect(const QRectF& visible);
    QRectF visibleRect() const { return m_visible; }
    QRectF sceneRect() const { return m_scene; }

    /// The scene point under a point of this widget.
    QPointF toScene(const QPointF& widgetPos) const;
    /// The widget point of a scene point.
    QPointF fromScene(const QPointF& scenePos) const;

Q_SIGNALS:
    /// The user clicked or dragged in the overview: centre the graph on this scene point.
    void panRequested(const QPointF& scenePos);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;

private:
    double scale() const;

    QRectF m_scene;
    QRectF m_visible;
    QImage m_image;
    QSize m_limit{kMaxWidth, kMaxHeight};
};

} // namespace kforge::views
