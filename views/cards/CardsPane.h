#pragma once
// The operator cards table: a filter line and a sortable table over CardsTableModel. The pane
// mirrors the table's current row into Session::currentCardId and follows the session back, so
// other panes only ever observe the session.
//
// Thread: GUI thread only. Does not own the model or the session.

#include <QWidget>

class QLabel;
class QLineEdit;
class QModelIndex;
class QSortFilterProxyModel;
class QTableView;

namespace kforge::app {
class CardsTableModel;
class Session;
} // namespace kforge::app

namespace kforge::views {

class CardsPane : public QWidget {
    Q_OBJECT
public:
    CardsPane(app::CardsTableModel* model, app::Session* session, QWidget* parent = nullptr);

    QTableView* tableView() const { return m_table; }
    QLineEdit* filterEdit() const { return m_filter; }
    QSortFilterProxyModel* proxyModel() const { return m_proxy; }

private:
    void onCurrentRowChanged(const QModelIndex& current);
    void followSession(const QString& id);
    void fitColumns();
    void updateCount();

    app::CardsTableModel* m_model;
    app::Session* m_session;
    QSortFilterProxyModel* m_proxy;
    QLineEdit* m_filter;
    QLabel* m_count;
    QTableView* m_table;
};

} // namespace kforge::views
