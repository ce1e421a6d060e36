#pragma once
// The template family behind the built-in proposer (docs/builtin-proposer.md): for one card, a family
// turns a set of template parameters (JSON, kept in each node's provenance) into a candidate, and
// lists the named transformations that lead from one parameter set to its neighbours. Internal to
// kforge_builtin_proposer; BuiltinProposer is the public face.
//
// Thread: immutable after construction; every method may be called from any thread.

#include "model/OperatorCard.h"
#include "model/SearchNode.h"
#include "pointwise/CudaLiteral.h" // floatLiteral, used by most families
#include "util/Result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kforge::core {

/// One step from a parameter set: its name (recorded as provenance.transformation) and the result.
struct Transformation {
    std::string name;
    nlohmann::json params;
};

class KernelFamily {
public:
    virtual ~KernelFamily() = default;
    /// Stable family name stored in provenance ("softmax", "unary").
    virtual std::string name() const = 0;
    /// The parameters of the first candidate: a good default for the card's shapes and dtypes.
    virtual nlohmann::json rootParams() const = 0;
    /// Source + plan for `params`. InvalidArgument when `params` is not a valid set for this card
    /// (e.g. hand-edited provenance); the message names the offending parameter.
    virtual Result<Candidate> generate(const nlohmann::json& params) const = 0;
    /// Every valid neighbour of `params`, in a fixed order, none equal to `params`.
    virtual std::vector<Transformation> transformations(const nlohmann::json& params) const = 0;
    /// `params` as a node stored them, with any parameter a later version of the family added set
    /// to the value that gives the kernel those params made then (so an older tree's nodes can
    /// still be revised). The default: unchanged.
    virtual nlohmann::json withDefaults(const nlohmann::json& params) const { return params; }
};

/// Dtype helpers shared by the families. Only "float32", "float16" and "bfloat16" are claimed as
/// inputs and outputs; dtypeCType and dtypeLoader also read "float64" (a 0-dim operand's value) and
/// "bool" (a condition, loaded as 0 / 1).
bool isBuiltinFloatDtype(const std::string& dtype);
/// int64, int32, int16, int8, uint8: what the pointwise generator carries exactly (integerOperandTypes).
bool isBuiltinIntegerDtype(const std::string& dtype);
int dtypeBytes(const std::string& dtype); // 4 or 2 (float64 8, bool 1; integers their width)
const char*
dtypeCType(const std::string& dtype); // "float", "__half", "__nv_bfloat16", "double", "long long", "int", ...
/// The #include lines and the load/store conversions (float <-> dtype) for one input and one output
/// dtype: defines `in_t`, `out_t`, `kfLoad(in_t) -> float`, `kfStore(float) -> out_t`.
std::string dtypePrelude(const std::string& inDtype, const std::string& outDtype);

} // namespace kforge::core

