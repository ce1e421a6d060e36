#include "views/cards/CardsPane.h"

#include "models/CardsTableModel.h"
#include "models/Session.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace kforge::views {
namespace {

constexpr int kMaxTensorsColumnWidth = 340;
constexpr int kMinTensorsColumnWidth = 160;

} // namespace

using app::CardsTableModel;

CardsPane::CardsPane(CardsTableModel* model, app::Session* session, QWidget* parent)
    : QWidget(parent), m_model(model), m_session(session), m_proxy(new QSortFilterProxyModel(this)),
      m_filter(new QLineEdit(this)), m_count(new QLabel(this)), m_table(new QTableView(this))
{
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(CardsTableModel::SortRole);
    m_proxy->setFilterKeyColumn(-1);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);

    m_filter->setObjectName(QStringLiteral("cardsFilter"));
    m_filter->setPlaceholderText(tr("Filter by operator, shape, dtype or card id"));
    m_filter->setClearButtonEnabled(true);
    m_count->setObjectName(QStringLiteral("cardsCount"));

    m_table->setObjectName(QStringLiteral("cardsTable"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(CardsTableModel::ShareColumn, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);

    auto* top = new QHBoxLayout;
    top->addWidget(m_filter, 1);
    top->addWidget(m_count);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(m_table, 1);

    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current, const QModelIndex&) { onCurrentRowChanged(current); });
    connect(m_session, &app::Session::currentCardChanged, this, &CardsPane::followSession);
    connect(m_proxy, &QAbstractItemModel::modelReset, this, [this]() {
        fitColumns();
        updateCount();
    });
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, &CardsPane::updateCount);
    connect(m_proxy, &QAbstractItemModel::rowsRemoved, this, &CardsPane::updateCount);
    connect(m_proxy, &QAbstractItemModel::layoutChanged, this, &CardsPane::updateCount);
    updateCount();
}

void CardsPane::onCurrentRowChanged(const QModelIndex& current)
{
    m_session->setCurrentCardId(current.isValid() ? current.data(CardsTableModel::CardIdRole).toString() : QString());
}

void CardsPane::followSession(const QString& id)
{
    const QModelIndex current = m_table->currentIndex();
    if (current.isValid() && current.data(CardsTableModel::CardIdRole).toString() == id)
        return;
    const int sourceRow = m_model->rowOfCard(id);
    const QModelIndex proxyIndex = m_proxy->mapFromSource(m_model->index(sourceRow, 0));
    if (proxyIndex.isValid())
        m_table->selectRow(proxyIndex.row());
    else
        m_table->selectionModel()->clear();
}

void CardsPane::fitColumns()
{
    m_table->resizeColumnsToContents();
    // Long tensor lists would push the numbers and the status out of view; the tooltip has them in
    // full. The column gets at most what the table's width leaves beside the others up to Status
    // (never below kMinTensorsColumnWidth; the notes after the status may scroll).
    int others = 0;
    for (int column = 0; column <= CardsTableModel::StatusColumn; ++column)
        if (column != CardsTableModel::TensorsColumn)
            others += m_table->columnWidth(column);
    const int room = m_table->viewport()->width() - others;
    const int cap = std::clamp(room, kMinTensorsColumnWidth, kMaxTensorsColumnWidth);
    if (m_table->columnWidth(CardsTableModel::TensorsColumn) > cap)
        m_table->setColumnWidth(CardsTableModel::TensorsColumn, cap);
}

void CardsPane::updateCount()
{
    const int total = m_model->rowCount();
    const int shown = m_proxy->rowCount();
    m_count->setText(shown == total ? tr("%1 cards").arg(total) : tr("%1 of %2 cards").arg(shown).arg(total));
}

} // namespace kforge::views
