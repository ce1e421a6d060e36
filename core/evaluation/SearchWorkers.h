#pragma once
// The evaluators of one card's search, shared by `kforge optimize` and the desktop app: one
// BenchEvaluator, with its own kforge-worker, per GPU slot (protocol/GpuSelection.h), the worker's
// CUDA_VISIBLE_DEVICES set to that GPU; slots on the same GPU take turns on it
// (search/ExclusiveDeviceEvaluator.h). No slot: one evaluator with the inherited environment.
//
// Thread: built and destroyed on one thread; the evaluators are then used as SearchRun uses them.

#include "evaluation/BenchEvaluator.h"
#include "protocol/GpuSelection.h"
#include "search/ExclusiveDeviceEvaluator.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace kforge::core {

class SearchWorkers {
public:
    SearchWorkers(const std::filesystem::path& projectDir, const OperatorCard& card, const WorkerCommand& worker,
                  const std::vector<GpuSlot>& gpus, const std::filesystem::path& compileCacheDir,
                  std::chrono::milliseconds evaluateTimeout);

    /// For SearchRun: one per slot (at least one).
    const std::vector<Evaluator*>& evaluators() const { return m_evaluators; }
    /// The first slot's evaluator (its gpu() describes the hardware to LLM prompts).
    BenchEvaluator& first() { return *m_bench.front(); }

private:
    std::vector<std::unique_ptr<BenchEvaluator>> m_bench;
    std::map<std::string, std::shared_ptr<std::mutex>> m_deviceLocks;
    std::vector<std::unique_ptr<ExclusiveDeviceEvaluator>> m_exclusive;
    std::vector<Evaluator*> m_evaluators;
};

} // namespace kforge::core
