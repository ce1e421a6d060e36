#include "views/log/ValidationLogPane.h"

#include <QAction>
#include <QApplication>
#include <QBrush>
#include <QClipboard>
#include <QColor>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace kforge::views {
namespace {

using app::LogEntry;
using app::LogLevel;
using app::ValidationLogModel;

// Filters rows of a ValidationLogModel by level, text and node, and colours them by level. Reads
// entries directly (entryAt) rather than through QVariant roles: 100k rows filter in milliseconds.
class LogFilterProxy final : public QSortFilterProxyModel {
public:
    explicit LogFilterProxy(QObject* parent) : QSortFilterProxyModel(parent)
    {
        setSortRole(ValidationLogModel::SortRole);
    }

    void setLog(ValidationLogModel* model)
    {
        m_log = model;
        setSourceModel(model);
    }

    void setMinimumLevel(LogLevel level)
    {
        if (level == m_minimumLevel)
            return;
        m_minimumLevel = level;
        invalidateFilter();
    }
    LogLevel minimumLevel() const { return m_minimumLevel; }

    void setText(const QString& text)
    {
        if (text == m_text)
            return;
        m_text = text;
        invalidateFilter();
    }
    QString text() const { return m_text; }

    void setNode(const QString& nodeId, const QString& cardId)
    {
        if (nodeId == m_nodeId && cardId == m_cardId)
            return;
        m_nodeId = nodeId;
        m_cardId = cardId;
        invalidateFilter();
    }

    QVariant data(const QModelIndex& index, int role) const override
    {
        if (role != Qt::ForegroundRole)
            return QSortFilterProxyModel::data(index, role);
        switch (static_cast<LogLevel>(QSortFilterProxyModel::data(index, ValidationLogModel::LevelRole).toInt())) {
        case LogLevel::Error:
            return QBrush(QColor(0xb0, 0x00, 0x20));
        case LogLevel::Warning:
            return QBrush(QColor(0xa1, 0x5c, 0x00));
        case LogLevel::Info:
            break;
        }
        return {};
    }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override
    {
        if (!m_log || sourceParent.isValid())
            return false;
        const LogEntry& entry = m_log->entryAt(sourceRow);
        if (entry.level < m_minimumLevel)
            return false;
        if (!m_nodeId.isEmpty() && (entry.nodeId != m_nodeId || (!m_cardId.isEmpty() && entry.cardId != m_cardId)))
            return false;
        if (!m_text.isEmpty() && !entry.message.contains(m_text, Qt::CaseInsensitive) &&
            !entry.cardId.contains(m_text, Qt::CaseInsensitive) && !entry.nodeId.contains(m_text, Qt::CaseInsensitive))
            return false;
        return true;
    }

private:
    QPointer<ValidationLogModel> m_log;
    LogLevel m_minimumLevel = LogLevel::Info;
    QString m_text;
    QString m_nodeId;
    QString m_cardId;
};

LogFilterProxy* logProxy(QSortFilterProxyModel* proxy)
{
    return static_cast<LogFilterProxy*>(proxy);
}

} // namespace

ValidationLogPane::ValidationLogPane(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("validationLogPane"));

    m_levelCombo = new QComboBox(this);
    m_levelCombo->setObjectName(QStringLiteral("validationLogLevel"));
    m_levelCombo->addItem(tr("All levels"), static_cast<int>(LogLevel::Info));
    m_levelCombo->addItem(tr("Warnings and errors"), static_cast<int>(LogLevel::Warning));
    m_levelCombo->addItem(tr("Errors only"), static_cast<int>(LogLevel::Error));

    m_filterEdit = new QLineEdit(this);
    m_filterEdit->setObjectName(QStringLiteral("validationLogFilter"));
    m_filterEdit->setPlaceholderText(tr("Filter messages, cards, nodes"));
    m_filterEdit->setClearButtonEnabled(true);

    m_nodeFilterButton = new QToolButton(this);
    m_nodeFilterButton->setObjectName(QStringLiteral("validationLogNodeFilter"));
    m_nodeFilterButton->setToolTip(tr("Only the selected node's entries are shown; click to show all nodes"));
    m_nodeFilterButton->setVisible(false);

    auto* filters = new QHBoxLayout;
    filters->setContentsMargins(0, 0, 0, 0);
    filters->addWidget(new QLabel(tr("Level:"), this));
    filters->addWidget(m_levelCombo);
    filters->addWidget(m_filterEdit, 1);
    filters->addWidget(m_nodeFilterButton);

    m_proxy = new LogFilterProxy(this);
    m_proxy->setObjectName(QStringLiteral("validationLogProxy"));

    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("validationLogTable"));
    m_table->setModel(m_proxy);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setWordWrap(false);
    m_table->setAlternatingRowColors(true);
    m_table->setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
    m_table->verticalHeader()->setVisible(false);
    // Fixed row heights: no per-row measuring, so 100k rows stay cheap.
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    // Source order (oldest first) until the user clicks a header.
    m_table->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    m_table->setSortingEnabled(true);
    m_copyAction = new QAction(tr("&Copy"), this);
    m_copyAction->setObjectName(QStringLiteral("validationLogCopy"));
    m_copyAction->setShortcut(QKeySequence::Copy);
    m_copyAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_table->addAction(m_copyAction);
    m_table->setContextMenuPolicy(Qt::ActionsContextMenu);
    connect(m_copyAction, &QAction::triggered, this, &ValidationLogPane::copySelectedRows);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(filters);
    layout->addWidget(m_table, 1);

    connect(m_levelCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index >= 0)
            logProxy(m_proxy)->setMinimumLevel(static_cast<LogLevel>(m_levelCombo->itemData(index).toInt()));
    });
    connect(m_filterEdit, &QLineEdit::textChanged, this,
            [this](const QString& text) { logProxy(m_proxy)->setText(text); });
    connect(m_nodeFilterButton, &QToolButton::clicked, this, [this] {
        setNodeFilter({});
        Q_EMIT nodeFilterCleared();
    });

    // Following the newest row: the user's scrolling decides (at the bottom = follow); a range that
    // grows (new rows laid out) moves a following view to the new bottom.
    QScrollBar* bar = m_table->verticalScrollBar();
    connect(bar, &QScrollBar::valueChanged, this, [this, bar](int value) { m_followNewest = value >= bar->maximum(); });
    connect(bar, &QScrollBar::rangeChanged, this, [this, bar](int, int maximum) {
        if (m_followNewest)
            bar->setValue(maximum);
    });
}

