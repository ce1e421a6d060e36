#include "models/SearchTreeModel.h"

#include "model/NodeRanking.h"
#include "models/ColumnAlignment.h"

#include <QStringList>
#include <QThread>

#include <cmath>
#include <utility>

namespace kforge::app {
namespace {

using core::NodeStatus;
using core::SearchNode;
using core::SearchTree;

QString fromStd(const std::string& text)
{
    return QString::fromStdString(text);
}

const SearchTree& emptyTree()
{
    static const SearchTree empty;
    return empty;
}

bool isNumericColumn(int column)
{
    return column == SearchTreeModel::MedianColumn || column == SearchTreeModel::SpeedupColumn;
}

/// True when everything the model shows of a node is the same in both (structure aside).
bool sameShownValues(const SearchNode& a, const SearchNode& b)
{
    return a.status == b.status && a.failureReason == b.failureReason && a.latency == b.latency &&
        core::nodeEagerUs(a) == core::nodeEagerUs(b) && core::nodeSpeedup(a) == core::nodeSpeedup(b) &&
        a.provenance.kind == b.provenance.kind && a.provenance.transformation == b.provenance.transformation &&
        a.provenance.provider == b.provenance.provider && a.provenance.model == b.provenance.model &&
        a.visits == b.visits && a.valueSum == b.valueSum && a.iteration == b.iteration;
}

/// 3 significant digits with a fixed number of decimals, so a column of values lines up.
QString threeDigits(double value)
{
    const double magnitude = std::fabs(value);
    const int decimals = magnitude < 10 ? 2 : magnitude < 100 ? 1 : 0;
    return QString::number(value, 'f', decimals);
}

} // namespace

SearchTreeModel::SearchTreeModel(QObject* parent) : QAbstractItemModel(parent)
{
}

void SearchTreeModel::setTree(core::SearchTree tree)
{
    setTree(std::make_shared<const core::SearchTree>(std::move(tree)));
}

void SearchTreeModel::setTree(std::shared_ptr<const core::SearchTree> tree)
{
    Q_ASSERT(QThread::currentThread() == thread());
    resetTo(std::move(tree));
}

void SearchTreeModel::updateTree(core::SearchTree tree)
{
    updateTree(std::make_shared<const core::SearchTree>(std::move(tree)));
}

void SearchTreeModel::updateTree(std::shared_ptr<const core::SearchTree> tree)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (!tree || !m_tree || tree->cardId() != m_tree->cardId() || !applyGrowth(tree))
        resetTo(std::move(tree));
}

void SearchTreeModel::clear()
{
    setTree(std::shared_ptr<const core::SearchTree>());
}

const core::SearchTree& SearchTreeModel::tree() const
{
    return m_tree ? *m_tree : emptyTree();
}

QString SearchTreeModel::cardId() const
{
    return m_tree ? fromStd(m_tree->cardId()) : QString();
}

void SearchTreeModel::resetTo(std::shared_ptr<const core::SearchTree> tree)
{
    beginResetModel();
    m_tree = std::move(tree);
    rebuildStructure();
    endResetModel();
}

int SearchTreeModel::nodeIndexOf(const std::string& id) const
{
    if (!m_tree)
        return -1;
    const SearchNode* node = m_tree->find(id);
    return node ? static_cast<int>(node - m_tree->nodes().data()) : -1;
}

void SearchTreeModel::rebuildStructure()
{
    const auto& nodes = tree().nodes();
    const std::size_t n = nodes.size();
    m_parent.assign(n, -1);
    m_row.assign(n, 0);
    m_children.assign(n, {});
    m_topLevel.clear();
    // Rows follow the parents' childIds; a node whose parent does not list it (never the case for a
    // validated tree) is left out rather than shown twice or under the wrong parent.
    std::vector<bool> placed(n, false);
    for (std::size_t k = 0; k < n; ++k) {
        if (nodes[k].parentId)
            continue;
        m_row[k] = static_cast<int>(m_topLevel.size());
        m_topLevel.push_back(static_cast<int>(k));
        placed[k] = true;
    }
    for (std::size_t k = 0; k < n; ++k) {
        for (const std::string& childId : nodes[k].childIds) {
            const int child = nodeIndexOf(childId);
            if (child < 0 || placed[static_cast<std::size_t>(child)] ||
                nodes[static_cast<std::size_t>(child)].parentId != std::optional<std::string>(nodes[k].id))
                continue;
            placed[static_cast<std::size_t>(child)] = true;
            m_parent[static_cast<std::size_t>(child)] = static_cast<int>(k);
            m_row[static_cast<std::size_t>(child)] = static_cast<int>(m_children[k].size());
            m_children[k].push_back(child);
        }
    }
    const SearchNode* best = core::bestNode(tree());
    m_best = best ? static_cast<int>(best - nodes.data()) : -1;
}