namespace kforge::core {

/// Helpers shared by the families added after softmax/unary (internal to kforge_builtin_proposer).

/// Unsupported error naming the card's op, as every family reports refusals.
Error unsupportedCard(const OperatorCard& card, const std::string& why);
/// The card's tensor argument `name` when it is one float32/float16/bfloat16 tensor (any layout and
/// size); otherwise the Unsupported error saying which of these it is not.
Result<const TensorSpec*> floatTensorInput(const OperatorCard& card, const std::string& name);
/// floatTensorInput, and contiguous and non-empty.
Result<const TensorSpec*> contiguousFloatInput(const OperatorCard& card, const std::string& name);
bool isPowerOfTwo(std::int64_t v);
/// The widest vector of 8, 4, 2 or 1 elements that divides `unit` (what a vector must not straddle:
/// a row, a channel's plane, a group's channels) and keeps a vector of either dtype within 16 bytes.
int widestVectorWidth(std::int64_t unit, const std::string& inDtype, const std::string& outDtype);
/// The widest of 8, 4 and 2 elements that `allowed` accepts, else 1: a family's root vector width.
int widestAllowedWidth(const std::function<bool(int)>& allowed);
/// A 4-D [N, C, H, W] tensor stored channels-last (NHWC), with the strides PyTorch gives it.
bool isChannelsLast(const TensorSpec& t);
/// The dims of a dense layout from outermost to innermost in storage (a permutation of 0..rank-1,
/// size-1 dims last), or nullopt when `t` is not dense: its non-size-1 dims, taken by decreasing
/// stride, must step exactly over one another (innermost stride 1), as a tensor that eager
/// allocates for the result of a transposed input is (`q.transpose(1, 2) * cos`). Contiguous gives
/// the identity, channels-last NCHW gives {0, 2, 3, 1}.
std::optional<std::vector<std::size_t>> denseStorageOrder(const TensorSpec& t);
/// An elementwise kernel's iteration space: the output's dims in `order` (outermost first), size-1
/// dims dropped, and a dim merged into the one after it where every operand steps through both as
/// one. strides[k][d]: operand k's stride (elements) for output dim d, 0 where it broadcasts. The
/// result's strides[k] follow its sizes; both are empty when every dim has size 1.
struct MergedDims {
    std::vector<std::int64_t> sizes;
    std::vector<std::vector<std::int64_t>> strides;
};
MergedDims mergeDims(const std::vector<std::size_t>& order, const std::vector<std::int64_t>& sizes,
                     const std::vector<std::vector<std::int64_t>>& strides);
/// Whether an operand walked with these strides (merged dims, outermost first, in elements) can be
/// moved in whole vectors of `width` elements: innermost stride 1 and every other stride a multiple
/// of the width, so each vector starts on a multiple of it (base pointers are 16-byte aligned).
bool stridesAllowVectors(const std::vector<std::int64_t>& strides, int width);

/// A pooling argument of `count` ints (kernel_size, stride, padding, dilation): a list of `count`,
/// or one int / a one-element list for every dim; `fallback` when the list is empty (stride=[]
/// means the kernel size). nullopt when the argument is missing or not such a value.
std::optional<std::vector<std::int64_t>> poolingInts(const OperatorCard& card, const std::string& name,
                                                     std::size_t count, const std::vector<std::int64_t>& fallback);
/// PyTorch's pooling output size for one dim (pooling_output_shape): ceil_mode drops a last window
/// that would start in the right padding.
std::int64_t pooledSize(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                        std::int64_t dilation, bool ceil);

/// Operand strides over an iteration space of `sizes`: right-aligned, 0 where the operand
/// broadcasts (absent or size 1). nullopt when its sizes do not broadcast to `sizes`.
std::optional<std::vector<std::int64_t>> broadcastStrides(const TensorSpec& t, const std::vector<std::int64_t>& sizes);
/// `long long NAME(long long i)`: the offset (elements) of row-major index i over `dims`
/// (outermost first) for an operand with `strides` over them, sizes and strides baked in.
std::string offsetFunction(const std::string& name, const std::vector<std::int64_t>& dims,
                           const std::vector<std::int64_t>& strides);

/// A region operand's types in generated code: `typedef T t_NAME;`, its `kfLoad_NAME` (an input) or
/// `kfStore_NAME` (an output) and, where it moves in vectors of V, `struct Vec_NAME`.
std::string regionOperandTypes(const std::string& name, const std::string& dtype, bool output, bool vectors);
/// regionOperandTypes for an integer dtype whose values the kernel carries in their own C type (the
/// pointwise generator's): `typedef T t_NAME;`, `T kfLoad_NAME(T)` or `T kfStore_NAME(T)` (the value
/// itself) and, where it moves in vectors of V, `struct Vec_NAME`.
std::string integerOperandTypes(const std::string& name, const std::string& dtype, bool output, bool vectors);
/// `#include` lines for a dtype plus `__device__ float NAME(T v)` converting one element to float;
/// used for tensors whose dtype may differ from the main input's (weights, running stats, operands).
std::string dtypeLoader(const std::string& fn, const std::string& dtype);
/// The same for storing: `__device__ T NAME(float v)` rounding to nearest even into the dtype.
std::string dtypeStorer(const std::string& fn, const std::string& dtype);
/// Warp and block fp32 sum reductions and a Welford (count, mean, M2) merge, as device functions:
/// kfWarpSum(v), kfBlockSum<THREADS>(v) (every thread of the block must call it; all get the sum),
/// kfWelfordMerge(n, mean, m2, n2, mean2, m22), kfWarpWelford(n, mean, m2),
/// kfBlockWelford<THREADS>(n, mean, m2) (all threads get the merged triple).
std::string reductionHelpers();
/// {"kernel", "grid", "block", "shared_bytes": 0, "args"} for one launch.
nlohmann::json launchJson(const std::string& kernel, std::int64_t grid, int block,
                          const std::vector<std::string>& args);

/// A tunable knob of a family's parameter object: an int (power of two; neighbours x2 and /2, named
/// "STEP A->B") or a bool (toggled, named ON_NAME / OFF_NAME).
struct Knob {
    std::string key;
    std::string stepName; // ints
    std::string onName;   // bools: name of the step that sets it
    std::string offName;  // bools: name of the step that clears it
    bool isBool() const { return !onName.empty(); }
};
/// InvalidArgument naming the parameter when a knob is missing, mistyped or an int is not a power of two.
Result<void> checkKnobs(const nlohmann::json& params, const std::vector<Knob>& knobs, const std::string& context);
/// checkKnobs, then the "threads" knob (a power of two by checkKnobs) within minThreads..1024.
Result<void> checkKnobsAndThreads(const nlohmann::json& params, const std::vector<Knob>& knobs,
                                  const std::string& context, int minThreads = 64);
/// Every single-knob neighbour of `params` (fixed order) that `valid` accepts, none equal to `params`.
std::vector<Transformation> knobNeighbours(const nlohmann::json& params, const std::vector<Knob>& knobs,
                                           const std::function<bool(const nlohmann::json&)>& valid);

/// A family whose parameter object is a fixed list of knobs under its card's constraints: the
/// neighbours of a parameter set are its single-knob changes (knobNeighbours) that check() accepts,
/// and a parameter set check() refuses has none.
class KnobFamily : public KernelFamily {
public:
    std::vector<Transformation> transformations(const nlohmann::json& params) const final;

protected:
    /// The family's knobs for its card.
    virtual std::vector<Knob> knobs() const = 0;
    /// Ok when the family can generate `params` for its card; otherwise why not.
    virtual Result<void> check(const nlohmann::json& params) const = 0;
};

} // namespace kforge::core
