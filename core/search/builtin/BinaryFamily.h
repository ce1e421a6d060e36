#pragma once
// Elementwise binary ops with broadcasting: aten::add.Tensor / aten::sub.Tensor (alpha baked in),
// aten::mul.Tensor, aten::div.Tensor and aten::div.Tensor_mode with rounding_mode None, and the in-place
// add_/sub_/mul_/div_ .Tensor forms (the output is `self`: the kernel reads and writes through
// pointers that alias, so they are not __restrict__; `other` may alias `self` too). Both operands
// are CUDA tensors of the output's dtype (float32/float16/bfloat16), any sizes that broadcast and any
// strides; or one of them is a 0-dim CUDA tensor of another floating dtype (float64 included: a
// traced Python number), whose value the kernel reads at each launch and casts to the output's dtype
// as eager's CUDA kernel does. The output is contiguous, or 4-D channels-last with both operands laid
// out exactly as it (ResNet's residual add_ in channels-last fp16: flat over storage order, no
// broadcasting). Each operand's broadcast strides against the output shape are
// computed at generation time (size-1 dims dropped, mergeable dims merged) and baked in as constants.
// Fast path when both operands are contiguous with the output's sizes (flat, vectorized, scalar tail).
// Parameters (docs/builtin-proposer.md): threads, vector_width, items_per_thread. fp32 math.
// Thread: see KernelFamily.

#include "search/builtin/KernelFamily.h"

#include <memory>

namespace kforge::core {

class BinaryFamily final : public KnobFamily {
public:
    static bool coversOp(const std::string& qualifiedOp);
    static Result<std::unique_ptr<BinaryFamily>> create(const OperatorCard& card);

    std::string name() const override { return "binary"; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;

private:
    BinaryFamily() = default;
    std::vector<Knob> knobs() const override;
    Result<void> check(const nlohmann::json& params) const override;
    bool vectorWidthAllowed(int width) const;
    /// Whether operand `k` (0 self, 1 other) can be loaded as whole vectors of `width` on the general path.
    bool operandVectorLoads(int k, int width) const;

    std::string m_op; // "add", "sub", "mul", "div"
    std::string m_dtype;
    double m_alpha = 1;
    std::int64_t m_numel = 0;
    bool m_inPlace = false;           // add_ & co.: output 0 is self
    bool m_flat = false;              // fast path: both operands laid out as the (dense) output, same sizes
    bool m_channelsLast = false;      // the output (and so both operands) NHWC: flat in storage order
    bool m_storageOrdered = false;    // another dense output layout: m_dims follow its storage order
    std::vector<std::int64_t> m_dims; // general path: merged output dims (no size-1 dims unless numel 1)
    std::vector<std::int64_t> m_strides[2]; // broadcast strides of self / other over m_dims
    int m_scalarOperand = -1;               // 0 self, 1 other: a 0-dim operand of another dtype; -1 none
    std::string m_scalarDtype;              // its dtype
};

} // namespace kforge::core
