#include "app/OptimizeJob.h"

#include "engine/OptimizeDriver.h"
#include "model/NodeRanking.h"
#include "model/SearchTree.h"

#include <QThread>

#include <chrono>

namespace kforge::app {

OptimizeJob::OptimizeJob(QObject* parent) : QObject(parent)
{
}

OptimizeJob::~OptimizeJob()
{
    Q_ASSERT(QThread::currentThread() == thread());
    stop(); // m_job (declared last) then joins the run
}

namespace {

struct RunOutcome {
    QStringList lines;
    QString error;
    bool stopped = false;
};

QString fromStd(const std::string& text)
{
    return QString::fromStdString(text);
}

// "<card>: 50 nodes, iteration-limit, best 1.65x", with what else the card's search says.
QString outcomeLine(const core::CardOutcome& card)
{
    if (!card.error.empty())
        return QStringLiteral("%1: failed: %2").arg(fromStd(card.label), fromStd(card.error));
    // The best node's speedup as every tool shows it (model/NodeRanking.h).
    const std::optional<double> speedup = card.best ? core::nodeSpeedup(*card.best) : std::nullopt;
    QString line = QStringLiteral("%1: %2 nodes, %3, best %4")
                       .arg(fromStd(card.label))
                       .arg(card.nodes)
                       .arg(QString::fromLatin1(core::stopReasonName(card.reason)))
                       .arg(speedup ? QString::number(*speedup, 'f', 2) + QStringLiteral("x") : QStringLiteral("-"));
    if (!card.failure.empty())
        line += QStringLiteral(", failed: %1 (a new search retries it)").arg(fromStd(card.failure));
    else if (card.reason == core::StopReason::NothingToRevise && !card.note.empty())
        line += QStringLiteral(" (%1)").arg(fromStd(card.note));
    if (!card.candidatesPerWorker.empty()) {
        QStringList perWorker;
        for (int count : card.candidatesPerWorker)
            perWorker << QString::number(count);
        line += QStringLiteral(" (candidates per worker: %1)").arg(perWorker.join(QStringLiteral(", ")));
    }
    return line;
}

} // namespace

bool OptimizeJob::start(OptimizeJobRequest request)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_job.isRunning())
        return false;
    m_stopRequested = false;
    m_progress = Progress{};
    m_progress.cardCount = static_cast<int>(request.cards.size());
    return m_job.start(
        [this, request = std::move(request)]() {
            RunOutcome out;
            QString gpuWarning; // shown with every progress update of the run
            core::OptimizeRequest job;
            job.projectDir = request.projectDir.toStdString();
            job.cards = request.cards;
            job.budget = request.budget;
            job.seed = request.seed;
            job.savedTrees = core::SavedTreeMode::Resume;
            job.evaluateTimeout = std::chrono::milliseconds(static_cast<long long>(request.evaluateTimeoutS * 1000));
            job.llmClient = request.llmClient;
            job.makeProposer = request.makeProposer;
            job.makeEvaluator = request.makeEvaluator;
            if (!request.makeEvaluator) {
                // One worker per GPU, as kforge optimize does (docs/search.md, "Parallel search"); a
                // GPU busy with another process is reported, not silently measured.
                const QString spec = request.gpus.trimmed();
                std::vector<std::string> busy;
                auto gpus = core::OptimizeDriver::resolveGpus(
                    spec.isEmpty() ? std::nullopt : std::optional(spec.toStdString()), busy);
                if (!gpus) {
                    out.error = fromStd(gpus.error().toString());
                    return out;
                }
                job.gpus = gpus.value();
                QStringList warnings;
                for (const std::string& warning : busy)
                    warnings << fromStd(warning);
                if (!warnings.isEmpty()) {
                    out.lines << warnings;
                    gpuWarning = warnings.join(QStringLiteral("; "));
                }
            }
            core::OptimizeDriver driver(std::move(job));
            {
                std::lock_guard lock(m_mutex);
                m_driver = &driver;
            }
            if (m_stopRequested)
                driver.requestStop(); // a stop that came before m_driver was set
            core::OptimizeEvents events;
            events.note = [&out](const std::string& line) { out.lines << fromStd(line); };
            events.cardFinished = [&out](const core::CardOutcome& card) { out.lines << outcomeLine(card); };
            // On the search thread: the snapshot (already a copy) and the progress wait for the GUI
            // thread, replacing older ones that have not been delivered yet.
            events.treeSaved = [this](const std::string& cardId, std::shared_ptr<const core::SearchTree> tree) {
                std::shared_ptr<const core::SearchTree> replaced; // freed outside the lock
                m_updates.post([&](Updates& waiting) {
                    std::shared_ptr<const core::SearchTree>& slot = waiting.trees[cardId];
                    replaced = std::move(slot);
                    slot = std::move(tree);
                });
            };
            events.progressChanged = [this, &gpuWarning](const core::OptimizeProgress& now) {
                Progress p;
                p.cardId = fromStd(now.cardId);
                p.cardIndex = now.cardIndex;
                p.cardCount = now.cardCount;
                p.iteration = now.iteration;
                p.bestSpeedup = now.bestSpeedup;
                p.gpuWarning = gpuWarning;
                m_updates.post([&](Updates& waiting) { waiting.progress = std::move(p); });
            };
            auto summary = driver.run(events);
            {
                std::lock_guard lock(m_mutex);
                m_driver = nullptr;
            }
            if (!summary) {
                out.error = fromStd(summary.error().toString());
                return out;
            }
            out.stopped = summary->stopped;
            if (const std::size_t failed = summary->failedCount(); failed > 0) {
                // The same outcome as kforge optimize's: the run failed, saying which cards and why.
                QStringList text = out.lines;
                text << QStringLiteral("%1 of %2 cards failed: %3")
                            .arg(failed)
                            .arg(request.cards.size())
                            .arg(fromStd(summary->failureList()));
                out.error = text.join(QLatin1Char('\n'));
            }
            return out;
        },
        [this](RunOutcome& out) {
            m_updates.flush(); // the last snapshots and progress before the end
            if (out.error.isEmpty())
                Q_EMIT finished(out.lines.join(QLatin1Char('\n')), out.stopped);
            else
                Q_EMIT failed(out.error);
        });
}

void OptimizeJob::stop()
{
    m_stopRequested = true;
    std::lock_guard lock(m_mutex);
    if (m_driver)
        m_driver->requestStop();
}

void OptimizeJob::deliverUpdates(Updates& updates)
{
    for (auto& [cardId, tree] : updates.trees)
        Q_EMIT treeSaved(fromStd(cardId), std::move(tree));
    if (updates.progress) {
        m_progress = std::move(*updates.progress);
        Q_EMIT progressChanged(m_progress);
    }
}

} // namespace kforge::app
