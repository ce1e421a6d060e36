#include "evaluation/BenchEvaluator.h"

namespace kforge::core {
namespace {

using nlohmann::json;

} // namespace

NodeStatus nodeStatusForBenchStatus(const std::string& benchStatus)
{
    if (benchStatus == "passed")
        return NodeStatus::Passed;
    if (benchStatus == "compiled-only")
        return NodeStatus::CompiledOnly;
    if (benchStatus == "compile-error" || benchStatus == "invalid-plan")
        return NodeStatus::FailedCompile; // the source or its plan cannot run at all
    if (benchStatus == "failed")
        return NodeStatus::FailedValidation;
    if (benchStatus == "timed-out")
        return NodeStatus::TimedOut;
    if (benchStatus == "no-sample")
        return NodeStatus::NoSample;
    return NodeStatus::Crashed; // crashed, worker-error, anything unknown
}

Evaluation evaluationFromBenchReport(const json& document)
{
    Evaluation evaluation;
    evaluation.report = EvaluationReport::fromJson(document); // the one reading of the report
    const EvaluationReport& report = evaluation.report;
    const std::string status = report.status.empty() ? std::string("worker-error") : report.status;
    evaluation.status = nodeStatusForBenchStatus(status);
    if (evaluation.status == NodeStatus::Passed) {
        if (report.timing) {
            evaluation.latency = report.timing->candidate;
            if (report.timing->eager)
                evaluation.eagerUs = report.timing->eager->medianUs;
        }
        if (!evaluation.latency) {
            // Passed without timing (a validate-only run): validated, but it cannot rank.
            evaluation.status = NodeStatus::ValidatedOnly;
        }
    } else if (evaluation.status != NodeStatus::CompiledOnly && evaluation.status != NodeStatus::ValidatedOnly) {
        evaluation.failureReason =
            status + ": " + (report.reason.line.empty() ? std::string("no reason given") : report.reason.line);
    }
    return evaluation;
}

BenchEvaluator::BenchEvaluator(std::filesystem::path projectDir, OperatorCard card, WorkerCommand worker,
                               std::filesystem::path compileCacheDir, std::chrono::milliseconds evaluateTimeout)
    : m_projectDir(std::move(projectDir)), m_card(std::move(card)), m_evaluateTimeout(evaluateTimeout),
      m_compiler(std::move(compileCacheDir)), m_worker(std::move(worker))
{
}

BenchEvaluator::~BenchEvaluator()
{
    m_worker.shutdown();
}

Result<Evaluation> BenchEvaluator::evaluate(const Candidate& candidate, const std::atomic<bool>& stop)
{
    if (stop.load())
        return makeError(ErrorCode::Cancelled, "stopped before the evaluation", "search");
    BenchRequest request;
    request.projectDir = m_projectDir;
    request.card = m_card;
    request.source = candidate.source;
    request.plan = candidate.launchPlan;
    request.evaluateTimeout = m_evaluateTimeout;
    request.stop = &stop;
    request.bestSpeedupByGpu = m_bestSpeedups;
    auto report = benchCandidate(request, m_compiler, m_worker);
    if (!report)
        return report.error();
    return evaluationFromBenchReport(report.value());
}

void BenchEvaluator::prepareAhead(const std::vector<Candidate>& likelyNext)
{
    const json info = gpu();
    if (!info.is_object() || !info.contains("architecture") || !info.at("architecture").is_string())
        return; // no GPU described yet (first candidate) or none at all: nothing to compile for
    std::vector<CompileJob> jobs;
    for (const Candidate& candidate : likelyNext) {
        CompileJob job;
        job.source = candidate.source;
        job.options.architecture = info.at("architecture").get<std::string>(); // as benchCandidate compiles
        job.options.timeout = m_evaluateTimeout;
        jobs.push_back(std::move(job));
    }
    m_compileAhead.submit(std::move(jobs));
}

nlohmann::json BenchEvaluator::gpu() const
{
    const json& hello = m_worker.hello();
    return hello.is_object() ? hello.value("info", json()) : json();
}

} // namespace kforge::core
