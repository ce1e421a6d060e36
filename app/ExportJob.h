#pragma once
// File > Export .cast: core::exportProject (the same code as `kforge export`) on a background
// std::thread. The outcome comes back once through a queued call; where the export is comes as
// progressChanged() signals (core::ExportProgress::changed, coalesced through CoalescedDelivery: the
// newest values, about ten times a second at most), and stop() ends it after the card in work
// without writing anything. Everything that reads the model (its hash against the captured one
// included) happens in core::exportProject on the job's thread, never on the GUI thread.
//
// Contracts: create, call and destroy on the GUI thread, where the signals are emitted; one export
// at a time; the last progress made before the end is delivered before finished(), failed() or
// cancelled(); destruction stops a running export and joins its thread (it ends after the card in
// work and writes nothing). See JobThread.

#include "engine/ExportDriver.h"

#include <QObject>
#include <QString>

#include "app/CoalescedDelivery.h"
#include "app/JobThread.h"

#include <atomic>

namespace kforge::app {

class ExportJob : public QObject {
    Q_OBJECT
public:
    /// A copy of core::ExportProgress's values.
    struct Progress {
        int card = 0;               // cards looked at so far (the one in work included)
        int cards = 0;              // cards of the project; 0 before the project is read
        bool checkingModel = false; // the in-model check runs
        int sanitizing = 0;         // kernels whose sanitizer gate runs now
    };

    explicit ExportJob(QObject* parent = nullptr);
    ~ExportJob() override;

    /// The request's progress and stop fields are this job's own. False while an export runs.
    bool start(core::ExportRequest request);
    bool isRunning() const { return m_job.isRunning(); }
    /// Asks the running export to stop after the card in work; it then emits cancelled().
    void stop() { m_stop = true; }
    /// The progress last delivered by progressChanged() (reset by start()).
    const Progress& progress() const { return m_progress; }

Q_SIGNALS:
    /// Where the running export is (the newest values; older undelivered ones are dropped).
    void progressChanged(const kforge::app::ExportJob::Progress& progress);
    /// The package was written; `summary` is one line (counts, size and where the time went),
    /// `audit` one line per card plus the notes (first, why the model is not in it when it is not).
    void finished(const QString& file, const QString& summary, const QString& audit);
    void failed(const QString& error);
    /// Stopped on request: nothing was written.
    void cancelled();

private:
    // Declared before m_job, so that the thread (joined when m_job is destroyed) never outlives them.
    core::ExportProgress m_shared; // written by the export's threads
    std::atomic<bool> m_stop{false};
    Progress m_progress; // GUI thread: the last delivered
    CoalescedDelivery<Progress> m_updates{this, [this](Progress& progress) {
                                              m_progress = progress;
                                              Q_EMIT progressChanged(m_progress);
                                          }};
    JobThread m_job{this};
};

} // namespace kforge::app
