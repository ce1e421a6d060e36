#pragma once
// The validation log pane: a table over a ValidationLogModel through a filter proxy. Filters: a
// minimum level (combo), text (line edit; case-insensitive substring of the message, card id or
// node id) and one node (setNodeFilter; the owner calls it when the session's node changes). Rows
// are coloured by level. Ctrl+C and the context menu's Copy put the selected rows on the clipboard
// as tab-separated values (ValidationLogModel::toTabSeparated, one line per row, in view order).
// While the view shows the newest row it follows new rows; once the user scrolls up it stays put
// until they scroll back to the bottom.
//
// The pane does no engine work and does not own the model. Thread: GUI thread only.

#include "models/ValidationLogModel.h"

#include <QPointer>
#include <QWidget>

class QComboBox;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QToolButton;
class QAction;

namespace kforge::views {

class ValidationLogPane : public QWidget {
    Q_OBJECT
public:
    explicit ValidationLogPane(QWidget* parent = nullptr);

    /// The model shown (not owned; may be null). Filters are kept.
    void setModel(app::ValidationLogModel* model);
    app::ValidationLogModel* model() const { return m_model; }

    /// Shows entries of `level` and above (the combo follows).
    void setMinimumLevel(app::LogLevel level);
    app::LogLevel minimumLevel() const;
    /// Shows entries whose message, card id or node id contains `text`, ignoring case (the line
    /// edit follows). Empty: no text filter.
    void setFilterText(const QString& text);
    QString filterText() const;
    /// Shows only the entries of node `nodeId` (of card `cardId`, or of any card when empty).
    /// An empty `nodeId` shows every node.
    void setNodeFilter(const QString& nodeId, const QString& cardId = {});
    QString nodeFilter() const { return m_nodeFilter; }
    QString nodeFilterCard() const { return m_nodeFilterCard; }

    /// The selected rows as tab-separated lines ("\n"-terminated), in view order; empty if none.
    QString selectedRowsText() const;
    /// Puts selectedRowsText() on the clipboard (nothing when no row is selected).
    void copySelectedRows();

    /// True while the view follows new entries (it shows the newest row).
    bool isFollowingNewest() const { return m_followNewest; }

    QTableView* tableView() const { return m_table; }
    QSortFilterProxyModel* proxyModel() const { return m_proxy; }
    QAction* copyAction() const { return m_copyAction; }

Q_SIGNALS:
    /// The user cleared the node filter with its button (setNodeFilter({}) has been applied).
    void nodeFilterCleared();

private:
    void updateNodeFilterButton();
    void sizeColumns();

    QPointer<app::ValidationLogModel> m_model;
    QSortFilterProxyModel* m_proxy = nullptr;
    QTableView* m_table = nullptr;
    QComboBox* m_levelCombo = nullptr;
    QLineEdit* m_filterEdit = nullptr;
    QToolButton* m_nodeFilterButton = nullptr;
    QAction* m_copyAction = nullptr;
    QString m_nodeFilter;
    QString m_nodeFilterCard;
    bool m_followNewest = true;
};

} // namespace kforge::views
