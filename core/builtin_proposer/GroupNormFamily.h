#pragma once
// group_norm of a float32/float16/bfloat16 tensor [N, C, *] (aten::group_norm), contiguous NCHW or a
// channels-last [N, C, H, W] (output NCHW, as eager's CUDA kernel gives it, or channels-last),
// optional per-channel weight/bias [C], fp32 Welford statistics. Parameters (docs/builtin-proposer.md):
// threads, vector_width (NCHW: it divides the spatial size, so a vector never straddles channels;
// channels-last: it divides the channels per group, so a vector never straddles groups),
// split (1: one block per (n, group); S > 1: S blocks per group write Welford partials to a scratch
// buffer, a second kernel merges them and normalizes). Thread: see KernelFamily.

#include "builtin_proposer/KernelFamily.h"

#include <memory>

namespace kforge::core {

class GroupNormFamily final : public KnobFamily {
public:
    static bool coversOp(const std::string& qualifiedOp) { return qualifiedOp == "aten::group_norm"; }
    static Result<std::unique_ptr<GroupNormFamily>> create(const OperatorCard& card);

    std::string name() const override { return "group_norm"; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;

private:
    GroupNormFamily() = default;
    std::vector<Knob> knobs() const override;
    Result<void> check(const nlohmann::json& params) const override;
    /// What a vector must not straddle: the spatial size (NCHW) or a group's channels (channels-last).
    std::int64_t vectorUnit() const { return m_inChannelsLast ? m_channels / m_groups : m_spatial; }
    // The device functions welfordRange and normalizeRange for each input layout.
    std::string nchwSource(bool hasW, bool hasB) const;
    std::string channelsLastSource(bool hasW, bool hasB) const;

    std::string m_inDtype, m_outDtype, m_weightDtype, m_biasDtype;
    std::int64_t m_batch = 0, m_channels = 0, m_groups = 0, m_spatial = 0;
    double m_eps = 0;
    bool m_inChannelsLast = false, m_outChannelsLast = false;
};

} // namespace kforge::core
