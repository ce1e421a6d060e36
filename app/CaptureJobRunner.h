#pragma once
// Runs core::runCapture on a background thread (JobThread) so the GUI thread never blocks on a capture.
//
// Contracts:
// - Thread: create, call and destroy on the GUI thread (asserted). Signals are emitted on that
//   thread; the capture result crosses threads once, as an immutable value, through a queued call.
// - One capture at a time: start() refuses while one runs.
// - Progress: a timer polls the capture's atomics every kPollIntervalMs and emits progressChanged
//   while they change; nothing is emitted from the capture thread itself.
// - Cancellation: cancel() sets the stop flag, which runCapture polls between phases and cards; the
//   job then ends with failed(..., cancelled = true) and leaves no project behind.
// - Destruction while a capture runs requests stop and joins the thread: it blocks only until the
//   capture reaches its next cancellation point; no signal is emitted after destruction.

#include "app/JobThread.h"
#include "capture/CaptureJob.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>

namespace kforge::app {

class CaptureJobRunner : public QObject {
    Q_OBJECT
public:
    static constexpr int kPollIntervalMs = 100;

    explicit CaptureJobRunner(QObject* parent = nullptr);
    ~CaptureJobRunner() override;

    /// Starts a capture; false (and nothing started) when one is already running.
    bool start(core::CaptureOptions options);
    bool isRunning() const { return m_state != nullptr; }
    /// Requests the running capture to stop; no effect when none runs.
    void cancel();
    bool isCancelling() const;

Q_SIGNALS:
    void started();
    /// `phase` is core::capturePhaseName; `total` is 0 while a phase has no countable items.
    void progressChanged(const QString& phase, int done, int total);
    /// The capture wrote `outputDir`; `report` holds the project it wrote.
    void succeeded(std::shared_ptr<const core::CaptureReport> report, const QString& outputDir);
    /// One line naming what went wrong; `cancelled` when cancel() ended it.
    void failed(const QString& error, bool cancelled);

private:
    struct JobState;
    void pollProgress();
    void finish(core::Result<core::CaptureReport>& result);

    std::shared_ptr<JobState> m_state; // shared with the capture thread; null when idle
    QTimer m_pollTimer;
    QString m_outputDir;
    QString m_lastPhase;
    int m_lastDone = -1;
    int m_lastTotal = -1;
    JobThread m_job{this}; // last: destroyed (joined) first
};

} // namespace kforge::app
