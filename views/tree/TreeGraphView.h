#pragma once
// The MCTS tree of one card as an interactive graph (docs/gui.md, "MCTS tree pane"): a tidy
// top-down layout (TreeLayout), one box per node filled by its speedup on a graded scale
// (SpeedupColours) or by what went wrong, labelled with its latency and speedup (or its status),
// edges labelled with the transformation that made the child. Subtrees collapse into their root,
// which then shows "+N" for the nodes it hides. An overview (TreeMinimap) sits in the bottom
// right corner while the tree does not fit.
//
// Controls: the wheel zooms around the cursor, dragging pans, a click selects a node (and emits
// nodeSelected), a double click collapses or expands it. Keys: the arrows move the selection to
// the parent (Up), the first child (Down) and the siblings (Left/Right), Home to the root, B to
// the best node; Enter emits nodeSelected for the selected node (as a click does); Space toggles
// the selected node's subtree, + expands and - collapses it, * expands every node; Ctrl++ /
// Ctrl+- zoom, F fits the tree. Hovering a node shows its details.
//
// Text: a box carries its full labels when they are readable at the zoom shown, a short label
// (the speedup or the status) drawn at a fixed small size when only that fits the box on screen,
// and none below; text is elided to its box (or its edge's slot), so labels never overlap.
//
// Feeding it: setTree() with snapshots of a tree, or setModel() to follow a SearchTreeModel. A
// snapshot of the tree already shown that only adds nodes or changes their values (a run growing
// it) updates the items in place and keeps the user's zoom and pan; the node nearest the middle
// of the view (or the selected one, when visible) stays where it is on screen even though the
// layout shifts. Any other tree (another card, nodes removed) replaces the scene and fits it.
// Until the user zooms or pans, the view keeps fitting the tree as it grows; fitToView() returns
// to that mode.
//
// Cost: a snapshot (or a collapse) is laid out once, in O(n); painting never lays out. Boxes are
// drawn without text when they are too small to read.
//
// Thread: GUI thread only. Does not own the model given to setModel().

#include "model/SearchTree.h"

#include <QColor>
#include <QGraphicsView>
#include <QHash>
#include <QPointer>
#include <QSet>
#include <QString>

#include <vector>

class QGraphicsScene;

namespace kforge::app {
class SearchTreeModel;
}

namespace kforge::views {

class TreeMinimap;

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
    /// The fill colour of the node's box (SpeedupColours::fillOf).
    QColor nodeColor(const QString& id) const;
    /// Where the node's main label is drawn at the current zoom, in scene coordinates: inside the
    /// node's box; empty when no text is drawn at this zoom (or the node is hidden).
    QRectF labelRect(const QString& id) const;
    /// Where the label of the edge into the node is drawn at the current zoom, in scene
    /// coordinates; empty when none is drawn.
    QRectF edgeLabelRect(const QString& id) const;
    /// The main line of the node's box: "12.3 µs · 1.85x", or the status ("compile failed", ...).
    QString nodeLabel(const QString& id) const;
    /// The label of the edge into the node: its transformation (empty for a root).
    QString edgeLabel(const QString& id) const;
    /// The hover text of the node.
    QString toolTipText(const QString& id) const;

    /// Whether the node is drawn: false inside a collapsed subtree.
    bool isNodeShown(const QString& id) const;
    bool isCollapsed(const QString& id) const;
    /// How many descendants the node hides ("+N" on its box); 0 unless it is collapsed.
    int hiddenCount(const QString& id) const;
    /// The overview in the corner (hidden while the whole tree is in view).
    TreeMinimap* minimap() const { return m_minimap; }

public Q_SLOTS:
    /// Highlights the node and scrolls it into view if needed; an unknown or empty id clears the
    /// selection. Does not emit nodeSelected (the caller knows).
    void selectNode(const QString& id);
    /// Fits the whole tree into the view (never zooming in past 1:1) and keeps fitting it as it
    /// grows until the user zooms or pans.
    void fitToView();
    /// Zooms by `factor` around the middle of the view.
    void zoomBy(double factor);
    /// Collapses (hides the subtree below) or expands the node; a node without children does not
    /// collapse. When the selected node gets hidden the selection moves to the collapsed node.
    void setCollapsed(const QString& id, bool collapsed);
    void toggleCollapsed(const QString& id);
    /// Expands every node.
    void expandAll();

Q_SIGNALS:
    /// The user clicked a node, or pressed Enter on the selected one.
    void nodeSelected(const QString& id);

protected:
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;
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
    /// Lays out every node and moves the items (and edges) that moved; hides the nodes inside
    /// collapsed subtrees.
    void relayout();
    /// relayout() after a collapse or expansion, keeping `anchor` still on screen.
    void relayoutKeeping(int anchor);
    /// Moves the selection (no signal) to `node` and brings it into view.
    void moveSelection(int node);
    int rootIndex() const;
    void updateMinimap();
    void updateMinimapView();
    void placeMinimap();
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
    std::vector<std::vector<int>> m_children; // node -> its children in creation order
    std::vector<bool> m_collapsed;
    // The collapsed node ids of each card shown before, so that going back to a card shows its tree
    // as it was left (node ids are stable within a card's tree).
    QHash<QString, QSet<QString>> m_collapsedByCard;
    QHash<QString, int> m_index;
    TreeMinimap* m_minimap;
    int m_best = -1;
    int m_selected = -1;
    bool m_autoFit = true;
    QPoint m_pressPos;
    bool m_pressed = false;
    QPointer<const app::SearchTreeModel> m_model;
    bool m_modelUpdatePending = false;
};

} // namespace kforge::views
