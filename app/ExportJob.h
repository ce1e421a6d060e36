#pragma once
// File > Export .cast: core::exportProject (the same code as `kforge export`) on a background
// std::thread. The outcome comes back once through a queued call.
//
// Contracts: create, call and destroy on the GUI thread (asserted); one export at a time;
// destruction joins the thread (an export ends after its compiles and sanitizer runs).

#include "cast/ExportDriver.h"

#include <QObject>
#include <QString>

#include <memory>
#include <thread>

namespace kforge::app {

class ExportJob : public QObject {
    Q_OBJECT
public:
    explicit ExportJob(QObject* parent = nullptr);
    ~ExportJob() override;

    bool start(core::ExportRequest request);
    bool isRunning() const { return m_running; }

Q_SIGNALS:
    /// The package was written; `summary` is one line, `audit` one line per card plus the notes.
    void finished(const QString& file, const QString& summary, const QString& audit);
    void failed(const QString& error);

private:
    std::thread m_thread;
    bool m_running = false;
};

} // namespace kforge::app
