#pragma once
// File > Export .cast: the options of `kforge export` (the file, --min-speedup, --cards, --arch) and a
// preview of what the package would hold, card by card, recomputed as the options change: which
// cards' best nodes would ship as custom kernels and why every other card would fall back (the
// export's own first-stage rule, core::previewCastExport, which the caller supplies). A shipping
// card can still fall back at export: a failed compile, a sanitizer finding or the in-model check.
// Export is enabled only while the options are valid; the reason is shown otherwise.
//
// Thread: GUI thread only.

#include <QDialog>
#include <QList>
#include <QString>
#include <QStringList>

#include <functional>

class QDialogButtonBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QTableWidget;

namespace kforge::views {

/// One card of the preview, in project order.
struct ExportPreviewLine {
    QString cardId;
    QString op; // "aten::softmax.int", "region: batch_norm -> relu_"
    bool ships = false;
    QString reason; // "best 1.62x (n3)" or the fallback reason
};

/// What the user chose.
struct ExportChoices {
    QString file;
    double minSpeedup = 0;
    QStringList cardIds;       // full ids; empty: every card
    QStringList architectures; // "sm_90"; empty: each kernel's measured architecture
};

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    /// The preview of every card for a minimum speedup (no card selection: the dialog marks the
    /// cards left out itself).
    using PreviewFn = std::function<QList<ExportPreviewLine>(double minSpeedup)>;
    /// "" when an architecture name is valid ("sm_90"), else why not.
    using ArchitectureProblemFn = std::function<QString(const QString& architecture)>;

    ExportDialog(const QString& suggestedFile, double minSpeedup, PreviewFn preview,
                 ArchitectureProblemFn architectureProblem, QWidget* parent = nullptr);

    ExportChoices choices() const;
    /// "" when the options are valid, else the line shown in the dialog.
    QString problem() const;

private:
    void recompute(); // the preview for the current minimum speedup
    void refresh();   // the selection's effect, the summary and the problem line

    PreviewFn m_preview;
    ArchitectureProblemFn m_architectureProblem;
    QList<ExportPreviewLine> m_lines;
    QLineEdit* m_file;
    QDoubleSpinBox* m_minSpeedup;
    QLineEdit* m_architectures;
    QTableWidget* m_table;
    QLabel* m_summary;
    QLabel* m_problem;
    QDialogButtonBox* m_buttons;
    bool m_filling = false; // the table is being refilled: its item changes are not the user's
};

} // namespace kforge::views
