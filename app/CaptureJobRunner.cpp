#include "app/CaptureJobRunner.h"

#include <QThread>

#include <exception>

namespace kforge::app {

// What the capture thread shares with the GUI thread: atomics only.
struct CaptureJobRunner::JobState {
    core::CaptureProgress progress;
    std::atomic<bool> stop{false};
};

CaptureJobRunner::CaptureJobRunner(QObject* parent) : QObject(parent)
{
    m_pollTimer.setInterval(kPollIntervalMs);
    connect(&m_pollTimer, &QTimer::timeout, this, &CaptureJobRunner::pollProgress);
}

CaptureJobRunner::~CaptureJobRunner()
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_state)
        m_state->stop = true;
    // m_job joins the thread; its queued delivery targets this object and is discarded with it.
}

bool CaptureJobRunner::start(core::CaptureOptions options)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_state)
        return false;
    m_state = std::make_shared<JobState>();
    m_outputDir = QString::fromStdString(options.outputDir.string());
    m_lastPhase.clear();
    m_lastDone = m_lastTotal = -1;

    std::shared_ptr<JobState> state = m_state;
    m_job.start(
        [state, options = std::move(options)]() -> core::Result<core::CaptureReport> {
            try {
                return core::runCapture(options, &state->progress, &state->stop);
            } catch (const std::exception& e) {
                // runCapture reports errors as values; an escaping exception is a bug, still one line.
                return core::makeError(core::ErrorCode::Internal, std::string("capture failed: ") + e.what());
            } catch (...) {
                return core::makeError(core::ErrorCode::Internal, "capture failed with an unknown exception");
            }
        },
        [this](core::Result<core::CaptureReport>& result) { finish(result); });
    m_pollTimer.start();
    Q_EMIT started();
    pollProgress();
    return true;
}

void CaptureJobRunner::cancel()
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_state)
        m_state->stop = true;
}

bool CaptureJobRunner::isCancelling() const
{
    return m_state && m_state->stop.load();
}

void CaptureJobRunner::pollProgress()
{
    if (!m_state)
        return;
    const QString phase = QString::fromUtf8(core::capturePhaseName(m_state->progress.phase.load()));
    const int done = m_state->progress.done.load();
    const int total = m_state->progress.total.load();
    if (phase == m_lastPhase && done == m_lastDone && total == m_lastTotal)
        return;
    m_lastPhase = phase;
    m_lastDone = done;
    m_lastTotal = total;
    Q_EMIT progressChanged(phase, done, total);
}

void CaptureJobRunner::finish(core::Result<core::CaptureReport>& result)
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_pollTimer.stop();
    m_state.reset();
    const QString outputDir = m_outputDir;
    if (result.ok()) {
        auto report = std::make_shared<const core::CaptureReport>(std::move(result).value());
        Q_EMIT succeeded(std::move(report), outputDir);
        return;
    }
    const core::Error& error = result.error();
    Q_EMIT failed(QString::fromStdString(error.toString()), error.code == core::ErrorCode::Cancelled);
}

} // namespace kforge::app
