#pragma once
// Sum / mean over the trailing dims of a contiguous float32/float16/bfloat16 tensor, one output per
// row: aten::adaptive_avg_pool2d to [1, 1], aten::mean.dim and aten::sum.dim_IntList (dtype None,
// any keepdim). fp32 accumulation. Parameters (docs/builtin-proposer.md): threads, warp_per_row,
// lanes_per_row, vector_width. Thread: see KernelFamily.

#include "builtin_proposer/KernelFamily.h"

#include <memory>

namespace kforge::core {

class ReduceFamily final : public KnobFamily {
public:
    static bool coversOp(const std::string& qualifiedOp);
    /// The kernel-level name of a covered reduction card ("adaptive_avg_pool2d", "mean", "sum")
    /// once the arguments every reduce family needs are checked: output_size [1, 1] for
    /// adaptive_avg_pool2d, dtype=None for mean and sum. Shared with ChannelsLastPoolFamily.
    static Result<std::string> reductionName(const OperatorCard& card);
    static Result<std::unique_ptr<ReduceFamily>> create(const OperatorCard& card);

    std::string name() const override { return "reduce"; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;

private:
    ReduceFamily() = default;
    std::vector<Knob> knobs() const override;
    Result<void> check(const nlohmann::json& params) const override;

    std::string m_op; // "adaptive_avg_pool2d", "mean", "sum"
    std::string m_inDtype, m_outDtype;
    std::int64_t m_rows = 0;
    std::int64_t m_rowLength = 0;
};

} // namespace kforge::core
