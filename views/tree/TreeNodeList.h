#pragma once
// The search tree's nodes as a sortable, filterable list beside the graph: a QTableView over a
// QSortFilterProxyModel (SearchTreeModel::SortRole) over SearchNodeListModel, so the columns and
// words are the tree model's. Sorted by speedup, fastest first, until the user picks a column.
//
// Choosing a row (a click, or Enter on the current row: the arrow keys only move, as in the graph)
// emits nodeSelected; selectNode() follows a selection made
// elsewhere without emitting, so the pane can mirror Session both ways without echoes.
//
// Thread: GUI thread only. Does not own the tree model.

#include <QWidget>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace kforge::app {
class SearchNodeListModel;
class SearchTreeModel;
} // namespace kforge::app

namespace kforge::views {

class TreeNodeList : public QWidget {
    Q_OBJECT
public:
    explicit TreeNodeList(const app::SearchTreeModel* model, QWidget* parent = nullptr);

    QTableView* tableView() const { return m_table; }
    QSortFilterProxyModel* proxyModel() const { return m_proxy; }
    QLineEdit* filterEdit() const { return m_filter; }
    /// The id of the node in the current row (empty when none).
    QString currentNodeId() const;

public Q_SLOTS:
    /// Makes the node's row current (clears the selection for an unknown id or a filtered-out
    /// node). Does not emit nodeSelected.
    void selectNode(const QString& id);

Q_SIGNALS:
    /// The user chose a row.
    void nodeSelected(const QString& id);

private:
    void updateCount();

    app::SearchNodeListModel* m_list;
    QSortFilterProxyModel* m_proxy;
    QLineEdit* m_filter;
    QLabel* m_count;
    QTableView* m_table;
    bool m_following = false; // inside selectNode: the current row changes without a signal
};

} // namespace kforge::views
