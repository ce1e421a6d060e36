#include "views/tree/TreeGraphView.h"

#include "model/NodeRanking.h"
#include "models/SearchTreeModel.h"
#include "views/tree/SpeedupColours.h"
#include "views/tree/TreeLayout.h"
#include "views/tree/TreeMinimap.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QStringList>
#include <QStyleOptionGraphicsItem>
#include <QTimer>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kforge::views {
namespace {

using app::SearchTreeModel;
using core::NodeStatus;
using core::SearchNode;

// Geometry in scene units (pixels at zoom 1).
constexpr qreal kNodeWidth = 148;
constexpr qreal kNodeHeight = 42;
constexpr qreal kSiblingGap = 22;                 // between the boxes of adjacent nodes
constexpr qreal kSlot = kNodeWidth + kSiblingGap; // one layout unit
constexpr qreal kLevelHeight = kNodeHeight + 58;  // room for the edge and its label
constexpr qreal kEdgeLabelHeight = 14;
constexpr qreal kHighlightMargin = 5; // the selection ring outside the box
constexpr qreal kSceneMargin = 40;
constexpr qreal kCornerRadius = 6;

constexpr double kMinZoom = 0.0005;
constexpr double kMaxZoom = 4.0;
// Text is drawn where it is readable (the main cost of a frame): the full labels of a box from
// this level of detail on (its 12 px label is then 9 px on screen), edge labels likewise.
constexpr qreal kNodeTextMinLod = 0.75;
constexpr qreal kEdgeTextMinLod = 0.9;
// Below that, a short label at a fixed screen size while the box on screen can hold it.
constexpr int kShortTextPixels = 10;
constexpr qreal kShortTextMinWidth = 30;  // screen pixels of box width
constexpr qreal kShortTextMinHeight = 13; // screen pixels of box height
constexpr int kMinimapMargin = 8;

const QColor kSelectionColor(0x1e, 0x63, 0xd6);
const QColor kStackColor(0x78, 0x90, 0x9c); // the cards behind a collapsed node
const QColor kBestRingColor(0xff, 0xb3, 0x00);
const QColor kEdgeColor(0x90, 0xa4, 0xae);
const QColor kEdgeTextColor(0x37, 0x47, 0x4f);

QRectF boxRect()
{
    return QRectF(-kNodeWidth / 2, 0, kNodeWidth, kNodeHeight);
}

QFont pixelFont(int pixels, bool bold)
{
    QFont font;
    font.setPixelSize(pixels);
    font.setBold(bold);
    return font;
}

const QFont& idFont()
{
    static const QFont font = pixelFont(10, false);
    return font;
}

const QFont& labelFont()
{
    static const QFont font = pixelFont(12, true);
    return font;
}

const QFont& edgeFont()
{
    static const QFont font = pixelFont(10, false);
    return font;
}

const QFont& shortFont()
{
    static const QFont font = pixelFont(kShortTextPixels, true);
    return font;
}

/// Where the main label goes inside a box (item coordinates).
QRectF labelArea()
{
    return boxRect().adjusted(6, kNodeHeight / 2 - 4, -6, -2);
}

/// Whether the box on screen (at level of detail `lod`) takes the short label.
bool shortTextFits(qreal lod)
{
    return kNodeWidth * lod >= kShortTextMinWidth && kNodeHeight * lod >= kShortTextMinHeight;
}

QString elided(const QFont& font, const QString& text, qreal width)
{
    return QFontMetricsF(font).elidedText(text, Qt::ElideRight, width);
}

TreeGraphView::NodeKind kindOf(const SearchNode& node, bool best)
{
    if (best)
        return TreeGraphView::NodeKind::Best;
    if (core::isInFlight(node.status))
        return TreeGraphView::NodeKind::InFlight;
    if (core::isFailure(node.status))
        return TreeGraphView::NodeKind::Failed;
    if (node.status == NodeStatus::CompiledOnly)
        return TreeGraphView::NodeKind::CompiledOnly;
    return TreeGraphView::NodeKind::Passed;
}

/// What the view keeps of a node: everything it shows, none of the heavy parts (source, logs).
SearchNode shownPart(const SearchNode& node)
{
    SearchNode out;
    out.id = node.id;
    out.parentId = node.parentId;
    out.depth = node.depth;
    out.iteration = node.iteration;
    out.status = node.status;
    out.failureReason = node.failureReason;
    out.provenance.kind = node.provenance.kind;
    out.provenance.transformation = node.provenance.transformation;
    out.provenance.provider = node.provenance.provider;
    out.provenance.model = node.provenance.model;
    out.latency = node.latency;
    // Without the report, nodeSpeedup/nodeEagerUs of the copy fall back to these: keep core's values.
    out.eagerUs = core::nodeEagerUs(node);
    out.speedup = core::nodeSpeedup(node);
    out.visits = node.visits;
    return out;
}

bool sameShownValues(const SearchNode& a, const SearchNode& b)
{
    return a.status == b.status && a.failureReason == b.failureReason && a.latency == b.latency &&
        core::nodeEagerUs(a) == core::nodeEagerUs(b) && core::nodeSpeedup(a) == core::nodeSpeedup(b) &&
        a.provenance.kind == b.provenance.kind && a.provenance.transformation == b.provenance.transformation &&
        a.provenance.provider == b.provenance.provider && a.provenance.model == b.provenance.model &&
        a.visits == b.visits && a.iteration == b.iteration;
}

/// Index of `node`'s parent in `tree`, or -1 for a root (or a parent that is not earlier).
int parentIndex(const core::SearchTree& tree, std::size_t k)
{
    const SearchNode& node = tree.nodes()[k];
    if (!node.parentId)
        return -1;
    const SearchNode* parent = tree.find(*node.parentId);
    const auto index = parent ? static_cast<std::size_t>(parent - tree.nodes().data()) : k;
    return index < k ? static_cast<int>(index) : -1;
}

} // namespace

