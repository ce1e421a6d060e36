#include "app/ExportJob.h"

#include <QStringList>
#include <QThread>

namespace kforge::app {

ExportJob::ExportJob(QObject* parent) : QObject(parent)
{
}

ExportJob::~ExportJob()
{
    m_stop = true; // m_job joins the thread next: let it end after the card in work
}

bool ExportJob::start(core::ExportRequest request)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_job.isRunning())
        return false;
    const QString file = QString::fromStdString(request.output.string());
    m_stop = false;
    m_shared.card = 0;
    m_shared.cards = 0;
    m_shared.checkingModel = false;
    m_shared.sanitizing = 0;
    // On the export's threads (a sanitizer gate's too): the newest values wait for the GUI thread.
    // Read under the delivery's lock, so that the last post of racing threads reads the last values.
    m_shared.changed = [this]() {
        m_updates.post([this](Progress& waiting) {
            waiting.card = m_shared.card;
            waiting.cards = m_shared.cards;
            waiting.checkingModel = m_shared.checkingModel;
            waiting.sanitizing = m_shared.sanitizing;
        });
    };
    m_progress = Progress{};
    request.progress = &m_shared;
    request.stop = &m_stop;
    return m_job.start(
        [request = std::move(request)]() { return core::exportProject(request); },
        [this, file](core::Result<core::ExportOutcome>& outcome) {
            m_updates.flush(); // the last progress before the end
            if (!outcome.ok()) {
                if (outcome.error().code == core::ErrorCode::Cancelled)
                    Q_EMIT cancelled();
                else
                    Q_EMIT failed(QString::fromStdString(outcome.error().toString()));
                return;
            }
            const core::CastPackage& package = outcome.value().verified;
            const core::ExportOutcome& done = outcome.value();
            const QString summary = tr("wrote %1: %2 custom, %3 fallback, %4 bytes in %5 s (sanitizer gate %6 s, "
                                       "in-model check %7 s)")
                                        .arg(file)
                                        .arg(package.header.customCount)
                                        .arg(package.header.fallbackCount)
                                        .arg(done.bytes)
                                        .arg(done.totalSeconds, 0, 'f', 1)
                                        .arg(done.sanitizerSeconds, 0, 'f', 1)
                                        .arg(done.inModelCheckSeconds, 0, 'f', 1);
            QStringList audit;
            if (!done.modelNote.empty())
                audit << QString::fromStdString(done.modelNote);
            for (const core::AuditEntry& a : package.audit)
                audit << QStringLiteral("%1  %2  %3  %4")
                             .arg(QString::fromStdString(a.cardId.substr(0, 8)), QString::fromStdString(a.op),
                                  QString::fromStdString(a.decision), QString::fromStdString(a.reason));
            for (const std::string& note : package.auditNotes)
                audit << QString::fromStdString(note);
            Q_EMIT finished(file, summary, audit.join(QLatin1Char('\n')));
        });
}

} // namespace kforge::app
