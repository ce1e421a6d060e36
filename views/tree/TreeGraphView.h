#pragma once
// The MCTS tree of one card as an interactive graph (docs/gui.md, "MCTS tree pane"): a tidy
// top-down layout (TreeLayout), one box per node coloured by status and labelled with its latency
// and speedup (or what went wrong), edges labelled with the transformation that made the child.
//
// Controls: the wheel zooms around the cursor, dragging pans, a click selects a node (and emits
// nodeSelected), +/- zoom, F or Home fits the tree. Hovering a node shows its details.
//
// Feeding it: setTree() with snapshots of a tree, or setModel() to follow a SearchTreeModel. A
// snapshot of the tree already shown that only adds nodes or changes their values (a run growing
// it) updates the items in place and keeps the user's zoom and pan; the node nearest the middle
// of the view (or the selected one, when visible) stays where it is on screen even though the
// layout shifts. Any other tree (another card, nodes removed) replaces the scene and fits it.
// Until the user zooms or pans, the view keeps fitting the tree as it grows; fitToView() returns
// to that mode.
//
// Cost: a snapshot is laid out once, in O(n); painting never lays out. Boxes are drawn without
// text when they are too small to read, and are cached as device pixmaps.
//
// Thread: GUI thread only. Does not own the model given to setModel().

#include "model/SearchTree.h"

#include <QColor>
#include <QGraphicsView>
#include <QHash>
#include <QPointer>
#include <QString>

#include <vector>

class QGraphicsScene;

namespace kforge::app {
class SearchTreeModel;
}

namespace kforge::views {

class TreeGraphView : public QGraphicsView {
    Q_OBJECT
public:
    /// How a node is drawn. Best is core::bestNode (model/NodeRanking.h): the highest speedup.
    enum class NodeKind { InFlight, Failed, Passed, CompiledOnly, Best };

    explicit TreeGraphView(QWidget* parent = nullptr);
    ~TreeGraphView() override;

    /// Shows `tree`: updates in place when it is a newer version of the tree shown, else replaces
    /// the scene (see the file comment). The view keeps what it draws; `tree` may go away.
    void setTree(const core::SearchTree& tree);
    /// Follows `model` (null: stop following): its tree is shown now and after every change,
    /// coalesced to one update per event-loop pass.
    void setModel(const app::SearchTreeModel* model);
    /// Removes every node.
    void clear();

    /// The card of the tree shown (empty when none).
    QString cardId() const { return m_cardId; }
    int nodeCount() const;
    /// The selected node's id (empty when none).
    QString selectedNodeId() const;
    /// The best node's id (empty when no node passed).
    QString bestNodeId() const;
    /// The current zoom factor (1 = one scene unit per pixel).
    double zoom() const;

    // What is drawn, per node (empty/invalid for an unknown id): for tests and accessibility.
    /// The node's box in scene coordinates.
    QRectF nodeRect(const QString& id) const;
    NodeKind nodeKind(const QString& id) const;
    /// The fill colour of the node's box.
    QColor nodeColor(const QString& id) const;
    /// The main line of the node's box: "12.3 µs · 1.85x", or the status ("compile failed", ...).
    QString nodeLabel(const QString& id) const;
    /// The label of the edge into the node: its transformation (empty for a root).
    QString edgeLabel(const QString& id) const;
    /// The hover text of the node.
    QString toolTipText(const QString& id) const;

    /// The fill colour of each kind of node.
    static QColor kindColor(NodeKind kind);

public Q_SLOTS:
    /// Highlights the node and scrolls it into view if needed; an unknown or empty id clears the
    /// selection. Does not emit nodeSelected (the caller knows).
    void selectNode(const QString& id);
    /// Fits the whole tree into the view (never zooming in past 1:1) and keeps fitting it as it
    /// grows until the user zooms or pans.
    void fitToView();
    /// Zooms by `factor` around the middle of the view.
    void zoomBy(double factor);

Q_SIGNALS:
    /// The user clicked a node.
    void nodeSelected(const QString& id);

protected:
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    bool viewportEvent(QEvent* event) override;

private:
    class NodeItem;
    class EdgeItem;
    struct Node;

    void rebuild(const core::SearchTree& tree);
    bool isGrowthOf(const core::SearchTree& tree) const;
    void grow(const core::SearchTree& tree);
    /// Lays out every node and moves the items (and edges) that moved.
    void relayout();
    void refreshNode(int node);
    void updateSceneRect();
    int nodeAt(const QPoint& viewportPos) const;
    int indexOf(const QString& id) const;
    void zoomAround(double factor, const QPoint& viewportPos);
    void userTookControl() { m_autoFit = false; }
    void applyAutoFit();
    void followModel();

    QGraphicsScene* m_scene;
    QString m_cardId;
    std::vector<Node> m_nodes;
    QHash<QString, int> m_index;
    int m_best = -1;
    int m_selected = -1;
    bool m_autoFit = true;
    QPoint m_pressPos;
    bool m_pressed = false;
    QPointer<const app::SearchTreeModel> m_model;
    bool m_modelUpdatePending = false;
};

} // namespace kforge::views
