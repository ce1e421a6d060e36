#pragma once
// Elementwise binary ops with broadcasting: aten::add.Tensor / aten::sub.Tensor (alpha baked in),
// aten::mul.Tensor, aten::div.Tensor and aten::div.Tensor_mode with rounding_mode None, and the in-place
// add_/sub_/mul_/div_ .Tensor forms (the output is `self`: the kernel reads and writes through
// pointers that alias, so they are not __restrict__; `other` may alias `self` too). Both operands
// are CUDA tensors of the output's dtype (float32/float16/bfloat16), any sizes that broadcast and any
// strides; or one of them is a 0-dim CUDA tensor of another floating dtype (float64 included: a
// traced Python number), whose value the kernel reads at each launch and casts to the output's dtype
// as eager's CUDA kernel does; or a host number (OperatorCard::isHostNumberArg: a Python number
// the call received as a 0-dim CPU tensor), which the plan passes by value (`f64:other`) and the
// kernel reads straight into fp32, as eager reads a CPU scalar (a divisor as its fp32 reciprocal).
// The output is contiguous, or 4-D channels-last with both operands laid
// out exactly as it (ResNet's residual add_ in channels-last fp16: flat over storage order), or any
// other dense layout, walked in its storage order. Each operand's broadcast strides against the
// output shape are computed at generation time (size-1 dims dropped, mergeable dims merged) and
// baked in as constants.
// Fast path when both operands are contiguous with the output's sizes (flat, vectorized, scalar tail).
// Transposed operands (their unit-stride dim is not the output's innermost: SD's VAE attention
// residual, a channels-last output plus an NCHW operand) can go through 32 x 32 shared-memory tiles
// so that both their reads and the output's writes are coalesced (BinaryTiledKernel.cpp).
// Parameters (docs/builtin-proposer.md): threads, vector_width, items_per_thread, and transpose_tile
// where an operand is transposed. fp32 math.
// Thread: see KernelFamily.

#include "builtin_proposer/KernelFamily.h"

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
    /// The source comment naming a 0-dim operand of another dtype (empty without one).
    std::string scalarOperandComment() const;
    /// `extern "C" __global__ void ... KERNEL(x, z, y)`: the operand types and __restrict__ promises.
    std::string kernelSignature(const std::string& kernel) const;
    /// The dtype prelude, the path's `constants` (THREADS at least), kfOp computing `expr` and the
    /// 0-dim operand's loader: what every path's source starts with after its header comment.
    std::string kernelPrelude(const std::string& expr, const std::string& constants) const;
    /// A candidate of one launch of `kernel` (self, other, out0) on min(grid, 2^31 - 1) blocks.
    Candidate oneLaunch(const std::string& source, const std::string& kernel, std::int64_t grid, int threads) const;
    /// The transpose_tile path's source and plan (BinaryTiledKernel.cpp); `prelude` from kernelPrelude.
    Candidate generateTiled(const nlohmann::json& params, const std::string& kernel, const std::string& prelude) const;

    std::string m_op; // "add", "sub", "mul", "div"
    std::string m_dtype;
    std::string m_expression; // fp32 expression of a and b (alpha baked in), from the pointwise table
    std::int64_t m_numel = 0;
    bool m_inPlace = false;                 // add_ & co.: output 0 is self
    bool m_flat = false;                    // fast path: both operands laid out as the (dense) output, same sizes
    bool m_channelsLast = false;            // the output (and so both operands) NHWC: flat in storage order
    bool m_storageOrdered = false;          // another dense output layout: m_dims follow its storage order
    std::vector<std::int64_t> m_dims;       // general path: merged output dims (no size-1 dims unless numel 1)
    std::vector<std::int64_t> m_strides[2]; // broadcast strides of self / other over m_dims
    int m_scalarOperand = -1;               // 0 self, 1 other: a 0-dim operand of another dtype; -1 none
    std::string m_scalarDtype;              // its dtype
    bool m_hostNumber = false;              // the 0-dim operand is a host number: a kernel parameter by value
    // Transposed operands: m_tileDim is a merged dim (not the innermost) where operand k with
    // m_tiled[k] has stride 1 while its innermost stride is neither 0 nor 1; -1 when no operand is.
    int m_tileDim = -1;
    bool m_tiled[2] = {false, false};
};

} // namespace kforge::core