void ValidationLogPane::setModel(app::ValidationLogModel* model)
{
    logProxy(m_proxy)->setLog(model);
    m_model = model;
    sizeColumns();
}

void ValidationLogPane::sizeColumns()
{
    // Once the columns exist (widths set before a model gives them are dropped): the short columns
    // as wide as their longest text (a card's 8-digit short id, as in the cards table), the message
    // column takes the rest.
    const QFontMetrics metrics = m_table->fontMetrics();
    const int padding = 12;
    m_table->setColumnWidth(ValidationLogModel::TimeColumn,
                            metrics.horizontalAdvance(QStringLiteral("00:00:00.000")) + padding);
    m_table->setColumnWidth(ValidationLogModel::LevelColumn,
                            metrics.horizontalAdvance(QStringLiteral("warning")) + padding);
    m_table->setColumnWidth(ValidationLogModel::CardColumn,
                            metrics.horizontalAdvance(QStringLiteral("01234567")) + padding);
    m_table->setColumnWidth(ValidationLogModel::NodeColumn,
                            metrics.horizontalAdvance(QStringLiteral("n0000")) + padding);
    m_table->setColumnWidth(ValidationLogModel::PhaseColumn,
                            metrics.horizontalAdvance(QStringLiteral("validate")) + padding);
}

void ValidationLogPane::setMinimumLevel(app::LogLevel level)
{
    const int index = m_levelCombo->findData(static_cast<int>(level));
    if (index >= 0)
        m_levelCombo->setCurrentIndex(index); // the combo's signal applies it
}

app::LogLevel ValidationLogPane::minimumLevel() const
{
    return logProxy(m_proxy)->minimumLevel();
}

void ValidationLogPane::setFilterText(const QString& text)
{
    m_filterEdit->setText(text); // textChanged applies it
}

QString ValidationLogPane::filterText() const
{
    return logProxy(m_proxy)->text();
}

void ValidationLogPane::setNodeFilter(const QString& nodeId, const QString& cardId)
{
    m_nodeFilter = nodeId;
    m_nodeFilterCard = nodeId.isEmpty() ? QString() : cardId;
    logProxy(m_proxy)->setNode(m_nodeFilter, m_nodeFilterCard);
    updateNodeFilterButton();
}

void ValidationLogPane::updateNodeFilterButton()
{
    m_nodeFilterButton->setVisible(!m_nodeFilter.isEmpty());
    m_nodeFilterButton->setText(tr("Node %1 \u2715").arg(m_nodeFilter));
}

QString ValidationLogPane::selectedRowsText() const
{
    if (!m_model || !m_table->selectionModel())
        return {};
    QModelIndexList rows = m_table->selectionModel()->selectedRows();
    std::sort(rows.begin(), rows.end(), [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
    QString text;
    for (const QModelIndex& row : rows) {
        const QModelIndex source = m_proxy->mapToSource(row);
        if (source.isValid())
            text += ValidationLogModel::toTabSeparated(m_model->entryAt(source.row())) + QLatin1Char('\n');
    }
    return text;
}

void ValidationLogPane::copySelectedRows()
{
    const QString text = selectedRowsText();
    if (!text.isEmpty())
        QApplication::clipboard()->setText(text);
}

} // namespace kforge::views