bool SearchTreeModel::applyGrowth(const std::shared_ptr<const core::SearchTree>& next)
{
    const auto& oldNodes = m_tree->nodes();
    const auto& newNodes = next->nodes();
    const std::size_t oldCount = oldNodes.size();
    const std::size_t newCount = newNodes.size();
    if (newCount < oldCount)
        return false;
    for (std::size_t k = 0; k < oldCount; ++k) {
        if (newNodes[k].id != oldNodes[k].id || newNodes[k].parentId != oldNodes[k].parentId)
            return false;
    }

    // Every new node must hang under an earlier node that lists it after its old children, so the
    // insertions are appends, done parent by parent in creation order (a new parent is inserted
    // before its own children). A new top-level node is only accepted into an empty tree.
    struct Group {
        int parent; // -1: top level
        std::vector<int> children;
    };
    std::vector<Group> groups;
    std::vector<int> groupOf(newCount, -1); // parent node -> its group
    int topLevelGroup = -1;
    for (std::size_t k = oldCount; k < newCount; ++k) {
        const SearchNode& node = newNodes[k];
        int parent = -1;
        if (node.parentId) {
            const SearchNode* p = next->find(*node.parentId);
            parent = p ? static_cast<int>(p - newNodes.data()) : -1;
            if (parent < 0 || static_cast<std::size_t>(parent) >= k)
                return false;
        } else if (oldCount > 0 || k > 0) {
            return false;
        }
        int& slot = parent < 0 ? topLevelGroup : groupOf[static_cast<std::size_t>(parent)];
        if (slot < 0) {
            slot = static_cast<int>(groups.size());
            groups.push_back(Group{parent, {}});
        }
        groups[static_cast<std::size_t>(slot)].children.push_back(static_cast<int>(k));
    }
    for (const Group& group : groups) {
        if (group.parent < 0)
            continue;
        const auto& childIds = newNodes[static_cast<std::size_t>(group.parent)].childIds;
        static const std::vector<int> none;
        const std::vector<int>& known = static_cast<std::size_t>(group.parent) < oldCount
            ? m_children[static_cast<std::size_t>(group.parent)]
            : none;
        if (childIds.size() != known.size() + group.children.size())
            return false;
        for (std::size_t i = 0; i < childIds.size(); ++i) {
            const int expected = i < known.size() ? known[i] : group.children[i - known.size()];
            if (childIds[i] != newNodes[static_cast<std::size_t>(expected)].id)
                return false;
        }
    }
    // Nodes that gained no children must not list new child ids either (checked above for those
    // that did).
    for (std::size_t k = 0; k < newCount; ++k) {
        const std::size_t known = k < oldCount ? m_children[k].size() : 0;
        if (groupOf[k] < 0 && newNodes[k].childIds.size() != known)
            return false;
    }

    const int oldBest = m_best;
    std::shared_ptr<const core::SearchTree> previous = std::exchange(m_tree, next);
    m_parent.resize(newCount, -1);
    m_row.resize(newCount, 0);
    m_children.resize(newCount);
    for (const Group& group : groups) {
        std::vector<int>& siblings = group.parent < 0 ? m_topLevel : m_children[static_cast<std::size_t>(group.parent)];
        const int first = static_cast<int>(siblings.size());
        const int last = first + static_cast<int>(group.children.size()) - 1;
        beginInsertRows(group.parent < 0 ? QModelIndex() : indexForNode(group.parent, 0), first, last);
        for (int child : group.children) {
            m_parent[static_cast<std::size_t>(child)] = group.parent;
            m_row[static_cast<std::size_t>(child)] = static_cast<int>(siblings.size());
            siblings.push_back(child);
        }
        endInsertRows();
    }

    const SearchNode* best = core::bestNode(*m_tree);
    m_best = best ? static_cast<int>(best - newNodes.data()) : -1;
    for (std::size_t k = 0; k < oldCount; ++k) {
        const int node = static_cast<int>(k);
        const bool bestChanged = (node == oldBest) != (node == m_best);
        if (bestChanged || !sameShownValues(previous->nodes()[k], newNodes[k]))
            Q_EMIT dataChanged(indexForNode(node, 0), indexForNode(node, ColumnCount - 1));
    }
    return true;
}

