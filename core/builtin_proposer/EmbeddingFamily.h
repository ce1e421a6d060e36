#pragma once
// aten::embedding forward: rows of a contiguous float32/float16/bfloat16 weight [V, D] gathered by
// contiguous int64/int32 indices of any shape into a contiguous output [*indices.shape, D]
// (padding_idx, scale_grad_by_freq and sparse only affect the backward). A group of threads copies
// one row, vectorized along D. An index outside [0, V) is undefined for the candidate (eager raises a
// device-side assert): the group skips the row and writes nothing, and never reads outside the weight.
// Parameters (docs/builtin-proposer.md): threads, rows_per_block (threads / rows_per_block threads
// per row), vector_width (divides D, at most 16 bytes). Thread: see KernelFamily.

#include "builtin_proposer/KernelFamily.h"

#include <memory>

namespace kforge::core {

class EmbeddingFamily final : public KnobFamily {
public:
    static bool coversOp(const std::string& qualifiedOp) { return qualifiedOp == "aten::embedding"; }
    static Result<std::unique_ptr<EmbeddingFamily>> create(const OperatorCard& card);

    std::string name() const override { return "embedding"; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;

private:
    EmbeddingFamily() = default;
    std::vector<Knob> knobs() const override;
    Result<void> check(const nlohmann::json& params) const override;

    std::string m_dtype, m_indexDtype;
    std::int64_t m_vocab = 0, m_dim = 0, m_indices = 0;
};

} // namespace kforge::core
