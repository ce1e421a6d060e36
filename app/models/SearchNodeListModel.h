#pragma once
// The nodes of a SearchTreeModel as a flat table, one row per node in creation order (row k is
// tree().nodes()[k]), with the tree model's columns, roles and header: what the tree pane's
// sortable node list shows (through a QSortFilterProxyModel, SearchTreeModel::SortRole). Every
// value comes from the tree model, so the list and the tree never describe a node differently.
//
// Follows the tree model: its reset resets the list, its new nodes are appended (the tree grows
// by appending nodes), its changed nodes are changed here.
//
// Thread: GUI thread only. Does not own the tree model, which must outlive it.

#include <QAbstractTableModel>
#include <QString>

namespace kforge::app {

class SearchTreeModel;

class SearchNodeListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    explicit SearchNodeListModel(const SearchTreeModel* tree, QObject* parent = nullptr);

    const SearchTreeModel* treeModel() const { return m_tree; }
    /// The row of the node with this id, or -1.
    int rowOfNode(const QString& id) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void appendNewNodes();
    void onTreeDataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight);

    const SearchTreeModel* m_tree;
    int m_rows = 0;
};

} // namespace kforge::app
