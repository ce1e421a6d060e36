#include "views/export/ExportDialog.h"

#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QTableWidget>
#include <QVBoxLayout>

namespace kforge::views {

namespace {

enum Column { Include, Card, Op, Decision, Reason, ColumnCount };

QStringList architecturesOf(const QString& text)
{
    QStringList names;
    for (const QString& part : text.split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts))
        names.append(part.trimmed());
    return names;
}

} // namespace

ExportDialog::ExportDialog(const QString& suggestedFile, double minSpeedup, PreviewFn preview,
                           ArchitectureProblemFn architectureProblem, QWidget* parent)
    : QDialog(parent), m_preview(std::move(preview)), m_architectureProblem(std::move(architectureProblem))
{
    setObjectName(QStringLiteral("exportDialog"));
    setWindowTitle(tr("Export .cast"));
    m_file = new QLineEdit(suggestedFile, this);
    m_file->setObjectName(QStringLiteral("exportFile"));
    auto* browse = new QPushButton(tr("Browse..."), this);
    connect(browse, &QPushButton::clicked, this, [this]() {
        const QString chosen =
            QFileDialog::getSaveFileName(this, tr("Export .cast"), m_file->text(), tr(".cast packages (*.cast)"));
        if (!chosen.isEmpty())
            m_file->setText(chosen);
    });
    auto* fileRow = new QHBoxLayout;
    fileRow->addWidget(m_file, 1);
    fileRow->addWidget(browse);
    m_minSpeedup = new QDoubleSpinBox(this);
    m_minSpeedup->setObjectName(QStringLiteral("exportMinSpeedup"));
    m_minSpeedup->setRange(0.0, 100.0);
    m_minSpeedup->setDecimals(2);
    m_minSpeedup->setSingleStep(0.01);
    m_minSpeedup->setSuffix(QStringLiteral("x"));
    m_minSpeedup->setValue(minSpeedup);
    m_minSpeedup->setToolTip(tr("A card's best node must be at least this much faster than eager (kforge export "
                                "--min-speedup)."));
    m_architectures = new QLineEdit(this);
    m_architectures->setObjectName(QStringLiteral("exportArchitectures"));
    m_architectures->setPlaceholderText(tr("each kernel's measured architecture"));
    m_architectures->setToolTip(tr("Cubins to build, e.g. sm_90, sm_100 (kforge export --arch)."));
    m_table = new QTableWidget(0, ColumnCount, this);
    m_table->setObjectName(QStringLiteral("exportPreview"));
    m_table->setHorizontalHeaderLabels({tr("Export"), tr("Card"), tr("Op"), tr("Would be"), tr("Why")});
    m_table->horizontalHeader()->setSectionResizeMode(Reason, QHeaderView::Stretch);
    m_table->verticalHeader()->hide();
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("exportSummary"));
    m_summary->setWordWrap(true);
    m_problem = new QLabel(this);
    m_problem->setObjectName(QStringLiteral("exportProblem"));
    m_problem->setWordWrap(true);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    m_buttons->addButton(tr("Export"), QDialogButtonBox::AcceptRole)->setObjectName(QStringLiteral("exportAccept"));

    auto* form = new QFormLayout;
    form->addRow(tr("File"), fileRow);
    form->addRow(tr("Minimum speedup"), m_minSpeedup);
    form->addRow(tr("Architectures"), m_architectures);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_summary);
    layout->addWidget(m_problem);
    layout->addWidget(m_buttons);
    resize(900, 560);

    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_minSpeedup, &QDoubleSpinBox::valueChanged, this, &ExportDialog::recompute);
    connect(m_file, &QLineEdit::textChanged, this, &ExportDialog::refresh);
    connect(m_architectures, &QLineEdit::textChanged, this, &ExportDialog::refresh);
    connect(m_table, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
        if (!m_filling && item->column() == Include)
            refresh();
    });
    recompute();
}

void ExportDialog::recompute()
{
    // The user's choice of cards survives a new preview.
    QStringList excluded;
    for (int row = 0; row < m_table->rowCount(); ++row)
        if (m_table->item(row, Include)->checkState() == Qt::Unchecked)
            excluded.append(m_lines.value(row).cardId);
    m_lines = m_preview ? m_preview(m_minSpeedup->value()) : QList<ExportPreviewLine>{};
    m_filling = true;
    m_table->setRowCount(static_cast<int>(m_lines.size()));
    for (int row = 0; row < m_lines.size(); ++row) {
        const ExportPreviewLine& line = m_lines[row];
        auto* include = new QTableWidgetItem;
        include->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        include->setCheckState(excluded.contains(line.cardId) ? Qt::Unchecked : Qt::Checked);
        m_table->setItem(row, Include, include);
        m_table->setItem(row, Card, new QTableWidgetItem(line.cardId.left(8)));
        m_table->item(row, Card)->setToolTip(line.cardId);
        m_table->setItem(row, Op, new QTableWidgetItem(line.op));
        m_table->setItem(row, Decision, new QTableWidgetItem);
        m_table->setItem(row, Reason, new QTableWidgetItem);
    }
    m_filling = false;
    m_table->resizeColumnsToContents();
    refresh();
}

ExportChoices ExportDialog::choices() const
{
    ExportChoices c;
    c.file = m_file->text().trimmed();
    c.minSpeedup = m_minSpeedup->value();
    bool everyCard = true;
    for (int row = 0; row < m_table->rowCount(); ++row) {
        if (m_table->item(row, Include)->checkState() == Qt::Checked)
            c.cardIds.append(m_lines.value(row).cardId);
        else
            everyCard = false;
    }
    if (everyCard)
        c.cardIds.clear();
    c.architectures = architecturesOf(m_architectures->text());
    return c;
}

QString ExportDialog::problem() const
{
    if (m_file->text().trimmed().isEmpty())
        return tr("Choose the file to write.");
    for (const QString& arch : architecturesOf(m_architectures->text()))
        if (const QString why = m_architectureProblem ? m_architectureProblem(arch) : QString(); !why.isEmpty())
            return why;
    bool any = false;
    for (int row = 0; row < m_table->rowCount(); ++row)
        any = any || m_table->item(row, Include)->checkState() == Qt::Checked;
    if (!any)
        return tr("No card is selected: check at least one.");
    return {};
}

void ExportDialog::refresh()
{
    int ships = 0;
    int selected = 0;
    m_filling = true;
    for (int row = 0; row < m_table->rowCount(); ++row) {
        const ExportPreviewLine& line = m_lines[row];
        const bool included = m_table->item(row, Include)->checkState() == Qt::Checked;
        const bool custom = included && line.ships;
        selected += included ? 1 : 0;
        ships += custom ? 1 : 0;
        m_table->item(row, Decision)->setText(custom ? tr("custom") : tr("fallback"));
        m_table->item(row, Reason)->setText(included ? line.reason : tr("not selected (--cards)"));
    }
    m_filling = false;
    m_summary->setText(tr("%1 of %2 cards would ship a custom kernel (%3 selected), if each compiles for the "
                          "chosen architectures and passes the sanitizer gate and the in-model check; every other "
                          "card runs eager's operator.")
                           .arg(ships)
                           .arg(m_lines.size())
                           .arg(selected));
    const QString why = problem();
    m_problem->setText(why);
    m_problem->setVisible(!why.isEmpty());
    for (QAbstractButton* button : m_buttons->buttons())
        if (m_buttons->buttonRole(button) == QDialogButtonBox::AcceptRole)
            button->setEnabled(why.isEmpty());
}

} // namespace kforge::views
