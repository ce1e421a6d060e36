#include "ManualEditJob.h"

#include "eval/BenchEvaluator.h"
#include "eval/CandidateBench.h"
#include "project/ProjectStore.h"
#include "search/TreeStore.h"
#include "worker/WorkerClient.h"
#include "worker/WorkerPath.h"

#include <QThread>

#include <chrono>

namespace kforge::app {

namespace {

struct Outcome {
    std::shared_ptr<const core::SearchTree> tree;
    QString nodeId;
    core::EvaluationReport report;
    QString error;
};

std::int64_t nowUnixMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

Outcome run(const ManualEditRequest& request)
{
    Outcome outcome;
    core::BenchRequest bench;
    bench.projectDir = request.projectDir.toStdString();
    bench.card = request.card;
    bench.source = request.source.toStdString();
    bench.sourceName = "edit.cu";
    if (!request.planJson.trimmed().isEmpty()) {
        try {
            bench.plan = nlohmann::json::parse(request.planJson.toStdString());
        } catch (const nlohmann::json::exception& e) {
            outcome.error = QStringLiteral("launch plan: not valid JSON: %1").arg(QString::fromUtf8(e.what()));
            return outcome;
        }
    }
    // The tree is read, extended and saved: the project's writer lock is held throughout.
    auto writerLock = core::lockProjectForWriting(bench.projectDir, "benchmark edit");
    if (!writerLock) {
        outcome.error = QString::fromStdString(writerLock.error().toString());
        return outcome;
    }
    const core::TreeStore store(core::TreeStore::defaultPath(bench.projectDir, request.card.id));
    auto tree = store.load();
    if (!tree) {
        outcome.error = QString::fromStdString(tree.error().toString());
        return outcome;
    }
    if (!tree->find(request.parentNodeId.toStdString())) {
        outcome.error = QStringLiteral("node %1 is not in the card's tree").arg(request.parentNodeId);
        return outcome;
    }

    core::CachingCompiler compiler;
    core::WorkerCommand command;
    command.executable =
        request.workerPath.isEmpty() ? core::workerPath(std::nullopt) : request.workerPath.toStdString();
    core::WorkerClient worker(command);
    auto report = core::benchCandidate(bench, compiler, worker);
    worker.shutdown();
    if (!report) {
        outcome.error = QString::fromStdString(report.error().toString());
        return outcome;
    }

    core::Candidate candidate;
    candidate.source = bench.source;
    candidate.launchPlan = report->value("plan", bench.plan.value_or(nlohmann::json::object()));
    core::Provenance provenance;
    provenance.kind = core::ProvenanceKind::ManualEdit;
    provenance.transformation = request.transformation.toStdString();
    provenance.details = {{"edited_from", request.parentNodeId.toStdString()}, {"tool", "kernelforge editor"}};
    auto id = tree->addChild(request.parentNodeId.toStdString(), candidate, provenance, nowUnixMs());
    if (!id) {
        outcome.error = QString::fromStdString(id.error().toString());
        return outcome;
    }
    if (auto recorded = tree->recordEvaluation(*id, core::evaluationFromBenchReport(report.value())); !recorded) {
        outcome.error = QString::fromStdString(recorded.error().toString());
        return outcome;
    }
    if (auto saved = store.save(tree.value()); !saved) {
        outcome.error = QString::fromStdString(saved.error().toString());
        return outcome;
    }
    outcome.tree = std::make_shared<const core::SearchTree>(std::move(tree.value()));
    outcome.nodeId = QString::fromStdString(*id);
    outcome.report = outcome.tree->find(*id)->evaluation;
    return outcome;
}

} // namespace

ManualEditJob::ManualEditJob(QObject* parent) : QObject(parent)
{
}

ManualEditJob::~ManualEditJob() = default;

bool ManualEditJob::start(ManualEditRequest request)
{
    Q_ASSERT(QThread::currentThread() == thread());
    return m_job.start([request = std::move(request)]() { return run(request); },
                       [this](Outcome& outcome) {
                           if (outcome.error.isEmpty())
                               Q_EMIT finished(outcome.tree, outcome.nodeId, outcome.report);
                           else
                               Q_EMIT failed(outcome.error);
                       });
}

} // namespace kforge::app
