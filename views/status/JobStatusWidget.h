#pragma once
// The status-bar job indicator: a label naming the running job and its phase, a progress bar and a
// Cancel button. The bar and the button are visible only while a job runs.
//
// Thread: GUI thread only. Shows what it is told; the owner of the job wires cancelRequested.

#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;

namespace kforge::views {

class JobStatusWidget : public QWidget {
    Q_OBJECT
public:
    explicit JobStatusWidget(QWidget* parent = nullptr);

    void beginJob(const QString& title);
    /// `total` 0 shows a busy indicator (the phase has nothing to count).
    void setProgress(const QString& phase, int done, int total);
    /// Disables Cancel and says the job is stopping.
    void setCancelling();
    /// Hides the bar and the button; `message` stays in the label (e.g. how the job ended, with
    /// what the user should know about the result) and its tooltip, until the next job.
    void endJob(const QString& message);

    bool isJobVisible() const;
    QString labelText() const;

Q_SIGNALS:
    void cancelRequested();

private:
    QString m_title;
    QLabel* m_label;
    QProgressBar* m_progress;
    QPushButton* m_cancel;
};

} // namespace kforge::views
