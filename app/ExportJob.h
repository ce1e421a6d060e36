#pragma once
// File > Export .cast: core::exportProject (the same code as `kforge export`) on a background
// std::thread. The outcome comes back once through a queued call.
//
// Contracts: create, call and destroy on the GUI thread; one export at a time; destruction joins
// the thread (an export ends after its compiles and sanitizer runs). See JobThread.

#include "cast/ExportDriver.h"

#include <QObject>
#include <QString>

#include "JobThread.h"

namespace kforge::app {

class ExportJob : public QObject {
    Q_OBJECT
public:
    explicit ExportJob(QObject* parent = nullptr);
    ~ExportJob() override;

    bool start(core::ExportRequest request);
    bool isRunning() const { return m_job.isRunning(); }

Q_SIGNALS:
    /// The package was written; `summary` is one line, `audit` one line per card plus the notes.
    void finished(const QString& file, const QString& summary, const QString& audit);
    void failed(const QString& error);

private:
    JobThread m_job{this};
};

} // namespace kforge::app
