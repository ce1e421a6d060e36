#include "engine/EditBench.h"

#include "evaluation/BenchEvaluator.h"
#include "evaluation/CandidateBench.h"
#include "kernel/CachingCompiler.h"
#include "project/ProjectStore.h"
#include "protocol/WorkerClient.h"
#include "protocol/WorkerPath.h"
#include "search/TreeStore.h"
#include "util/CacheDirectory.h"

#include <chrono>

namespace kforge::core {
namespace {

std::int64_t nowUnixMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

Result<EditBenchResult> benchEditIntoTree(const EditBenchRequest& request)
{
    BenchRequest bench;
    bench.projectDir = request.projectDir;
    bench.card = request.card;
    bench.source = request.source;
    bench.sourceName = "edit.cu";
    bench.plan = request.plan;
    // The tree is read, extended and saved: the project's writer lock is held throughout.
    auto writerLock = lockProjectForWriting(request.projectDir, "benchmark edit");
    if (!writerLock)
        return writerLock.error();
    const TreeStore store(TreeStore::defaultPath(request.projectDir, request.card.id));
    auto tree = store.load();
    if (!tree)
        return tree.error();
    if (!tree->find(request.parentNodeId))
        return makeError(ErrorCode::NotFound, "node " + request.parentNodeId + " is not in the card's tree");

    CachingCompiler compiler(userCacheDirectory() / "nvrtc");
    WorkerCommand command;
    command.executable = request.workerExecutable.empty() ? workerPath(std::nullopt) : request.workerExecutable;
    WorkerClient worker(command);
    auto report = benchCandidate(bench, compiler, worker);
    worker.shutdown();
    if (!report)
        return report.error();

    Candidate candidate;
    candidate.source = bench.source;
    candidate.launchPlan = report->value("plan", bench.plan.value_or(nlohmann::json::object()));
    Provenance provenance;
    provenance.kind = ProvenanceKind::ManualEdit;
    provenance.transformation = request.transformation;
    provenance.details = {{"edited_from", request.parentNodeId}, {"tool", request.tool}};
    auto id = tree->addChild(request.parentNodeId, candidate, provenance, nowUnixMs());
    if (!id)
        return id.error();
    if (auto recorded = tree->recordEvaluation(*id, evaluationFromBenchReport(report.value())); !recorded)
        return recorded.error();
    if (auto saved = store.save(tree.value()); !saved)
        return saved.error();
    return EditBenchResult{std::move(tree.value()), *id, std::move(report.value())};
}

} // namespace kforge::core