// One node's box. Position: the middle of the box's top edge. Text is laid out (elided) when the
// content changes, never while painting.
class TreeGraphView::NodeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 1 };

    explicit NodeItem(int node) : m_node(node)
    {
        // No item cache: with DeviceCoordinateCache every zoom step re-rendered each visible item's
        // pixmap (worst frame 25 ms on a 5,000-node tree); painting directly, with the text-free
        // level of detail when zoomed out, keeps the worst frame at 12 ms
        // (bench/results/2026-12-01-gui-scale.md).
        setCacheMode(NoCache);
        setZValue(1);
    }

    int type() const override { return Type; }
    int node() const { return m_node; }
    NodeKind kind() const { return m_kind; }
    const QString& label() const { return m_label; }
    const QColor& fill() const { return m_fill; }

    /// `shortLabel`: what the box says when only a few characters fit (the speedup or status).
    void setContent(const QString& id, const QString& label, const QString& shortLabel, NodeKind kind,
                    const QColor& fill)
    {
        if (id == m_id && label == m_label && shortLabel == m_shortLabel && kind == m_kind && fill == m_fill)
            return;
        m_id = id;
        m_label = label;
        m_shortLabel = shortLabel;
        m_kind = kind;
        m_fill = fill;
        m_text = SpeedupColours::textOn(fill);
        m_shownLabel = elided(labelFont(), m_label, labelArea().width());
        updateTopLine();
        update();
    }

    void setHiddenCount(int count)
    {
        if (count == m_hidden)
            return;
        m_hidden = count;
        updateTopLine();
        update();
    }
    int hiddenCount() const { return m_hidden; }

    void setHighlighted(bool on)
    {
        if (on != m_highlighted) {
            m_highlighted = on;
            update();
        }
    }
    bool highlighted() const { return m_highlighted; }

    /// The scene rectangle the main label is drawn into at level of detail `lod`; empty when none.
    QRectF labelSceneRect(qreal lod) const
    {
        if (lod >= kNodeTextMinLod)
            return mapRectToScene(labelArea());
        if (shortTextFits(lod))
            return mapRectToScene(boxRect().adjusted(2 / lod, 0, -2 / lod, 0));
        return {};
    }

    QRectF boundingRect() const override
    {
        return boxRect().adjusted(-kHighlightMargin - 2, -kHighlightMargin - 2, kHighlightMargin + 2,
                                  kHighlightMargin + 2);
    }

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) override
    {
        const QRectF box = boxRect();
        const qreal lod = option->levelOfDetailFromTransform(painter->worldTransform());
        if (lod < kNodeTextMinLod) {
            // Too small for the full labels: coloured blocks, the selection as a ring of solid
            // colour, a collapsed node's stack as a block behind it.
            if (m_highlighted)
                painter->fillRect(
                    box.adjusted(-kHighlightMargin, -kHighlightMargin, kHighlightMargin, kHighlightMargin),
                    kSelectionColor);
            else if (m_kind == NodeKind::Best)
                painter->fillRect(box.adjusted(-3, -3, 3, 3), kBestRingColor);
            if (m_hidden > 0)
                painter->fillRect(box.translated(4, 4), kStackColor);
            painter->fillRect(box, m_fill);
            if (shortTextFits(lod))
                paintShortLabel(painter, box);
            return;
        }
        painter->setRenderHint(QPainter::Antialiasing, true);
        if (m_highlighted) {
            painter->setPen(QPen(kSelectionColor, 3));
            painter->setBrush(Qt::NoBrush);
            painter->drawRoundedRect(box.adjusted(-kHighlightMargin + 1.5, -kHighlightMargin + 1.5,
                                                  kHighlightMargin - 1.5, kHighlightMargin - 1.5),
                                     kCornerRadius + 3, kCornerRadius + 3);
        }
        if (m_hidden > 0) {
            painter->setPen(QPen(kStackColor, 1));
            painter->setBrush(m_fill.lighter(110));
            painter->drawRoundedRect(box.translated(4, 4), kCornerRadius, kCornerRadius);
        }
        QPen border(m_kind == NodeKind::Best ? kBestRingColor : m_fill.darker(160), m_kind == NodeKind::Best ? 3 : 1.2);
        if (m_kind == NodeKind::InFlight)
            border.setStyle(Qt::DashLine);
        painter->setPen(border);
        painter->setBrush(m_fill);
        painter->drawRoundedRect(box, kCornerRadius, kCornerRadius);

        painter->setPen(m_text);
        painter->setFont(idFont());
        const QRectF top = box.adjusted(6, 2, -6, -kNodeHeight / 2);
        painter->drawText(top, Qt::AlignLeft | Qt::AlignVCenter, m_shownId);
        if (!m_shownTag.isEmpty())
            painter->drawText(top, Qt::AlignRight | Qt::AlignVCenter, m_shownTag);
        painter->setFont(labelFont());
        painter->drawText(labelArea(), Qt::AlignCenter, m_shownLabel);
    }

