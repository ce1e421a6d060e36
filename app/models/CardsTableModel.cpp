#include "models/CardsTableModel.h"

#include "models/ColumnAlignment.h"

namespace kforge::app {
namespace {

QString fromStd(const std::string& text)
{
    return QString::fromStdString(text);
}

bool isNumericColumn(int column)
{
    return column == CardsTableModel::CallsColumn || column == CardsTableModel::EagerColumn ||
        column == CardsTableModel::ShareColumn || column == CardsTableModel::BestColumn ||
        column == CardsTableModel::SpeedupColumn;
}

} // namespace

CardsTableModel::CardsTableModel(QObject* parent) : QAbstractTableModel(parent)
{
}

void CardsTableModel::setProject(std::shared_ptr<const core::Project> project)
{
    beginResetModel();
    m_project = std::move(project);
    endResetModel();
}

void CardsTableModel::setSearchSummaries(QHash<QString, CardSearchSummary> summaries)
{
    m_summaries = std::move(summaries);
    if (rowCount() > 0)
        Q_EMIT dataChanged(index(0, EagerColumn), index(rowCount() - 1, StatusColumn)); // eager: the best's
}

void CardsTableModel::setSearchingCard(const QString& id)
{
    if (id == m_searchingCard)
        return;
    m_searchingCard = id;
    if (rowCount() > 0)
        Q_EMIT dataChanged(index(0, StatusColumn), index(rowCount() - 1, StatusColumn));
}

CardSearchSummary CardsTableModel::summaryOf(const core::OperatorCard& card) const
{
    const QString id = fromStd(card.id);
    CardSearchSummary summary = m_summaries.value(id);
    if (!m_summaries.contains(id) && card.vendorBacked)
        summary.status = CardSearchStatus::VendorSkipped;
    if (id == m_searchingCard)
        summary.status = CardSearchStatus::Searching;
    return summary;
}

const core::OperatorCard* CardsTableModel::cardAt(int row) const
{
    if (!m_project || row < 0 || row >= static_cast<int>(m_project->cards.size()))
        return nullptr;
    return &m_project->cards[static_cast<size_t>(row)];
}

int CardsTableModel::rowOfCard(const QString& id) const
{
    if (!m_project || id.isEmpty())
        return -1;
    const std::string wanted = id.toStdString();
    for (size_t i = 0; i < m_project->cards.size(); ++i) {
        if (m_project->cards[i].id == wanted)
            return static_cast<int>(i);
    }
    return -1;
}

int CardsTableModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !m_project)
        return 0;
    return static_cast<int>(m_project->cards.size());
}

int CardsTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CardsTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const core::OperatorCard* card = cardAt(index.row());
    if (!card)
        return {};
    switch (role) {
    case Qt::DisplayRole:
        return displayData(*card, index.column());
    case SortRole:
        return sortData(*card, index.column());
    case CardIdRole:
        return fromStd(card->id);
    case Qt::ToolTipRole:
        return toolTipData(*card, index.column());
    case Qt::TextAlignmentRole:
        return columnAlignment(isNumericColumn(index.column()));
    default:
        return {};
    }
}

QVariant CardsTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::TextAlignmentRole)
        return columnAlignment(isNumericColumn(section));
    if (role == Qt::ToolTipRole)
        return headerToolTip(section);
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case IdColumn:
        return tr("Card");
    case OpColumn:
        return tr("Operator");
    case TensorsColumn:
        return tr("Tensors");
    case CallsColumn:
        return tr("Calls");
    case EagerColumn:
        return tr("Eager \u00b5s");
    case ShareColumn:
        return tr("Share %");
    case BestColumn:
        return tr("Best \u00b5s");
    case SpeedupColumn:
        return tr("Speedup");
    case StatusColumn:
        return tr("Status");
    case NotesColumn:
        return tr("Notes");
    }
    return {};
}

QVariant CardsTableModel::headerToolTip(int section)
{
    switch (section) {
    case EagerColumn:
        return tr("Eager PyTorch time the speedup is measured against: timed with the best node, interleaved on "
                  "the same GPU. Before a search measured it, the time taken at capture.");
    case BestColumn:
        return tr("Median latency of the best node: the highest speedup over eager (ties: the lower median)");
    case SpeedupColumn:
        return tr("Speedup of the best node over eager: the median of the paired per-repetition ratios eager / "
                  "candidate where measured, else eager median / candidate median");
    default:
        return {};
    }
}

std::optional<double> CardsTableModel::eagerUsOf(const core::OperatorCard& card) const
{
    if (const std::optional<double> measured = summaryOf(card).eagerUs)
        return measured;
    return card.eager ? std::optional<double>(card.eager->medianUs) : std::nullopt;
}