const core::SearchNode* SearchTreeModel::nodeAt(const QModelIndex& index) const
{
    if (!index.isValid() || index.model() != this || !m_tree)
        return nullptr;
    const auto node = static_cast<std::size_t>(index.internalId());
    return node < m_tree->nodes().size() ? &m_tree->nodes()[node] : nullptr;
}

QModelIndex SearchTreeModel::indexOfNode(const QString& id, int column) const
{
    const int node = nodeIndexOf(id.toStdString());
    if (node < 0 || static_cast<std::size_t>(node) >= m_row.size() || column < 0 || column >= ColumnCount)
        return {};
    return indexForNode(node, column);
}

QModelIndex SearchTreeModel::indexOfNodeAt(int node, int column) const
{
    if (node < 0 || static_cast<std::size_t>(node) >= m_row.size() || column < 0 || column >= ColumnCount)
        return {};
    return indexForNode(node, column);
}

QModelIndex SearchTreeModel::indexForNode(int node, int column) const
{
    return createIndex(m_row[static_cast<std::size_t>(node)], column, static_cast<quintptr>(node));
}

const std::vector<int>& SearchTreeModel::childrenOf(int node) const
{
    return node < 0 ? m_topLevel : m_children[static_cast<std::size_t>(node)];
}

QModelIndex SearchTreeModel::index(int row, int column, const QModelIndex& parent) const
{
    if (row < 0 || column < 0 || column >= ColumnCount || (parent.isValid() && parent.column() != 0))
        return {};
    const std::vector<int>& children = childrenOf(parent.isValid() ? static_cast<int>(parent.internalId()) : -1);
    if (row >= static_cast<int>(children.size()))
        return {};
    return createIndex(row, column, static_cast<quintptr>(children[static_cast<std::size_t>(row)]));
}

QModelIndex SearchTreeModel::parent(const QModelIndex& child) const
{
    if (!child.isValid())
        return {};
    const int parentNode = m_parent[static_cast<std::size_t>(child.internalId())];
    return parentNode < 0 ? QModelIndex() : indexForNode(parentNode, 0);
}

int SearchTreeModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() && parent.column() != 0)
        return 0;
    return static_cast<int>(childrenOf(parent.isValid() ? static_cast<int>(parent.internalId()) : -1).size());
}

int SearchTreeModel::columnCount(const QModelIndex&) const
{
    return ColumnCount;
}

bool SearchTreeModel::hasChildren(const QModelIndex& parent) const
{
    return rowCount(parent) > 0;
}

QVariant SearchTreeModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const SearchNode* node = nodeAt(index);
    if (!node)
        return {};
    const int nodeIndex = static_cast<int>(index.internalId());
    switch (role) {
    case Qt::DisplayRole:
        return displayData(*node, index.column());
    case Qt::ToolTipRole:
        return nodeDetails(*node, nodeIndex == m_best);
    case Qt::TextAlignmentRole:
        return columnAlignment(isNumericColumn(index.column()));
    case NodeIdRole:
        return fromStd(node->id);
    case StatusRole:
        return static_cast<int>(node->status);
    case StatusNameRole:
        return QString::fromLatin1(core::nodeStatusName(node->status));
    case IsBestRole:
        return nodeIndex == m_best;
    case SortRole:
        return sortData(nodeIndex, index.column());
    default:
        return {};
    }
}

QVariant SearchTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractItemModel::headerData(section, orientation, role);
    if (role == Qt::TextAlignmentRole)
        return columnAlignment(isNumericColumn(section));
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case IdColumn:
        return tr("Node");
    case StatusColumn:
        return tr("Status");
    case MedianColumn:
        return tr("Median \u00b5s");
    case SpeedupColumn:
        return tr("Speedup");
    case DetailColumn:
        return tr("Transformation / reason");
    }
    return {};
}

QVariant SearchTreeModel::displayData(const core::SearchNode& node, int column) const
{
    switch (column) {
    case IdColumn:
        return fromStd(node.id);
    case StatusColumn:
        return statusText(node.status);
    case MedianColumn:
        return node.latency ? QString::number(node.latency->medianUs, 'f', 2) : QStringLiteral("-");
    case SpeedupColumn: {
        const std::optional<double> speedup = core::nodeSpeedup(node);
        return speedup ? speedupText(*speedup) : QStringLiteral("-");
    }
    case DetailColumn:
        return core::isFailure(node.status) ? fromStd(node.failureReason) : transformationText(node);
    }
    return {};
}