private:
    // The top line: the id on the left half, "best" and "+N" on the right half.
    void updateTopLine()
    {
        const qreal half = (kNodeWidth - 12) / 2;
        m_shownId = elided(idFont(), m_id, half);
        QStringList tags;
        if (m_kind == NodeKind::Best)
            tags << QObject::tr("best");
        if (m_hidden > 0)
            tags << QStringLiteral("+%1").arg(m_hidden);
        m_shownTag = elided(idFont(), tags.join(QLatin1Char(' ')), half - 4);
    }

    // At a fixed screen size, elided to the box's width on screen.
    void paintShortLabel(QPainter* painter, const QRectF& box) const
    {
        QString text = m_shortLabel;
        if (m_hidden > 0)
            text = QStringLiteral("+%1 ").arg(m_hidden) + text;
        const QRectF onScreen = painter->worldTransform().mapRect(box).adjusted(2, 0, -2, 0);
        const QString shown = QFontMetricsF(shortFont()).elidedText(text, Qt::ElideRight, onScreen.width());
        if (shown.isEmpty() || shown == QStringLiteral("\u2026"))
            return;
        painter->save();
        painter->resetTransform();
        painter->setPen(m_text);
        painter->setFont(shortFont());
        painter->drawText(onScreen, Qt::AlignCenter, shown);
        painter->restore();
    }

    int m_node;
    QString m_id;
    QString m_label;
    QString m_shortLabel;
    QString m_shownId;
    QString m_shownTag;
    QString m_shownLabel;
    NodeKind m_kind = NodeKind::InFlight;
    QColor m_fill;
    QColor m_text;
    int m_hidden = 0;
    bool m_highlighted = false;
};

// The edge from a parent's bottom to a child's top, in scene coordinates, with the child's
// transformation written just above the child (within the child's layout slot, so labels of
// neighbouring edges never overlap).
class TreeGraphView::EdgeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 2 };

    EdgeItem() { setZValue(0); }

    int type() const override { return Type; }
    const QString& label() const { return m_label; }

    void setLabel(const QString& label)
    {
        if (label == m_label)
            return;
        m_label = label;
        m_shownLabel = elided(edgeFont(), label, kSlot - 12);
        m_labelWidth = QFontMetricsF(edgeFont()).horizontalAdvance(m_shownLabel) + 8;
        prepareGeometryChange();
        updateBounds();
    }

    void setEnds(const QPointF& from, const QPointF& to)
    {
        if (from == m_from && to == m_to)
            return;
        prepareGeometryChange();
        m_from = from;
        m_to = to;
        updateBounds();
    }

    QRectF boundingRect() const override { return m_bounds; }

    /// The scene rectangle of the label at level of detail `lod`; empty when it is not drawn.
    QRectF labelSceneRect(qreal lod) const
    {
        if (m_shownLabel.isEmpty() || lod < kEdgeTextMinLod)
            return {};
        return labelRect();
    }

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) override
    {
        QPen pen(kEdgeColor, 1.2);
        pen.setCosmetic(true);
        painter->setPen(pen);
        painter->drawLine(m_from, m_to);
        if (m_shownLabel.isEmpty() || option->levelOfDetailFromTransform(painter->worldTransform()) < kEdgeTextMinLod)
            return;
        const QRectF rect = labelRect();
        painter->setRenderHint(QPainter::Antialiasing, true);
        painter->setPen(Qt::NoPen);
        painter->setBrush(QColor(255, 255, 255, 225));
        painter->drawRoundedRect(rect, 3, 3);
        painter->setPen(kEdgeTextColor);
        painter->setFont(edgeFont());
        painter->drawText(rect, Qt::AlignCenter, m_shownLabel);
    }

private:
    QRectF labelRect() const
    {
        return QRectF(m_to.x() - m_labelWidth / 2, m_to.y() - kEdgeLabelHeight - 4, m_labelWidth, kEdgeLabelHeight);
    }

    void updateBounds()
    {
        QRectF bounds = QRectF(m_from, m_to).normalized().adjusted(-2, -2, 2, 2);
        if (!m_shownLabel.isEmpty())
            bounds |= labelRect().adjusted(-1, -1, 1, 1);
        m_bounds = bounds;
    }

    QPointF m_from;
    QPointF m_to;
    QString m_label;
    QString m_shownLabel;
    qreal m_labelWidth = 0;
    QRectF m_bounds;
};

