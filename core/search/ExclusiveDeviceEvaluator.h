#pragma once
// Timing isolation for a parallel search: evaluators that share a GPU (two workers asked for on one
// device, e.g. --gpus 0,0) take turns, so no two candidates are ever timed on one GPU at once.
// Each wraps its own evaluator and holds the device's lock for the whole evaluation.
//
// Thread: evaluate() from any thread (the lock serializes the GPU); prepareAhead() only touches the
// wrapped evaluator's compile cache and is not serialized.

#include "search/Evaluator.h"

#include <memory>
#include <mutex>

namespace kforge::core {

class ExclusiveDeviceEvaluator : public Evaluator {
public:
    ExclusiveDeviceEvaluator(Evaluator& inner, std::shared_ptr<std::mutex> device)
        : m_inner(inner), m_device(std::move(device))
    {
    }

    Result<Evaluation> evaluate(const Candidate& candidate, const std::atomic<bool>& stop) override
    {
        std::lock_guard lock(*m_device);
        return m_inner.evaluate(candidate, stop);
    }
    void prepareAhead(const std::vector<Candidate>& likelyNext) override { m_inner.prepareAhead(likelyNext); }

private:
    Evaluator& m_inner;
    std::shared_ptr<std::mutex> m_device;
};

} // namespace kforge::core