QString CardsTableModel::tensorSummary(const core::OperatorCard& card)
{
    QStringList parts;
    for (const core::ArgSpec& arg : card.args) {
        if (arg.kind == core::ArgKind::Tensor || arg.kind == core::ArgKind::TensorList)
            parts << fromStd(arg.toShortString());
    }
    return parts.join(QLatin1Char(' '));
}

QString CardsTableModel::notesText(const core::OperatorCard& card)
{
    QStringList parts;
    if (card.vendorBacked)
        parts << tr("vendor-backed");
    const qsizetype samples = static_cast<qsizetype>(card.samples.size());
    parts << (samples == 1 ? tr("1 sample") : tr("%1 samples").arg(samples));
    if (!card.eager)
        parts << (card.eagerNote.empty() ? tr("not timed") : tr("not timed: %1").arg(fromStd(card.eagerNote)));
    return parts.join(QStringLiteral(", "));
}

QVariant CardsTableModel::displayData(const core::OperatorCard& card, int column) const
{
    switch (column) {
    case IdColumn:
        return fromStd(card.id.substr(0, 8));
    case OpColumn:
        return fromStd(card.displayName());
    case TensorsColumn:
        return tensorSummary(card);
    case CallsColumn:
        return QString::number(card.callCount);
    case EagerColumn: {
        const std::optional<double> eager = eagerUsOf(card);
        return eager ? QString::number(*eager, 'f', 2) : QStringLiteral("-");
    }
    case ShareColumn:
        return QString::number(card.timeShare * 100.0, 'f', 1);
    case BestColumn: {
        const CardSearchSummary s = summaryOf(card);
        return s.bestUs ? QString::number(*s.bestUs, 'f', 2) : QStringLiteral("-");
    }
    case SpeedupColumn: {
        const CardSearchSummary s = summaryOf(card);
        return s.speedup ? QString::number(*s.speedup, 'f', 2) + QLatin1Char('x') : QStringLiteral("-");
    }
    case StatusColumn:
        return cardSearchStatusText(summaryOf(card).status);
    case NotesColumn:
        return notesText(card);
    }
    return {};
}

QVariant CardsTableModel::sortData(const core::OperatorCard& card, int column) const
{
    switch (column) {
    case CallsColumn:
        return QVariant::fromValue<qint64>(card.callCount);
    case EagerColumn:
        return eagerUsOf(card).value_or(-1.0);
    case ShareColumn:
        return card.timeShare;
    case BestColumn:
        return summaryOf(card).bestUs.value_or(-1.0);
    case SpeedupColumn:
        return summaryOf(card).speedup.value_or(-1.0);
    default:
        return displayData(card, column);
    }
}

QVariant CardsTableModel::toolTipData(const core::OperatorCard& card, int column) const
{
    switch (column) {
    case IdColumn:
        return fromStd(card.id);
    case OpColumn:
        return fromStd(card.schema);
    case TensorsColumn: {
        QStringList lines;
        for (const core::ArgSpec& arg : card.args) {
            if (arg.kind == core::ArgKind::Tensor || arg.kind == core::ArgKind::TensorList)
                lines << fromStd(arg.name) + QStringLiteral(": ") + fromStd(arg.toShortString());
        }
        return lines.join(QLatin1Char('\n'));
    }
    case EagerColumn: {
        QStringList lines;
        const CardSearchSummary s = summaryOf(card);
        if (s.eagerUs)
            lines << tr("%1 \u00b5s: eager timed with the best node %2, interleaved on the same GPU; "
                        "the speedup is measured against it")
                         .arg(*s.eagerUs, 0, 'f', 2)
                         .arg(s.bestNodeId);
        if (card.eager)
            lines << tr("at capture: median %1 \u00b5s, quartiles %2..%3 \u00b5s over %4 runs\n%5 on %6")
                         .arg(card.eager->medianUs, 0, 'f', 2)
                         .arg(card.eager->q1Us, 0, 'f', 2)
                         .arg(card.eager->q3Us, 0, 'f', 2)
                         .arg(card.eager->repetitions)
                         .arg(fromStd(card.eager->method), fromStd(card.eager->device));
        else if (!s.eagerUs)
            lines << fromStd(card.eagerNote);
        return lines.join(QLatin1Char('\n'));
    }
    case StatusColumn: {
        const QString reason = summaryOf(card).reason;
        return reason.isEmpty() ? QVariant() : QVariant(reason);
    }
    case NotesColumn: {
        QStringList lines;
        if (!card.samplesNote.empty())
            lines << fromStd(card.samplesNote);
        if (!card.eagerNote.empty())
            lines << fromStd(card.eagerNote);
        return lines.isEmpty() ? QVariant() : QVariant(lines.join(QLatin1Char('\n')));
    }
    default:
        return {};
    }
}

} // namespace kforge::app
