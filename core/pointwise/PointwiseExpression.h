#pragma once
// The expression DAG of a region card's chain of pointwise ops (docs/builtin-proposer.md,
// "Pointwise expressions"): region inputs, Python-scalar constants and op applications from the op
// table, equal subexpressions shared, and the per-element fp32 code that computes every region
// output from the inputs' values. Torch-free.
//
// Rounding: eager materializes each op's result in its dtype, so a bfloat16 chain rounds after
// every op. By default (PointwiseOptions::roundIntermediates) the generated code does the same:
// each op result whose eager dtype is float16 or bfloat16 is rounded to it before the next op reads
// it, which keeps the kernel within a rounding of eager instead of drifting from it by the chain's
// length. Without it the chain runs in fp32 throughout and only the stores round.
//
// Integers (PointwiseOptions::integers): integer tensors (int64, int32, int16, int8, uint8) as
// inputs, outputs and intermediates. A value of an integer dtype is carried in its own C type
// (pointwiseValueType), never in fp32; an op whose common dtype is an integer type computes exactly in
// it with its row's integer form (eager's wrap-around: modulo 2^N), its operands first converted to
// that dtype as eager's kernels read them (a float truncated toward zero, an integer keeping its low
// bits). An integer value read by an op computed in floating point is converted as c10 converts it
// (round to nearest float, then to a float16 / bfloat16 common dtype). Bools stay 0 / 1 in fp32.
//
// Row reductions (PointwiseOptions::rowReductions): a member that reduces the trailing dims of its
// input (softmax, log_softmax the last; sum, mean, amax, amin, prod, var, std, var_mean, std_mean,
// logsumexp, linalg_vector_norm and norm any trailing dims, all of them included; max and min
// without a dim every element; max.dim, min.dim, argmax and argmin with the int64 index of the
// first extreme, one pair reduction and its Position node; layer_norm and rms_norm their normalized_shape; group_norm
// every dim after the batch, in groups of channels; instance_norm every dim after the channel) becomes Reduce nodes (a
// sum, product, max or min over the row) and the pointwise ops around them, in fp32 as eager's kernels compute it, its
// result rounded once to the member's dtype (logsumexp, which eager composes of ops in the input's dtype, rounds after
// each). Which values vary along the row and which are one per row is the kernel's business (layouts): the DAG only
// orders them.
//
// Concatenation (PointwiseOptions::concatenation): an aten::cat member becomes a Cat node that picks,
// by the element's coordinate along the cat dim, the value of the branch that coordinate falls in.
// Each branch is computed in a branch context: its region inputs are read at the element's
// coordinates shifted back by the branch's start (Input nodes with `context`), so rotary's
// cat(-x2, x1) reads x2 and x1, slices of one tensor, where the cat puts them. The kernel reads an
// input in a branch context only where the element falls in that branch (zero elsewhere: the Cat
// node never picks those values).