QVariant SearchTreeModel::sortData(int nodeIndex, int column) const
{
    const SearchNode& node = m_tree->nodes()[static_cast<std::size_t>(nodeIndex)];
    switch (column) {
    case IdColumn:
        return nodeIndex;
    case MedianColumn:
        return node.latency ? node.latency->medianUs : -1.0;
    case SpeedupColumn:
        return core::nodeSpeedup(node).value_or(-1.0);
    default:
        return displayData(node, column);
    }
}

QString SearchTreeModel::statusText(core::NodeStatus status)
{
    switch (status) {
    case NodeStatus::Pending:
        return tr("pending");
    case NodeStatus::Compiling:
        return tr("compiling");
    case NodeStatus::Evaluating:
        return tr("evaluating");
    case NodeStatus::Passed:
        return tr("passed");
    case NodeStatus::CompiledOnly:
        return tr("compiled only");
    case NodeStatus::ValidatedOnly:
        return tr("validated, not timed");
    case NodeStatus::FailedProposal:
        return tr("proposal failed");
    case NodeStatus::FailedCompile:
        return tr("compile failed");
    case NodeStatus::FailedValidation:
        return tr("wrong result");
    case NodeStatus::Crashed:
        return tr("crashed");
    case NodeStatus::TimedOut:
        return tr("timed out");
    case NodeStatus::Abandoned:
        return tr("abandoned");
    case NodeStatus::NoSample:
        return tr("no sample");
    }
    return QString::fromLatin1(core::nodeStatusName(status));
}

QString SearchTreeModel::transformationText(const core::SearchNode& node)
{
    const core::Provenance& p = node.provenance;
    switch (p.kind) {
    case core::ProvenanceKind::Root:
        return tr("root");
    case core::ProvenanceKind::ManualEdit:
        return tr("manual edit");
    case core::ProvenanceKind::BuiltinTransformation:
        return p.transformation.empty() ? tr("built-in") : fromStd(p.transformation);
    case core::ProvenanceKind::Llm: {
        if (!p.transformation.empty())
            return fromStd(p.transformation);
        QString who = fromStd(p.provider);
        if (!p.model.empty())
            who += (who.isEmpty() ? QString() : QStringLiteral("/")) + fromStd(p.model);
        return who.isEmpty() ? tr("llm") : tr("llm: %1").arg(who);
    }
    }
    return {};
}

QString SearchTreeModel::latencyText(double us)
{
    if (std::fabs(us) >= 1000.0)
        return tr("%1 ms").arg(threeDigits(us / 1000.0));
    return tr("%1 \u00b5s").arg(threeDigits(us));
}

QString SearchTreeModel::speedupText(double speedup)
{
    return QString::number(speedup, 'f', 2) + QLatin1Char('x');
}

QString SearchTreeModel::nodeLabel(const core::SearchNode& node)
{
    if (!node.latency)
        return statusText(node.status);
    QString label = latencyText(node.latency->medianUs);
    if (const std::optional<double> speedup = core::nodeSpeedup(node))
        label += QStringLiteral(" \u00b7 ") + speedupText(*speedup);
    return label;
}

QString SearchTreeModel::nodeDetails(const core::SearchNode& node, bool best)
{
    QStringList lines;
    lines << tr("%1: %2%3").arg(fromStd(node.id), statusText(node.status), best ? tr(" (best)") : QString());
    if (!node.failureReason.empty())
        lines << tr("reason: %1").arg(fromStd(node.failureReason));
    if (node.latency)
        lines << tr("median %1 (quartiles %2 .. %3)")
                     .arg(latencyText(node.latency->medianUs), latencyText(node.latency->q1Us),
                          latencyText(node.latency->q3Us));
    const std::optional<double> eager = core::nodeEagerUs(node);
    const std::optional<double> speedup = core::nodeSpeedup(node);
    if (eager)
        lines << (speedup ? tr("eager %1, speedup %2").arg(latencyText(*eager), speedupText(*speedup))
                          : tr("eager %1").arg(latencyText(*eager)));
    lines << tr("transformation: %1").arg(transformationText(node));
    lines << tr("provenance: %1").arg(QString::fromLatin1(core::provenanceKindName(node.provenance.kind)));
    lines << tr("iteration %1, visits %2").arg(node.iteration).arg(node.visits);
    return lines.join(QLatin1Char('\n'));
}

} // namespace kforge::app