struct TreeGraphView::Node {
    SearchNode data; // shownPart() of the tree's node
    int parent = -1;
    NodeItem* item = nullptr;
    EdgeItem* edge = nullptr; // the edge into this node; null for a root
};

TreeGraphView::TreeGraphView(QWidget* parent)
    : QGraphicsView(parent), m_scene(new QGraphicsScene(this)), m_minimap(new TreeMinimap(this))
{
    setObjectName(QStringLiteral("treeGraphView"));
    setScene(m_scene);
    setRenderHint(QPainter::Antialiasing, true);
    setDragMode(ScrollHandDrag);
    setTransformationAnchor(NoAnchor); // zooming keeps the point under the cursor itself
    setResizeAnchor(AnchorViewCenter);
    setViewportUpdateMode(SmartViewportUpdate);
    setOptimizationFlags(DontSavePainterState | DontAdjustForAntialiasing);
    setBackgroundBrush(QColor(0xfa, 0xfa, 0xfa));
    setFocusPolicy(Qt::StrongFocus);
    // A scroll bar moved by hand is a pan.
    connect(horizontalScrollBar(), &QScrollBar::actionTriggered, this, [this] { userTookControl(); });
    connect(verticalScrollBar(), &QScrollBar::actionTriggered, this, [this] { userTookControl(); });
    // The overview is a child of the view, not of the viewport, so scrolling does not move it.
    m_minimap->hide();
    connect(m_minimap, &TreeMinimap::panRequested, this, [this](const QPointF& scenePos) {
        userTookControl();
        centerOn(scenePos);
        updateMinimapView();
    });
}

TreeGraphView::~TreeGraphView() = default;

int TreeGraphView::nodeCount() const
{
    return static_cast<int>(m_nodes.size());
}

void TreeGraphView::setTree(const core::SearchTree& tree)
{
    if (isGrowthOf(tree))
        grow(tree);
    else
        rebuild(tree);
}

void TreeGraphView::setModel(const app::SearchTreeModel* model)
{
    if (m_model)
        disconnect(m_model, nullptr, this, nullptr);
    m_model = model;
    if (model) {
        const auto schedule = [this] {
            if (m_modelUpdatePending)
                return;
            m_modelUpdatePending = true;
            QTimer::singleShot(0, this, [this] {
                m_modelUpdatePending = false;
                followModel();
            });
        };
        connect(model, &QAbstractItemModel::modelReset, this, schedule);
        connect(model, &QAbstractItemModel::rowsInserted, this, schedule);
        connect(model, &QAbstractItemModel::dataChanged, this, schedule);
    }
    followModel();
}

void TreeGraphView::followModel()
{
    if (m_model)
        setTree(m_model->tree());
    else
        clear();
}

void TreeGraphView::clear()
{
    rebuild(core::SearchTree());
}

bool TreeGraphView::isGrowthOf(const core::SearchTree& tree) const
{
    if (m_cardId.isEmpty() || QString::fromStdString(tree.cardId()) != m_cardId || tree.size() < m_nodes.size())
        return false;
    for (std::size_t k = 0; k < m_nodes.size(); ++k) {
        if (tree.nodes()[k].id != m_nodes[k].data.id || parentIndex(tree, k) != m_nodes[k].parent)
            return false;
    }
    return true;
}

void TreeGraphView::rebuild(const core::SearchTree& tree)
{
    const QString keepSelected = m_cardId == QString::fromStdString(tree.cardId()) ? selectedNodeId() : QString();
    if (!m_cardId.isEmpty()) {
        QSet<QString>& collapsed = m_collapsedByCard[m_cardId];
        collapsed.clear();
        for (std::size_t k = 0; k < m_nodes.size(); ++k)
            if (m_collapsed[k])
                collapsed.insert(QString::fromStdString(m_nodes[k].data.id));
    }
    m_scene->clear(); // deletes the items
    m_nodes.clear();
    m_children.clear();
    m_collapsed.clear();
    m_index.clear();
    m_best = -1;
    m_selected = -1;
    m_cardId = QString::fromStdString(tree.cardId());
    resetTransform();
    m_autoFit = true;
    grow(tree);
    if (!keepSelected.isEmpty())
        selectNode(keepSelected);
    for (const QString& id : m_collapsedByCard.value(m_cardId))
        setCollapsed(id, true); // a node the tree no longer has is ignored
}

