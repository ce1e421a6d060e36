#pragma once
// The search's Evaluator over benchCandidate: compiles each candidate (NVRTC, cached) and
// validates and times it in a kforge-worker, mapping the bench report onto a node's status,
// latencies and failure reason. This is the worker boundary: the report is read here, once, into
// the EvaluationReport the node keeps (model/EvaluationReport.h). Torch-free.
//
// Thread: the thread that runs the search (one evaluation at a time; it owns its WorkerClient). It
// also owns a compile-ahead pool whose threads only fill the compile cache.

#include "evaluation/CandidateBench.h"
#include "kernel/CompileAhead.h"
#include "search/Evaluator.h"

#include <filesystem>

namespace kforge::core {

/// How a bench report's "status" maps onto a search node's status.
NodeStatus nodeStatusForBenchStatus(const std::string& benchStatus);

/// Builds the Evaluation of a bench report (docs/validation.md): the report read by
/// EvaluationReport::fromJson, latencies from its timing, the one-line reason of a failure.
Evaluation evaluationFromBenchReport(const nlohmann::json& report);

class BenchEvaluator : public Evaluator {
public:
    BenchEvaluator(std::filesystem::path projectDir, OperatorCard card, WorkerCommand worker,
                   std::filesystem::path compileCacheDir, std::chrono::milliseconds evaluateTimeout);
    ~BenchEvaluator() override;

    Result<Evaluation> evaluate(const Candidate& candidate, const std::atomic<bool>& stop) override;
    /// Compiles `likelyNext` on the compile-ahead pool for the worker's architecture (nothing before
    /// the worker has described its GPU).
    void prepareAhead(const std::vector<Candidate>& likelyNext) override;
    void noteBestSpeedups(const std::map<std::string, double>& byGpuModel) override { m_bestSpeedups = byGpuModel; }
    /// Compiles the pool has finished so far.
    std::size_t compiledAhead() const { return m_compileAhead.completed(); }

    /// The worker's GPU as it described itself (null before the first evaluation).
    nlohmann::json gpu() const;

private:
    std::filesystem::path m_projectDir;
    OperatorCard m_card;
    std::chrono::milliseconds m_evaluateTimeout;
    std::map<std::string, double> m_bestSpeedups; // noteBestSpeedups' last
    CachingCompiler m_compiler;
    CompileAhead m_compileAhead{m_compiler}; // after m_compiler: destroyed (joined) before it
    WorkerClient m_worker;
};

} // namespace kforge::core
