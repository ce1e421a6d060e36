#pragma once
// Elementwise unary ops on a float32/float16/bfloat16 tensor into a dense output (eager allocates
// it so). When the input is laid out as the output (contiguous, channels-last, any dense layout) the
// kernel runs flat over storage order; otherwise (a slice, as rotate_half's x[..., 128:] of a
// transposed tensor) it gathers: output element k of storage reads the input at the offset its
// index gives, through strides baked in. Ops: aten::relu,
// aten::gelu (approximate "none": exact erff form; "tanh"), aten::silu, aten::sigmoid, aten::tanh,
// aten::neg, aten::rsqrt, aten::cos, aten::sin (full-range cosf / sinf), aten::pow.Tensor_Scalar with exponent 2, the
// dtype conversion aten::to.dtype into another of those dtypes (widened exactly, rounded to nearest even),
// aten::type_as (the same conversion), in place aten::relu_ and aten::silu_ (torchvision's ReLU(inplace=True): output 0
// is self), and copies with the identity op: aten::contiguous of a tensor not already in the layout asked for,
// aten::reshape (and aten::flatten.using_ints, a reshape) of a tensor it cannot view (gathered into a contiguous tensor
// of the input's sizes, which has the reshaped output's bytes). Parameters (docs/builtin-proposer.md):
//   threads           threads per block (64..1024, power of two)
//   vector_width      elements per load/store (1, 2, 4, 8; at most 16 bytes); the numel % width
//                     trailing elements are done by a scalar tail (gather: must divide the
//                     innermost merged dim; the input is loaded as vectors where its strides allow)
//   items_per_thread  vectors a thread loads before computing (1, 2, 4, 8), strided by `threads`
// The kernel is a grid-stride loop; computation is in fp32. Thread: see KernelFamily.

#include "builtin_proposer/KernelFamily.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace kforge::core {

class UnaryFamily final : public KernelFamily {
public:
    static bool coversOp(const std::string& qualifiedOp);
    /// Unsupported with the reason when the card's layout, dtype or arguments are not handled.
    static Result<std::unique_ptr<UnaryFamily>> create(const OperatorCard& card);

    std::string name() const override { return "unary"; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;
    std::vector<Transformation> transformations(const nlohmann::json& params) const override;

private:
    struct Params {
        int threads = 256;
        int vectorWidth = 1;
        int itemsPerThread = 1;
        bool fastMath = false; // SFU exp / reciprocal (and erfc by exp) instead of expf / erff / tanhf; not relu
    };

    UnaryFamily() = default;
    Result<Params> parse(const nlohmann::json& params) const;
    static nlohmann::json toJson(const Params& p);
    bool vectorWidthAllowed(int width) const;
    /// The fp32 expression of the op applied to `x`.
    std::string opExpression(bool fastMath) const;
    /// Whether the op has a fast-math variant (an SFU approximation of a transcendental).
    bool hasFastMath() const;
    /// Gather: whether V input elements of a vector are one aligned vector load (innermost input
    /// stride 1, every other stride a multiple of `width`).
    bool gatherVectorLoads(int width) const;
    /// The gather kernel's source (the flat one is generate's own).
    std::string gatherSource(const Params& p, const std::string& kernel, const char* geluSource) const;
    /// What the flat and the gather kernels share: NUMEL, V, THREADS, ITEMS, NVEC (of nvecType;
    /// afterNvec follows it), the vector types, the gelu helper and kfOp.
    std::string kernelConstants(const Params& p, const char* nvecType, const std::string& afterNvec,
                                const char* geluSource) const;
    nlohmann::json launchPlan(const std::string& kernel, const Params& p) const;

    // c10::MemoryFormat as an argument value (torch/headeronly/core/MemoryFormat.h).
    static constexpr int kContiguousFormat = 0;
    static constexpr int kPreserveFormat = 1;
    static constexpr int kChannelsLastFormat = 2;

    std::string m_op;                 // "relu", "gelu", "silu", "sigmoid", "tanh", "neg", "rsqrt", "pow", "to", "copy"
    bool m_inPlace = false;           // relu_ / silu_: y is x
    bool m_channelsLast = false;      // input and output NHWC (for the source's comment; indexing is flat)
    bool m_dense = false;             // input and output laid out alike in another dense layout (flat too)
    bool m_gather = false;            // the input is laid out unlike the output: strided reads
    std::vector<std::int64_t> m_dims; // gather: merged output dims, outermost first in storage
    std::vector<std::int64_t> m_inStrides; // gather: the input's strides over m_dims (elements)
    bool m_tanhGelu = false;               // gelu approximate="tanh"
    std::string m_expression;              // the op's fp32 expression of x, from the pointwise table
    std::string m_inDtype, m_outDtype;     // differ only for "to"
    std::int64_t m_numel = 0;
};

} // namespace kforge::core
