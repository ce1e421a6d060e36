#pragma once
// Sliding-window pooling of a contiguous float32/float16/bfloat16 tensor over its last 1, 2 or 3
// dims: aten::avg_pool1d / avg_pool2d / avg_pool3d (any kernel, stride, padding, ceil_mode,
// count_include_pad, divisor_override) and aten::max_pool1d / max_pool3d (also dilation; values
// only). max_pool2d keeps its own family (MaxPool2dFamily: channels-last too). The dims before the
// pooled ones are planes (batched or not). fp32 sums, divided as eager divides; max propagates NaN
// as eager does. One thread per run of outputs_per_thread consecutive outputs along the innermost
// pooled dim. Parameters (docs/builtin-proposer.md, "pool"): threads, outputs_per_thread.
// Thread: see KernelFamily.

#include "builtin_proposer/KernelFamily.h"

#include <array>
#include <memory>

namespace kforge::core {

class PoolFamily final : public KnobFamily {
public:
    static bool coversOp(const std::string& qualifiedOp);
    static Result<std::unique_ptr<PoolFamily>> create(const OperatorCard& card);

    std::string name() const override { return "pool"; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;

private:
    PoolFamily() = default;
    std::vector<Knob> knobs() const override;
    Result<void> check(const nlohmann::json& params) const override;
    /// The window loop and the value it leaves in m[o] for the outputs of one thread.
    std::string windowSource() const;

    bool m_average = false;
    int m_pooledDims = 0; // 1, 2 or 3
    std::string m_dtype;
    std::int64_t m_planes = 0;
    // Per pooled dim, depth / height / width order; a 1-D or 2-D pool has size-1 leading entries
    // with a window of one.
    std::array<std::int64_t, 3> m_in{}, m_out{}, m_kernel{}, m_stride{}, m_padding{}, m_dilation{};
    bool m_countIncludePad = true;
    std::int64_t m_divisorOverride = 0; // 0: none
};

} // namespace kforge::core
