#pragma once
// batch_norm in inference mode (aten::batch_norm, training=false) of a contiguous NCHW-style
// float32/float16/bfloat16 tensor [N, C, *] with the running statistics: per channel
// y = (x - running_mean) * rsqrt(running_var + eps) * weight + bias in fp32 (weight/bias optional).
// Parameters (docs/builtin-proposer.md): threads, vector_width (divides the spatial size so a vector
// stays in one channel; channels-last: divides C), items_per_thread, precompute (a first tiny kernel
// writes each channel's (mean, scale, shift) to a scratch buffer vs computing them inline per vector;
// channels-last inline: channel-resident, each thread computes its V channels' values once into
// registers and streams, in one launch, where C / V divides threads). Thread: see KernelFamily.

#include "builtin_proposer/KernelFamily.h"

#include <memory>

namespace kforge::core {

class BatchNormFamily final : public KnobFamily {
public:
    static bool coversOp(const std::string& qualifiedOp) { return qualifiedOp == "aten::batch_norm"; }
    static Result<std::unique_ptr<BatchNormFamily>> create(const OperatorCard& card);

    std::string name() const override { return "batch_norm"; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;

private:
    BatchNormFamily() = default;
    std::vector<Knob> knobs() const override;
    Result<void> check(const nlohmann::json& params) const override;
    // The main kernel's source (after the shared prelude): `statParams` its per-channel parameter
    // list ("const float* __restrict__ w, ..."), `statArgs` the matching kfChannel arguments ("w, b, ").
    std::string flatKernel(bool precompute, const std::string& statParams, const std::string& statArgs) const;
    std::string channelResidentKernel(const std::string& statParams, const std::string& statArgs) const;

    std::string m_inDtype, m_outDtype, m_weightDtype, m_biasDtype, m_meanDtype, m_varDtype; // empty: None
    std::int64_t m_numel = 0, m_channels = 0, m_spatial = 0;
    // NHWC memory (torch.channels_last, 4-D): the channel is the fastest index, so an element's
    // channel is its flat index modulo C and a vector covers V consecutive channels.
    bool m_channelsLast = false;
    double m_eps = 0;
};

} // namespace kforge::core
