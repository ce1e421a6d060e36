#include "views/tree/TreeNodeList.h"

#include "models/SearchNodeListModel.h"
#include "models/SearchTreeModel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

namespace kforge::views {

using app::SearchTreeModel;

TreeNodeList::TreeNodeList(const SearchTreeModel* model, QWidget* parent)
    : QWidget(parent), m_list(new app::SearchNodeListModel(model, this)), m_proxy(new QSortFilterProxyModel(this)),
      m_filter(new QLineEdit(this)), m_count(new QLabel(this)), m_table(new QTableView(this))
{
    setObjectName(QStringLiteral("treeNodeList"));
    m_proxy->setSourceModel(m_list);
    m_proxy->setSortRole(SearchTreeModel::SortRole);
    m_proxy->setFilterKeyColumn(-1);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);

    m_filter->setObjectName(QStringLiteral("treeNodeFilter"));
    m_filter->setPlaceholderText(tr("Filter by node, status or transformation"));
    m_filter->setClearButtonEnabled(true);
    m_count->setObjectName(QStringLiteral("treeNodeCount"));

    m_table->setObjectName(QStringLiteral("treeNodeTable"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(SearchTreeModel::SpeedupColumn, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    // The numbers first: in a narrow list the speedup must not be the column scrolled away.
    QHeaderView* header = m_table->horizontalHeader();
    header->moveSection(header->visualIndex(SearchTreeModel::SpeedupColumn), 1);
    header->moveSection(header->visualIndex(SearchTreeModel::MedianColumn), 2);

    auto* top = new QHBoxLayout;
    top->addWidget(m_filter, 1);
    top->addWidget(m_count);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_table, 1);

    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    // As in the graph: a click chooses a row; the arrow keys only move, and Enter chooses (activated).
    const auto choose = [this](const QModelIndex& index) {
        if (!m_following && index.isValid())
            Q_EMIT nodeSelected(index.data(SearchTreeModel::NodeIdRole).toString());
    };
    connect(m_table, &QAbstractItemView::clicked, this, choose);
    connect(m_table, &QAbstractItemView::activated, this, choose);
    connect(m_proxy, &QAbstractItemModel::modelReset, this, [this] {
        m_table->resizeColumnsToContents();
        updateCount();
    });
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, &TreeNodeList::updateCount);
    connect(m_proxy, &QAbstractItemModel::rowsRemoved, this, &TreeNodeList::updateCount);
    connect(m_proxy, &QAbstractItemModel::layoutChanged, this, &TreeNodeList::updateCount);
    updateCount();
}

QString TreeNodeList::currentNodeId() const
{
    const QModelIndex current = m_table->currentIndex();
    return current.isValid() ? current.data(SearchTreeModel::NodeIdRole).toString() : QString();
}

void TreeNodeList::selectNode(const QString& id)
{
    if (!id.isEmpty() && currentNodeId() == id)
        return;
    m_following = true;
    const QModelIndex index = m_proxy->mapFromSource(m_list->index(m_list->rowOfNode(id), 0));
    if (index.isValid()) {
        m_table->selectionModel()->setCurrentIndex(index,
                                                   QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        m_table->scrollTo(index);
    } else {
        m_table->selectionModel()->clear();
    }
    m_following = false;
}

void TreeNodeList::updateCount()
{
    const int total = m_list->rowCount();
    const int shown = m_proxy->rowCount();
    m_count->setText(shown == total ? tr("%1 nodes").arg(total) : tr("%1 of %2 nodes").arg(shown).arg(total));
}

} // namespace kforge::views
