#pragma once
// aten::max_pool2d of a 4-D float32/float16/bfloat16 tensor, NCHW contiguous or channels-last
// (output in the input's layout, as eager gives it), any kernel size, stride, padding, dilation and
// ceil_mode. Eager's CUDA max_pool2d computes max_pool2d_with_indices and drops the int64 indices,
// writing 8 bytes per output it never returns; these kernels write only the values. Windows are
// clipped to the input (padding is -inf), NaN propagates as in eager.
// Parameters (docs/builtin-proposer.md): threads; NCHW: outputs_per_thread along a row (vector_width
// 1); channels-last: vector_width V consecutive channels per thread (outputs_per_thread 1).
// Thread: see KernelFamily.

#include "builtin_proposer/KernelFamily.h"

#include <array>
#include <memory>

namespace kforge::core {

class MaxPool2dFamily final : public KnobFamily {
public:
    static bool coversOp(const std::string& qualifiedOp) { return qualifiedOp == "aten::max_pool2d"; }
    static Result<std::unique_ptr<MaxPool2dFamily>> create(const OperatorCard& card);

    std::string name() const override { return "max_pool2d"; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;

private:
    MaxPool2dFamily() = default;
    std::vector<Knob> knobs() const override;
    Result<void> check(const nlohmann::json& params) const override;
    std::string windowSource() const;

    std::string m_dtype;
    bool m_channelsLast = false;
    std::int64_t m_batch = 0, m_channels = 0, m_height = 0, m_width = 0, m_outHeight = 0, m_outWidth = 0;
    std::array<std::int64_t, 2> m_kernel{}, m_stride{}, m_padding{}, m_dilation{};
};

} // namespace kforge::core
