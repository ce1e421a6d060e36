#include "models/SearchNodeListModel.h"

#include "models/SearchTreeModel.h"

namespace kforge::app {

SearchNodeListModel::SearchNodeListModel(const SearchTreeModel* tree, QObject* parent)
    : QAbstractTableModel(parent), m_tree(tree), m_rows(static_cast<int>(tree->tree().size()))
{
    connect(m_tree, &QAbstractItemModel::modelAboutToBeReset, this, [this] { beginResetModel(); });
    connect(m_tree, &QAbstractItemModel::modelReset, this, [this] {
        m_rows = static_cast<int>(m_tree->tree().size());
        endResetModel();
    });
    connect(m_tree, &QAbstractItemModel::rowsInserted, this, &SearchNodeListModel::appendNewNodes);
    connect(m_tree, &QAbstractItemModel::dataChanged, this, &SearchNodeListModel::onTreeDataChanged);
}

void SearchNodeListModel::appendNewNodes()
{
    // The tree model inserts a growth parent by parent, having taken the whole new tree first:
    // the first insertion brings every new node here, in creation order.
    const int count = static_cast<int>(m_tree->tree().size());
    if (count <= m_rows)
        return;
    beginInsertRows({}, m_rows, count - 1);
    m_rows = count;
    endInsertRows();
}

void SearchNodeListModel::onTreeDataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight)
{
    for (int row = topLeft.row(); row <= bottomRight.row(); ++row) {
        const int node = rowOfNode(topLeft.siblingAtRow(row).data(SearchTreeModel::NodeIdRole).toString());
        if (node >= 0 && node < m_rows)
            Q_EMIT dataChanged(index(node, 0), index(node, columnCount() - 1));
    }
}

int SearchNodeListModel::rowOfNode(const QString& id) const
{
    const auto& nodes = m_tree->tree().nodes();
    const core::SearchNode* node = m_tree->tree().find(id.toStdString());
    const int row = node ? static_cast<int>(node - nodes.data()) : -1;
    return row < m_rows ? row : -1;
}

int SearchNodeListModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : m_rows;
}

int SearchNodeListModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : SearchTreeModel::ColumnCount;
}

QVariant SearchNodeListModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    return m_tree->indexOfNodeAt(index.row(), index.column()).data(role);
}

QVariant SearchNodeListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal)
        return m_tree->headerData(section, orientation, role);
    return QAbstractTableModel::headerData(section, orientation, role);
}

} // namespace kforge::app
