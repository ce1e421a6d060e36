#include "ExportJob.h"

#include <QStringList>
#include <QThread>

namespace kforge::app {

ExportJob::ExportJob(QObject* parent) : QObject(parent) {}

ExportJob::~ExportJob()
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_thread.joinable())
        m_thread.join();
}

bool ExportJob::start(core::ExportRequest request)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_running)
        return false;
    if (m_thread.joinable())
        m_thread.join();
    m_running = true;
    m_thread = std::thread([this, request = std::move(request)]() {
        auto outcome = std::make_shared<core::Result<core::ExportOutcome>>(core::exportProject(request));
        const QString file = QString::fromStdString(request.output.string());
        QMetaObject::invokeMethod(
            this,
            [this, outcome, file]() {
                m_running = false;
                if (!outcome->ok()) {
                    Q_EMIT failed(QString::fromStdString(outcome->error().toString()));
                    return;
                }
                const core::CastPackage& package = outcome->value().verified;
                const QString summary = tr("wrote %1: %2 custom, %3 fallback, %4 bytes")
                                            .arg(file)
                                            .arg(package.header.customCount)
                                            .arg(package.header.fallbackCount)
                                            .arg(outcome->value().bytes);
                QStringList audit;
                for (const core::AuditEntry& a : package.audit)
                    audit << QStringLiteral("%1  %2  %3  %4")
                                 .arg(QString::fromStdString(a.cardId.substr(0, 8)), QString::fromStdString(a.op),
                                      QString::fromStdString(a.decision), QString::fromStdString(a.reason));
                for (const std::string& note : package.auditNotes)
                    audit << QString::fromStdString(note);
                Q_EMIT finished(file, summary, audit.join(QLatin1Char('\n')));
            },
            Qt::QueuedConnection);
    });
    return true;
}

} // namespace kforge::app