#include "model/OperatorCard.h"
#include "pointwise/PointwiseOpTable.h"
#include "util/Result.h"

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::core {

struct PointwiseOptions {
    bool roundIntermediates = true;
    bool rowReductions = false; // decompose row reductions into Reduce nodes; refused otherwise
    bool integers = false;      // integer tensors and results, in exact integer code; refused otherwise
    bool concatenation = false; // aten::cat members as Cat nodes over branch contexts; refused otherwise
};

/// A Cat node's layout: the cat output's sizes, the dim it concatenates along, and where each
/// branch starts along it (bounds[b] .. bounds[b + 1]; bounds.back() is the dim's size); `context`:
/// the branch context it is itself computed in (-1: none; a cat inside another cat's branch, as
/// partial rotary's cat of the rotated and the passed-through parts, is a copy per context).
struct PointwiseCat {
    int node = -1;
    int context = -1;
    std::size_t dim = 0;
    std::vector<std::int64_t> sizes;
    std::vector<std::int64_t> bounds;
};

/// Where the Input nodes of a context read: branch `branch` of cat `cat` (an index into
/// PointwiseExpression::cats()).
struct PointwiseBranchContext {
    int cat = -1;
    int branch = 0;
};

/// A region input as the element code reads it: in the element's own coordinates (context -1), or
/// in a branch context (an index into PointwiseExpression::branchContexts()).
struct PointwiseInputRead {
    int input = -1;
    int context = -1;
    bool operator==(const PointwiseInputRead&) const = default;
};

/// The C++ type the element code carries a value of `dtype` in: its own integer type for an integer
/// dtype ("long long", "int", "short", "signed char", "unsigned char"), otherwise "float" (a bool as
/// 0 / 1, a 16-bit float widened exactly).
std::string pointwiseValueType(const std::string& dtype);

/// What a Reduce node combines over the row: eager's sum or product, or its NaN-propagating max / min;
/// or (ArgMax, ArgMin) a pair reduction: (value, index) pairs carried together through one walk of the
/// row, eager's rule picking the first index holding the max (min), NaN above (below) every number
/// (the first NaN wins), ties to the lower index. That rule is a total order on pairs of distinct
/// indices, so combining in any order or tree gives the same pair. The node's value is the extreme
/// (NaN-propagating, as Max / Min); a Position node reading it is the index.
enum class PointwiseReduce { Sum, Max, Min, Prod, ArgMax, ArgMin };

/// Whether `r` carries an index beside its value (ArgMax, ArgMin).
bool isPairReduce(PointwiseReduce r);

struct PointwiseNode {
    // Position: the int64 index along the row (in the reduced dims' order) of the element that the
    // pair reduction operands[0] picked; an integer, so only a region output may read it.
    // Cat: the value of the branch (operands, each computed in its branch context) that the element's
    // coordinate along the cat dim falls in (cats()[cat]).
    enum class Kind { Input, Constant, Apply, Reduce, Position, Cat };
    Kind kind = Kind::Input;
    int input = -1;                     // Input: the region input ("in<input>")
    int context = -1;                   // Input: the branch context it is read in (-1: none)
    int cat = -1;                       // Cat: its index in cats()
    std::vector<std::int64_t> view;     // Input: the sizes it is read at when not its own (group_norm's
                                        // weight [C] read as [C, 1, 1] against [N, C, H, W])
    double constant = 0;                // Constant: a Python scalar's value
    std::int64_t integer = 0;           // Constant: a Python int's (bool's: 0 / 1) exact value
    const PointwiseOpRow* op = nullptr; // Apply
    std::vector<int> operands;          // Apply: node per row operand; -1 for an absent optional
    std::string dtype;                  // the eager dtype of the value (Constant: the scalar's: float32, int64, bool)
    std::string common;                 // Apply: the dtype eager computes it in (its promoted operands' common
                                        // dtype; float32 for an integer one of a float op; a cast's target)
    bool round = false;                 // Apply: the fp32 result is rounded to `dtype` (float16 / bfloat16)
    PointwiseReduce reduce = PointwiseReduce::Sum; // Reduce: over dims `reducedDims` of operands[0]
    std::vector<std::int64_t> reducedDims;         // Reduce: the dims of the reduced tensor, ascending
    std::int64_t groups = 0; // Reduce: group_norm's groups (dim 1 split into groups x channels), else 0
    int member = -1;         // Reduce: the chain member it is part of
};

/// Whether `op` ("aten::softmax") is a row reduction PointwiseOptions::rowReductions decomposes.
bool isRowReductionOp(const std::string& op);

class PointwiseExpression {
public:
    /// The DAG of region card `card` (card.region set, arguments in0..inN-1). Unsupported with one
    /// line naming the member when a member is not in the op table, a tensor is not float32, float16,
    /// bfloat16 or bool (a 0-dim input may be float64) nor, with options.integers, an integer type;
    /// a result is not one of those (without options.integers integer tensors are not covered: the
    /// code would be fp32, which holds neither every int32 / int64 nor their wrap-around); an op
    /// computed in an integer type has no integer form (or a float scalar no integer value);
    /// promotion disagrees with the dtype eager produced, or an output is not a member's tensor.
    static Result<PointwiseExpression> fromRegion(const OperatorCard& card, const PointwiseOptions& options = {});

    const std::vector<PointwiseNode>& nodes() const { return m_nodes; }
    /// The node of each region output.
    const std::vector<int>& outputs() const { return m_outputs; }
    /// The node of chain member `m`'s (first) output.
    int memberNode(std::size_t m) const { return m_memberNodes.at(m); }
    bool hasReductions() const;
    /// The Cat nodes' layouts (options.concatenation) and the branch contexts their inputs are read in.
    const std::vector<PointwiseCat>& cats() const { return m_cats; }
    const std::vector<PointwiseBranchContext>& branchContexts() const { return m_contexts; }
    /// The reads of region inputs some output depends on: each input in its own coordinates first
    /// (by input), then the branch contexts' (by context, then input). elementFunction takes them in
    /// this order.
    std::vector<PointwiseInputRead> inputReads() const;
    /// The element function's argument name of `read`: "x<k>", or "x<k>_b<context>".
    static std::string readName(const PointwiseInputRead& read);
    /// Whether cat `c` is read by some output (elementFunction takes its coordinate "kfc<c>").
    bool catUsed(int c) const;
    /// Whether region input `k` is read in its own coordinates by some output (an input may feed only
    /// dead code, or only a cat's branch: inputReads).
    bool inputUsed(int k) const;
    /// Apply nodes an output depends on (what the element code computes).
    int liveOps() const;

    /// `__device__ __forceinline__ void NAME(const T x<k>, ..., const long long kfc<c>, ..., T& y0, ...)`:
    /// the outputs from the values of the input reads that an output depends on (inputReads, named
    /// readName; each T pointwiseValueType of its dtype: bool as 0 / 1) and the element's coordinate
    /// along each used cat's dim (catUsed), each output rounded as the options say, ready for the
    /// store's conversion. Preceded by helpers(); the caller includes cuda_fp16.h / cuda_bf16.h
    /// (needsHalf / needsBfloat16).
    std::string elementFunction(const std::string& name) const;
    /// The device helpers the formulas call and the 16-bit rounding helpers the nodes need: what
    /// elementFunction starts with, for a kernel that emits its own node code.
    std::string helpers() const;
    /// The expression of Apply node `id` with its rounding, each non-constant operand written as
    /// `operandName(node)` (constants are inlined): fp32, or with options.integers the value in
    /// pointwiseValueType(node dtype) (exact integer code where it computes in an integer dtype).
    std::string applyExpression(int id, const std::function<std::string(int)>& operandName) const;
    /// Nodes that `roots` depend on (roots included), not looking through the nodes `leaves` marks.
    std::vector<bool> dependencies(const std::vector<int>& roots, const std::vector<bool>& leaves = {}) const;
    bool needsHalf() const;
    bool needsBfloat16() const;
    /// Whether some node holds or computes an integer value (options.integers only).
    bool hasIntegers() const;
    int inputCount() const { return m_inputCount; }

private:
    int intern(PointwiseNode node);
    /// Whether Apply node `n` computes in an integer dtype with its row's integer form.
    bool integerMath(const PointwiseNode& n) const;
    /// applyExpression's integer code: a conversion into an integer dtype or an integer form.
    std::string integerExpression(const PointwiseNode& n, const std::function<std::string(int)>& operandName) const;
    /// Node `id` rounded to float16 / bfloat16 `dtype` (a Constant of any dtype; a floating value of
    /// another dtype), as eager converts an operand to an op's common dtype; `id` itself otherwise.
    int narrowed(int id, const std::string& dtype);
    std::vector<bool> live() const;
    /// A row reduction's row: the node of the tensor it reduces, the dims a row is (ascending),
    /// group_norm's groups (0 when not grouped), the row's length, the member's first output dtype.
    struct Row {
        int x = -1;
        int memberIndex = -1;
        std::vector<std::int64_t> dims;
        std::int64_t groups = 0;
        std::int64_t length = 0;
        std::string out;
    };
    /// Row-reduction member `member` (isRowReductionOp), the chain's member `memberIndex`, as nodes;
    /// `argNodes[a]`: the node of its argument a when that is one tensor, else -1. The ids of the
    /// member's results (var_mean: two), or why not.
    Result<std::vector<int>> addRowReduction(const ChainMember& member, int memberIndex, const std::string& label,
                                             const std::vector<int>& argNodes);
    /// addRowReduction's norms (layer_norm, rms_norm, group_norm, instance_norm) over `row`.
    Result<int> addRowNorm(const ChainMember& member, std::string_view name, const Row& row,
                           const std::vector<int>& argNodes);
    /// addRowReduction's index reductions (max.dim, min.dim, argmax, argmin) over `row`: the value
    /// (max.dim, min.dim) and the int64 index of its first occurrence, eager's tie rule.
    std::vector<int> addRowIndexReduction(const ChainMember& member, std::string_view name, const Row& row);
    /// addRowReduction's statistics (var, std, var_mean, std_mean, linalg_vector_norm, norm,
    /// logsumexp) over `row` (PointwiseRowStatistics.cpp).
    Result<std::vector<int>> addRowStatistic(const ChainMember& member, std::string_view name, const Row& row);
    int reduceOver(const Row& row, PointwiseReduce reduce, int operand);
    /// An fp32 value as a member's result: rounded once where `dtype` is 16-bit.
    int roundedTo(int value, const std::string& dtype);
    int constantNode(double value);
    /// The index Position node of pair reduction `pair`.
    int positionNode(int pair);
    int applyNode(const char* op, const char* overload, std::vector<int> operands, const std::string& dtype,
                  bool round);
    int reduceNode(PointwiseReduce reduce, int operand, int member, std::vector<std::int64_t> reducedDims,
                   std::int64_t groups = 0);
    /// group_norm: Input node `id` read at `view` sizes; -1 when `id` is not an Input node.
    int viewedInput(int id, std::vector<std::int64_t> view);
    /// aten::cat member `member` over the nodes of its tensors (`branches`, one per list element), or why not.
    Result<int> addCat(const ChainMember& member, const std::string& label, const std::vector<int>& branches);
    /// Node `id`'s subexpression with every Input read in branch context `context` (`copies`: per node
    /// that existed when the cat began, its copy or -1; only those nodes are ever rebased), or why not (a reduction). A
    /// read already in a branch context, and a Cat node, move into their copies within `context`.
    Result<int> inBranch(int id, int context, std::vector<int>& copies);
    /// Branch context `c` within context `context`, and cat `k` within it: copies made once.
    int contextWithin(int c, int context);
    int catWithin(int k, int context);

    std::vector<PointwiseNode> m_nodes;
    std::vector<int> m_outputs;
    std::vector<int> m_memberNodes;
    std::vector<PointwiseCat> m_cats;
    std::vector<PointwiseBranchContext> m_contexts;
    std::map<std::pair<int, int>, int> m_contextsWithin, m_catsWithin; // (original, context) -> copy
    int m_inputCount = 0;
    bool m_integers = false; // PointwiseOptions::integers
};

} // namespace kforge::core