void TreeGraphView::grow(const core::SearchTree& tree)
{
    // The node to keep still on screen while the layout shifts under it.
    int anchor = -1;
    QPoint anchorOnScreen;
    if (!m_autoFit && !m_nodes.empty()) {
        const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
        if (m_selected >= 0 && m_nodes[static_cast<std::size_t>(m_selected)].item->isVisible() &&
            visible.contains(m_nodes[static_cast<std::size_t>(m_selected)].item->pos())) {
            anchor = m_selected;
        } else {
            const QPointF middle = visible.center();
            qreal nearest = std::numeric_limits<qreal>::infinity();
            for (std::size_t k = 0; k < m_nodes.size(); ++k) {
                if (!m_nodes[k].item->isVisible())
                    continue;
                const QPointF d = m_nodes[k].item->pos() - middle;
                const qreal distance = d.x() * d.x() + d.y() * d.y();
                if (distance < nearest) {
                    nearest = distance;
                    anchor = static_cast<int>(k);
                }
            }
        }
        if (anchor >= 0)
            anchorOnScreen = mapFromScene(m_nodes[static_cast<std::size_t>(anchor)].item->pos());
    }

    const std::size_t oldCount = m_nodes.size();
    std::vector<int> changed;
    for (std::size_t k = 0; k < oldCount; ++k) {
        const SearchNode& node = tree.nodes()[k];
        if (!sameShownValues(node, m_nodes[k].data)) {
            m_nodes[k].data = shownPart(node);
            changed.push_back(static_cast<int>(k));
        }
    }
    m_nodes.reserve(tree.size());
    for (std::size_t k = oldCount; k < tree.size(); ++k) {
        Node node;
        node.data = shownPart(tree.nodes()[k]);
        node.parent = parentIndex(tree, k);
        node.item = new NodeItem(static_cast<int>(k));
        m_scene->addItem(node.item);
        if (node.parent >= 0) {
            node.edge = new EdgeItem;
            m_scene->addItem(node.edge);
            m_children[static_cast<std::size_t>(node.parent)].push_back(static_cast<int>(k));
        }
        m_index.insert(QString::fromStdString(node.data.id), static_cast<int>(k));
        m_nodes.push_back(std::move(node));
        m_children.emplace_back();
        m_collapsed.push_back(false);
        changed.push_back(static_cast<int>(k));
    }

    relayout();
    const int oldBest = m_best;
    const SearchNode* best = core::bestNode(tree);
    m_best = best ? static_cast<int>(best - tree.nodes().data()) : -1;
    if (oldBest != m_best) {
        if (oldBest >= 0)
            changed.push_back(oldBest);
        if (m_best >= 0)
            changed.push_back(m_best);
    }
    for (int node : changed)
        refreshNode(node);
    updateSceneRect();
    updateMinimap();

    if (m_autoFit) {
        applyAutoFit();
    } else if (anchor >= 0) {
        const QPoint drift = mapFromScene(m_nodes[static_cast<std::size_t>(anchor)].item->pos()) - anchorOnScreen;
        horizontalScrollBar()->setValue(horizontalScrollBar()->value() + drift.x());
        verticalScrollBar()->setValue(verticalScrollBar()->value() + drift.y());
    }
    updateMinimapView();
}

void TreeGraphView::relayout()
{
    std::vector<int> parents(m_nodes.size());
    for (std::size_t k = 0; k < m_nodes.size(); ++k)
        parents[k] = m_nodes[k].parent;
    const TreeLayout layout = TreeLayout::compute(parents, m_collapsed);
    for (std::size_t k = 0; k < m_nodes.size(); ++k) {
        NodeItem* item = m_nodes[k].item;
        const QPointF pos(layout.x[k] * kSlot, layout.depth[k] * kLevelHeight);
        if (item->pos() != pos)
            item->setPos(pos);
        item->setVisible(layout.shown[k]);
        item->setHiddenCount(layout.hiddenBelow[k]);
        if (m_nodes[k].edge)
            m_nodes[k].edge->setVisible(layout.shown[k]);
    }
    for (const Node& node : m_nodes) {
        if (node.edge && node.item->isVisible()) {
            const QPointF parentPos = m_nodes[static_cast<std::size_t>(node.parent)].item->pos();
            node.edge->setEnds(parentPos + QPointF(0, kNodeHeight), node.item->pos());
        }
    }
}

void TreeGraphView::relayoutKeeping(int anchor)
{
    const QPoint before = mapFromScene(m_nodes[static_cast<std::size_t>(anchor)].item->pos());
    relayout();
    updateSceneRect();
    updateMinimap();
    if (m_autoFit) {
        applyAutoFit();
    } else {
        const QPoint drift = mapFromScene(m_nodes[static_cast<std::size_t>(anchor)].item->pos()) - before;
        horizontalScrollBar()->setValue(horizontalScrollBar()->value() + drift.x());
        verticalScrollBar()->setValue(verticalScrollBar()->value() + drift.y());
    }
    updateMinimapView();
}

void TreeGraphView::refreshNode(int index)
{
    Node& node = m_nodes[static_cast<std::size_t>(index)];
    const std::optional<double> speedup = core::nodeSpeedup(node.data);
    const QString shortLabel =
        speedup ? SearchTreeModel::speedupText(*speedup) : SearchTreeModel::statusText(node.data.status);
    node.item->setContent(QString::fromStdString(node.data.id), SearchTreeModel::nodeLabel(node.data), shortLabel,
                          kindOf(node.data, index == m_best), SpeedupColours::fillOf(node.data));
    if (node.edge)
        node.edge->setLabel(SearchTreeModel::transformationText(node.data));
}

