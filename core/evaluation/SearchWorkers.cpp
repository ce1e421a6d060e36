#include "evaluation/SearchWorkers.h"

namespace kforge::core {

SearchWorkers::SearchWorkers(const std::filesystem::path& projectDir, const OperatorCard& card,
                             const WorkerCommand& worker, const std::vector<GpuSlot>& gpus,
                             const std::filesystem::path& compileCacheDir, std::chrono::milliseconds evaluateTimeout)
{
    const std::size_t count = std::max<std::size_t>(1, gpus.size());
    for (std::size_t i = 0; i < count; ++i) {
        WorkerCommand command = worker;
        if (!gpus.empty())
            command.environment.emplace_back("CUDA_VISIBLE_DEVICES", gpus[i].visibleId);
        m_bench.push_back(
            std::make_unique<BenchEvaluator>(projectDir, card, command, compileCacheDir, evaluateTimeout));
        if (count == 1) {
            m_evaluators.push_back(m_bench.back().get());
            continue;
        }
        std::shared_ptr<std::mutex>& lock = m_deviceLocks[gpus[i].visibleId];
        if (!lock)
            lock = std::make_shared<std::mutex>();
        m_exclusive.push_back(std::make_unique<ExclusiveDeviceEvaluator>(*m_bench.back(), lock));
        m_evaluators.push_back(m_exclusive.back().get());
    }
}

} // namespace kforge::core
