#include "OptimizeJob.h"

#include "eval/SearchWorkers.h"
#include "project/ProjectStore.h"
#include "search/SearchRun.h"
#include "search/TreeStore.h"
#include "search/builtin/BuiltinProposer.h"
#include "search/llm/LlmProposer.h"
#include "util/CacheDirectory.h"
#include "worker/WorkerPath.h"

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

} // namespace

bool OptimizeJob::start(OptimizeJobRequest request)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_job.isRunning())
        return false;
    m_stopRequested = false;
    {
        std::lock_guard lock(m_mutex);
        m_progress = Progress{};
        m_progress.cardCount = static_cast<int>(request.cards.size());
    }
    return m_job.start(
        [this, request = std::move(request)]() {
            RunOutcome out;
            QStringList& lines = out.lines;
            QString& error = out.error;
            // Cards whose run failed (an error, or nothing but a failed root): "<card> (<why>)".
            QStringList failures;
            const std::filesystem::path projectDir = request.projectDir.toStdString();
            // One writer per project (docs/project-format.md): a held lock fails the job with its holder.
            auto writerLock = core::lockProjectForWriting(projectDir, "optimize");
            if (!writerLock) {
                out.error = QString::fromStdString(writerLock.error().toString());
                return out;
            }
            // One worker per GPU, as kforge optimize does (docs/search.md, "Parallel search"); a GPU
            // busy with another process is reported, not silently measured.
            std::vector<core::GpuSlot> gpus;
            if (!request.makeEvaluator) {
                const QString spec = request.gpus.trimmed();
                auto chosen = core::chooseGpus(spec.isEmpty() ? std::nullopt : std::optional(spec.toStdString()),
                                               core::visibleGpus());
                if (!chosen) {
                    out.error = QString::fromStdString(chosen.error().toString());
                    return out;
                }
                gpus = chosen.value();
                QStringList warnings;
                for (const std::string& busy : core::gpuBusyWarnings(gpus))
                    warnings << QString::fromStdString(busy);
                if (!warnings.isEmpty()) {
                    lines << warnings;
                    std::lock_guard lock(m_mutex);
                    m_progress.gpuWarning = warnings.join(QStringLiteral("; "));
                }
            }
            for (std::size_t i = 0; i < request.cards.size() && !m_stopRequested; ++i) {
                const core::OperatorCard& card = request.cards[i];
                const core::TreeStore store(core::TreeStore::defaultPath(projectDir, card.id));
                auto tree = store.openForRun(card.id, request.seed, /*resume=*/true);
                if (!tree) {
                    error = QString::fromStdString(tree.error().toString());
                    break;
                }
                const QString name = QString::fromStdString(card.id.substr(0, 8) + " " + card.qualifiedName());
                if (tree->empty() && !tree->rootAttempts().empty()) {
                    const core::SearchNode& last = tree->rootAttempts().back();
                    lines << QStringLiteral("%1: retrying the root (the last attempt was %2: %3)")
                                 .arg(name, QString::fromLatin1(core::nodeStatusName(last.status)),
                                      QString::fromStdString(last.failureReason));
                }
                std::unique_ptr<core::Evaluator> evaluator;
                std::unique_ptr<core::SearchWorkers> workers;
                core::BenchEvaluator* bench = nullptr;
                std::vector<core::Evaluator*> evaluators;
                if (request.makeEvaluator) {
                    evaluator = request.makeEvaluator(card);
                    evaluators.push_back(evaluator.get());
                } else {
                    core::WorkerCommand worker;
                    worker.executable = core::workerPath(std::nullopt);
                    workers = std::make_unique<core::SearchWorkers>(
                        projectDir, card, worker, gpus, core::userCacheDirectory() / "nvrtc",
                        std::chrono::milliseconds(static_cast<long long>(request.evaluateTimeoutS * 1000)));
                    bench = &workers->first();
                    evaluators = workers->evaluators();
                }
                std::unique_ptr<core::Proposer> proposer;
                if (request.makeProposer) {
                    proposer = request.makeProposer(card);
                } else if (request.llmClient) {
                    // The worker describes its GPU after its first evaluation; the prompt asks again.
                    core::LlmProposerOptions options;
                    if (bench)
                        options.hardwareSource = [bench] { return bench->gpu(); };
                    proposer = std::make_unique<core::LlmProposer>(card, request.llmClient,
                                                                   bench ? bench->gpu() : nlohmann::json(), options);
                } else {
                    proposer = std::make_unique<core::BuiltinProposer>(card);
                }
                core::SearchRun run(std::move(tree.value()), store, *proposer, evaluators,
                                    core::SearchRunOptions{request.budget, {}, {}, {}});
                {
                    std::lock_guard lock(m_mutex);
                    m_active = &run;
                    m_progress.cardId = QString::fromStdString(card.id);
                    m_progress.cardIndex = static_cast<int>(i);
                }
                if (m_stopRequested)
                    run.requestStop(); // a stop that came between the check above and m_active
                auto outcome = run.run();
                {
                    std::lock_guard lock(m_mutex);
                    m_active = nullptr;
                }
                if (!outcome) {
                    const QString why = QString::fromStdString(outcome.error().toString());
                    lines << QStringLiteral("%1: failed: %2").arg(name, why);
                    failures << QStringLiteral("%1 (%2)").arg(name, why);
                    continue;
                }
                // The outcome's best is core::bestNode's, as everywhere else.
                const std::optional<double> best = outcome->bestSpeedup;
                lines << QStringLiteral("%1: %2 nodes, %3, best %4")
                             .arg(name)
                             .arg(run.tree().nodes().size())
                             .arg(QString::fromLatin1(core::stopReasonName(outcome->reason)))
                             .arg(best ? QString::number(*best, 'f', 2) + QStringLiteral("x") : QStringLiteral("-"));
                if (!outcome->failure.empty()) {
                    const QString why = QString::fromStdString(outcome->failure);
                    lines.last() += QStringLiteral(", failed: %1 (a new search retries it)").arg(why);
                    failures << QStringLiteral("%1 (%2)").arg(name, why);
                } else if (outcome->reason == core::StopReason::NothingToRevise && !outcome->note.empty()) {
                    lines.last() += QStringLiteral(" (%1)").arg(QString::fromStdString(outcome->note));
                }
                if (evaluators.size() > 1) {
                    QStringList perGpu;
                    const std::vector<int> counts = run.evaluationsPerEvaluator();
                    for (std::size_t k = 0; k < counts.size() && k < gpus.size(); ++k)
                        perGpu << QStringLiteral("GPU %1: %2").arg(gpus[k].ordinal).arg(counts[k]);
                    lines.last() +=
                        QStringLiteral(" (candidates per worker: %1)").arg(perGpu.join(QStringLiteral(", ")));
                }
            }
            out.stopped = m_stopRequested;
            if (error.isEmpty() && !failures.isEmpty()) {
                // The same outcome as kforge optimize's: the run failed, saying which cards and why.
                QStringList text = lines;
                text << QStringLiteral("%1 of %2 cards failed: %3")
                            .arg(failures.size())
                            .arg(request.cards.size())
                            .arg(failures.join(QStringLiteral("; ")));
                error = text.join(QLatin1Char('\n'));
            }
            return out;
        },
        [this](RunOutcome& out) {
            {
                std::lock_guard lock(m_mutex);
                m_progress.cardId.clear();
            }
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
    if (m_active)
        m_active->requestStop();
}

OptimizeJob::Progress OptimizeJob::progress() const
{
    std::lock_guard lock(m_mutex);
    Progress p = m_progress;
    if (m_active) {
        p.iteration = m_active->iteration();
        p.bestSpeedup = m_active->bestSpeedup();
    }
    return p;
}

} // namespace kforge::app