void TreeGraphView::updateSceneRect()
{
    qreal left = std::numeric_limits<qreal>::infinity();
    qreal right = -left;
    qreal bottom = 0;
    for (const Node& node : m_nodes) {
        if (!node.item->isVisible())
            continue;
        const QPointF pos = node.item->pos();
        left = std::min(left, pos.x());
        right = std::max(right, pos.x());
        bottom = std::max(bottom, pos.y());
    }
    if (left > right) {
        setSceneRect(QRectF(-kNodeWidth / 2, 0, kNodeWidth, kNodeHeight));
        return;
    }
    setSceneRect(QRectF(QPointF(left - kNodeWidth / 2 - kSceneMargin, -kSceneMargin),
                        QPointF(right + kNodeWidth / 2 + kSceneMargin, bottom + kNodeHeight + kSceneMargin)));
}

void TreeGraphView::updateMinimap()
{
    std::vector<QRectF> boxes;
    std::vector<QColor> colours;
    boxes.reserve(m_nodes.size());
    colours.reserve(m_nodes.size());
    for (const Node& node : m_nodes) {
        if (!node.item->isVisible())
            continue;
        boxes.push_back(node.item->mapRectToScene(boxRect()));
        colours.push_back(node.item->fill());
    }
    // A third of the viewport at most, so the overview never hides the tree it stands for.
    m_minimap->setLimit(viewport()->size() / 3);
    m_minimap->setTree(m_nodes.empty() ? QRectF() : sceneRect(), boxes, colours);
    placeMinimap();
}

void TreeGraphView::updateMinimapView()
{
    const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
    m_minimap->setVisibleRect(visible);
    // Only while some of the tree is out of view.
    const bool needed = !m_nodes.empty() && !visible.contains(sceneRect().adjusted(2, 2, -2, -2));
    // isHidden, not isVisible: while the view itself is hidden (a tabbed dock) the overview must
    // still be told, or it shows up when the view does.
    if (needed == m_minimap->isHidden())
        m_minimap->setVisible(needed);
    if (needed)
        m_minimap->raise();
}

void TreeGraphView::placeMinimap()
{
    const QRect area = viewport()->geometry();
    m_minimap->move(area.right() - m_minimap->width() - kMinimapMargin + 1,
                    area.bottom() - m_minimap->height() - kMinimapMargin + 1);
}

void TreeGraphView::applyAutoFit()
{
    fitInView(sceneRect(), Qt::KeepAspectRatio);
    if (zoom() > 1.0) {
        resetTransform();
        centerOn(sceneRect().center());
    }
    updateMinimapView();
}

void TreeGraphView::fitToView()
{
    m_autoFit = true;
    applyAutoFit();
}

void TreeGraphView::zoomBy(double factor)
{
    userTookControl();
    zoomAround(factor, viewport()->rect().center());
}

void TreeGraphView::zoomAround(double factor, const QPoint& viewportPos)
{
    const double current = zoom();
    // A fitted huge tree may already be below kMinZoom: the limits never push the zoom the other way.
    const double target = std::clamp(current * factor, std::min(kMinZoom, current), std::max(kMaxZoom, current));
    if (current <= 0 || target == current)
        return;
    const QPointF scenePos = mapToScene(viewportPos);
    scale(target / current, target / current);
    const QPoint drift = mapFromScene(scenePos) - viewportPos;
    horizontalScrollBar()->setValue(horizontalScrollBar()->value() + drift.x());
    verticalScrollBar()->setValue(verticalScrollBar()->value() + drift.y());
    updateMinimapView();
}

double TreeGraphView::zoom() const
{
    return transform().m11();
}

void TreeGraphView::selectNode(const QString& id)
{
    const int index = indexOf(id);
    if (index >= 0) {
        // A node inside a collapsed subtree: open the way to it.
        bool opened = false;
        for (int up = m_nodes[static_cast<std::size_t>(index)].parent; up >= 0;
             up = m_nodes[static_cast<std::size_t>(up)].parent) {
            if (m_collapsed[static_cast<std::size_t>(up)]) {
                m_collapsed[static_cast<std::size_t>(up)] = false;
                opened = true;
            }
        }
        if (opened)
            relayoutKeeping(index);
    }
    if (index == m_selected)
        return;
    moveSelection(index);
}

void TreeGraphView::moveSelection(int index)
{
    if (m_selected >= 0)
        m_nodes[static_cast<std::size_t>(m_selected)].item->setHighlighted(false);
    m_selected = index;
    if (index >= 0) {
        NodeItem* item = m_nodes[static_cast<std::size_t>(index)].item;
        item->setHighlighted(true);
        ensureVisible(item->mapRectToScene(boxRect()), 40, 40);
        updateMinimapView();
    }
}

void TreeGraphView::setCollapsed(const QString& id, bool collapsed)
{
    const int index = indexOf(id);
    if (index < 0 || m_collapsed[static_cast<std::size_t>(index)] == collapsed)
        return;
    if (collapsed && m_children[static_cast<std::size_t>(index)].empty())
        return;
    m_collapsed[static_cast<std::size_t>(index)] = collapsed;
    relayoutKeeping(index);
    if (collapsed && m_selected >= 0 && !m_nodes[static_cast<std::size_t>(m_selected)].item->isVisible())
        moveSelection(index);
}

