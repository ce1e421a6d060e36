#include "app/ManualEditJob.h"

#include "engine/EditBench.h"

#include <QThread>

namespace kforge::app {

namespace {

struct Outcome {
    std::shared_ptr<const core::SearchTree> tree;
    QString nodeId;
    core::EvaluationReport report;
    QString error;
};

Outcome run(const ManualEditRequest& request)
{
    Outcome outcome;
    core::EditBenchRequest bench;
    bench.projectDir = request.projectDir.toStdString();
    bench.card = request.card;
    bench.parentNodeId = request.parentNodeId.toStdString();
    bench.source = request.source.toStdString();
    bench.workerExecutable = request.workerPath.toStdString();
    bench.transformation = request.transformation.toStdString();
    if (!request.planJson.trimmed().isEmpty()) {
        try {
            bench.plan = nlohmann::json::parse(request.planJson.toStdString());
        } catch (const nlohmann::json::exception& e) {
            outcome.error = QStringLiteral("launch plan: not valid JSON: %1").arg(QString::fromUtf8(e.what()));
            return outcome;
        }
    }
    auto result = core::benchEditIntoTree(bench);
    if (!result) {
        outcome.error = QString::fromStdString(result.error().toString());
        return outcome;
    }
    outcome.tree = std::make_shared<const core::SearchTree>(std::move(result->tree));
    outcome.nodeId = QString::fromStdString(result->nodeId);
    outcome.report = outcome.tree->find(result->nodeId)->evaluation;
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
