#pragma once
// File > Export .cast: core::exportProject (the same code as `kforge export`) on a background
// std::thread. The outcome comes back once through a queued call; progress() can be polled while
// it runs, and stop() ends it after the card in work without writing anything.
//
// Contracts: create, call and destroy on the GUI thread; one export at a time; destruction stops a
// running export and joins its thread (it ends after the card in work and writes nothing). See
// JobThread.

#include "engine/ExportDriver.h"

#include <QObject>
#include <QString>

#include "app/JobThread.h"

#include <atomic>

namespace kforge::app {

class ExportJob : public QObject {
    Q_OBJECT
public:
    explicit ExportJob(QObject* parent = nullptr);
    ~ExportJob() override;

    /// The request's progress and stop fields are this job's own. False while an export runs.
    bool start(core::ExportRequest request);
    bool isRunning() const { return m_job.isRunning(); }
    /// Asks the running export to stop after the card in work; it then emits cancelled().
    void stop() { m_stop = true; }
    /// Where the running (or last) export is.
    const core::ExportProgress& progress() const { return m_progress; }

Q_SIGNALS:
    /// The package was written; `summary` is one line (counts, size and where the time went),
    /// `audit` one line per card plus the notes.
    void finished(const QString& file, const QString& summary, const QString& audit);
    void failed(const QString& error);
    /// Stopped on request: nothing was written.
    void cancelled();

private:
    // Declared before m_job, so that the thread (joined when m_job is destroyed) never outlives them.
    core::ExportProgress m_progress;
    std::atomic<bool> m_stop{false};
    JobThread m_job{this};
};

} // namespace kforge::app