void TreeGraphView::toggleCollapsed(const QString& id)
{
    const int index = indexOf(id);
    if (index >= 0)
        setCollapsed(id, !m_collapsed[static_cast<std::size_t>(index)]);
}

void TreeGraphView::expandAll()
{
    if (std::find(m_collapsed.begin(), m_collapsed.end(), true) == m_collapsed.end())
        return;
    std::fill(m_collapsed.begin(), m_collapsed.end(), false);
    relayoutKeeping(m_selected >= 0 ? m_selected : rootIndex());
}

bool TreeGraphView::isNodeShown(const QString& id) const
{
    const int index = indexOf(id);
    return index >= 0 && m_nodes[static_cast<std::size_t>(index)].item->isVisible();
}

bool TreeGraphView::isCollapsed(const QString& id) const
{
    const int index = indexOf(id);
    return index >= 0 && m_collapsed[static_cast<std::size_t>(index)];
}

int TreeGraphView::hiddenCount(const QString& id) const
{
    const int index = indexOf(id);
    return index < 0 ? 0 : m_nodes[static_cast<std::size_t>(index)].item->hiddenCount();
}

int TreeGraphView::rootIndex() const
{
    for (std::size_t k = 0; k < m_nodes.size(); ++k) {
        if (m_nodes[k].parent < 0)
            return static_cast<int>(k);
    }
    return -1;
}

QString TreeGraphView::selectedNodeId() const
{
    return m_selected >= 0 ? QString::fromStdString(m_nodes[static_cast<std::size_t>(m_selected)].data.id) : QString();
}

QString TreeGraphView::bestNodeId() const
{
    return m_best >= 0 ? QString::fromStdString(m_nodes[static_cast<std::size_t>(m_best)].data.id) : QString();
}

int TreeGraphView::indexOf(const QString& id) const
{
    return m_index.value(id, -1);
}

QRectF TreeGraphView::nodeRect(const QString& id) const
{
    const int index = indexOf(id);
    return index < 0 ? QRectF() : m_nodes[static_cast<std::size_t>(index)].item->mapRectToScene(boxRect());
}

QRectF TreeGraphView::labelRect(const QString& id) const
{
    const int index = indexOf(id);
    if (index < 0 || !m_nodes[static_cast<std::size_t>(index)].item->isVisible())
        return {};
    return m_nodes[static_cast<std::size_t>(index)].item->labelSceneRect(zoom());
}

QRectF TreeGraphView::edgeLabelRect(const QString& id) const
{
    const int index = indexOf(id);
    if (index < 0 || !m_nodes[static_cast<std::size_t>(index)].edge ||
        !m_nodes[static_cast<std::size_t>(index)].item->isVisible())
        return {};
    return m_nodes[static_cast<std::size_t>(index)].edge->labelSceneRect(zoom());
}

TreeGraphView::NodeKind TreeGraphView::nodeKind(const QString& id) const
{
    const int index = indexOf(id);
    return index < 0 ? NodeKind::InFlight : m_nodes[static_cast<std::size_t>(index)].item->kind();
}

QColor TreeGraphView::nodeColor(const QString& id) const
{
    const int index = indexOf(id);
    return index < 0 ? QColor() : m_nodes[static_cast<std::size_t>(index)].item->fill();
}

QString TreeGraphView::nodeLabel(const QString& id) const
{
    const int index = indexOf(id);
    return index < 0 ? QString() : m_nodes[static_cast<std::size_t>(index)].item->label();
}

QString TreeGraphView::edgeLabel(const QString& id) const
{
    const int index = indexOf(id);
    if (index < 0 || !m_nodes[static_cast<std::size_t>(index)].edge)
        return {};
    return m_nodes[static_cast<std::size_t>(index)].edge->label();
}

QString TreeGraphView::toolTipText(const QString& id) const
{
    const int index = indexOf(id);
    return index < 0 ? QString()
                     : SearchTreeModel::nodeDetails(m_nodes[static_cast<std::size_t>(index)].data, index == m_best);
}

int TreeGraphView::nodeAt(const QPoint& viewportPos) const
{
    const QPointF scenePos = mapToScene(viewportPos);
    for (QGraphicsItem* item : items(viewportPos)) {
        if (item->type() == NodeItem::Type && item->isVisible() && boxRect().contains(item->mapFromScene(scenePos)))
            return static_cast<NodeItem*>(item)->node();
    }
    return -1;
}

void TreeGraphView::wheelEvent(QWheelEvent* event)
{
    const int delta = event->angleDelta().y();
    if (delta == 0) {
        QGraphicsView::wheelEvent(event);
        return;
    }
    userTookControl();
    zoomAround(std::pow(1.0015, delta), event->position().toPoint());
    event->accept();
}

void TreeGraphView::mousePressEvent(QMouseEvent* event)
{
    m_pressed = event->button() == Qt::LeftButton;
    m_pressPos = event->position().toPoint();
    QGraphicsView::mousePressEvent(event);
}

