#pragma once
// Mean / sum over H and W of a channels-last (NHWC) [N, C, H, W] float32/float16/bfloat16 tensor,
// one output per (n, c): aten::adaptive_avg_pool2d to [1, 1] (ResNet-50's head in channels-last
// fp16), aten::mean.dim and aten::sum.dim_IntList over dims {2, 3} (dtype None, any keepdim). The
// output holds N x C values in memory order [n][c]. fp32 accumulation.
//
// The spatial positions of one channel are C elements apart, so rows are not contiguous and
// ReduceFamily's row kernels do not apply: here a block owns CV vectors of V consecutive channels
// of one image, its CV x S threads walk the H*W positions S apart (consecutive threads load
// consecutive channels: coalesced), and the S partial sums of each channel are added in a fixed
// order through shared memory. Parameters (docs/builtin-proposer.md): vector_width V (divides C),
// channel_vectors CV, hw_split S (powers of two, 32 <= CV * S <= 1024 threads). Thread: see
// KernelFamily.

#include "builtin_proposer/KernelFamily.h"

#include <memory>

namespace kforge::core {

class ChannelsLastPoolFamily final : public KnobFamily {
public:
    /// Whether `card` is a reduce-family op (ReduceFamily::coversOp) on a channels-last 4-D input:
    /// the cards this family, not ReduceFamily, is asked to cover.
    static bool claims(const OperatorCard& card);
    static Result<std::unique_ptr<ChannelsLastPoolFamily>> create(const OperatorCard& card);

    std::string name() const override { return "channels_last_pool"; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;

private:
    ChannelsLastPoolFamily() = default;
    std::vector<Knob> knobs() const override;
    Result<void> check(const nlohmann::json& params) const override;

    std::string m_op; // "adaptive_avg_pool2d", "mean", "sum"
    std::string m_inDtype, m_outDtype;
    std::int64_t m_batch = 0, m_channels = 0, m_spatial = 0;
};

} // namespace kforge::core