void TreeGraphView::mouseReleaseEvent(QMouseEvent* event)
{
    QGraphicsView::mouseReleaseEvent(event);
    if (!m_pressed || event->button() != Qt::LeftButton)
        return;
    m_pressed = false;
    if ((event->position().toPoint() - m_pressPos).manhattanLength() >= QApplication::startDragDistance()) {
        userTookControl(); // that was a pan
        return;
    }
    const int index = nodeAt(event->position().toPoint());
    if (index < 0)
        return;
    selectNode(QString::fromStdString(m_nodes[static_cast<std::size_t>(index)].data.id));
    Q_EMIT nodeSelected(selectedNodeId());
}

void TreeGraphView::mouseDoubleClickEvent(QMouseEvent* event)
{
    const int index = event->button() == Qt::LeftButton ? nodeAt(event->position().toPoint()) : -1;
    if (index < 0) {
        QGraphicsView::mouseDoubleClickEvent(event);
        return;
    }
    userTookControl(); // the collapsed node stays where it was clicked
    toggleCollapsed(QString::fromStdString(m_nodes[static_cast<std::size_t>(index)].data.id));
    event->accept();
}

void TreeGraphView::keyPressEvent(QKeyEvent* event)
{
    const bool zoomModifier = event->modifiers() & Qt::ControlModifier;
    const auto selectedId = [this] { return selectedNodeId(); };
    const auto sibling = [this](int step) {
        if (m_selected < 0)
            return -1;
        const int parent = m_nodes[static_cast<std::size_t>(m_selected)].parent;
        std::vector<int> roots;
        if (parent < 0) {
            for (std::size_t k = 0; k < m_nodes.size(); ++k)
                if (m_nodes[k].parent < 0)
                    roots.push_back(static_cast<int>(k));
        }
        const std::vector<int>& siblings = parent < 0 ? roots : m_children[static_cast<std::size_t>(parent)];
        const auto at = std::find(siblings.begin(), siblings.end(), m_selected) - siblings.begin();
        const auto next = at + step;
        return next >= 0 && next < static_cast<std::ptrdiff_t>(siblings.size())
            ? siblings[static_cast<std::size_t>(next)]
            : -1;
    };
    int target = -2; // -2: no selection move
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        if (zoomModifier || m_selected < 0)
            zoomBy(1.25);
        else
            setCollapsed(selectedId(), false);
        break;
    case Qt::Key_Minus:
        if (zoomModifier || m_selected < 0)
            zoomBy(0.8);
        else
            setCollapsed(selectedId(), true);
        break;
    case Qt::Key_Space:
        if (m_selected >= 0)
            toggleCollapsed(selectedId());
        break;
    case Qt::Key_Asterisk:
        expandAll();
        break;
    case Qt::Key_F:
        fitToView();
        break;
    case Qt::Key_Home:
        target = rootIndex();
        break;
    case Qt::Key_B:
        target = m_best;
        break;
    case Qt::Key_Up:
        target = m_selected < 0 ? rootIndex() : m_nodes[static_cast<std::size_t>(m_selected)].parent;
        break;
    case Qt::Key_Down:
        if (m_selected < 0)
            target = rootIndex();
        else if (!m_collapsed[static_cast<std::size_t>(m_selected)] &&
                 !m_children[static_cast<std::size_t>(m_selected)].empty())
            target = m_children[static_cast<std::size_t>(m_selected)].front();
        else
            target = -1;
        break;
    case Qt::Key_Left:
        target = m_selected < 0 ? rootIndex() : sibling(-1);
        break;
    case Qt::Key_Right:
        target = m_selected < 0 ? rootIndex() : sibling(+1);
        break;
    case Qt::Key_Return:
    case Qt::Key_Enter:
        if (m_selected >= 0)
            Q_EMIT nodeSelected(selectedNodeId());
        break;
    default:
        QGraphicsView::keyPressEvent(event);
        return;
    }
    if (target >= 0 && target != m_selected) {
        userTookControl(); // following the selection is a pan
        selectNode(QString::fromStdString(m_nodes[static_cast<std::size_t>(target)].data.id)); // opens a hidden best
    }
    event->accept();
}

void TreeGraphView::resizeEvent(QResizeEvent* event)
{
    QGraphicsView::resizeEvent(event);
    updateMinimap(); // its size follows the viewport's
    if (m_autoFit)
        applyAutoFit();
    updateMinimapView();
}

void TreeGraphView::scrollContentsBy(int dx, int dy)
{
    QGraphicsView::scrollContentsBy(dx, dy);
    updateMinimapView();
}

bool TreeGraphView::viewportEvent(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int index = nodeAt(help->pos());
        if (index >= 0)
            QToolTip::showText(help->globalPos(),
                               toolTipText(QString::fromStdString(m_nodes[static_cast<std::size_t>(index)].data.id)),
                               viewport());
        else
            QToolTip::hideText();
        return true;
    }
    return QGraphicsView::viewportEvent(event);
}

} // namespace kforge::views
