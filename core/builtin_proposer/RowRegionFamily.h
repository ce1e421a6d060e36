#pragma once
// A region card whose chain reduces rows: softmax, log_softmax, sum, mean, amax, amin, prod, the
// statistics (var, std, vector norms, logsumexp) or a norm (layer, rms, group, instance), with any
// pointwise ops of the op table before, between and after them (attention's scale + mask ->
// softmax -> to, RMSNorm written out, residual add -> layer_norm). One
// kernel, one read of every input and one write of every output: each row group of threads holds
// its row in registers, computes the chain's reductions one after another from them (a reduction
// over the row, then the values that depend on it) and writes the outputs
// (pointwise/PointwiseExpression.h with rowReductions decomposes each member, in fp32 as eager's
// kernels compute it).
//
// The row shape S is the reduced tensor's, its dims not reduced first and the reduced ones last
// (every reduction of the chain reduces the same dims of a tensor of one shape: the last one, or
// several, as a layer_norm over [H, W] or a mean over every dim does, or a middle or leading one, as
// a sum over dim 1 of [A, R, B] or a softmax over NCHW channels, whose rows run at that dim's stride). Every value of
// the chain is either an element value (varies along the row: sizes that broadcast to S) or a row value (one per row: a
// reduction's result, keepdim or not, and what is computed from row values only). An input is read at its broadcast
// strides over S: an input that does not vary along the row (a per-row or 0-dim tensor) is a row value, read once per
// row. A reduction without keepdim may be an output but not feed an element value (eager would broadcast it against the
// wrong dims).
//
// Parameters (docs/builtin-proposer.md): threads (threads per row, 32..1024), rows_per_block
// (1..32, threads * rows_per_block <= 1024), vector_width (1, 2, 4, 8: divides the row; at most 16
// bytes of any element operand), split (blocks per row). With split 1 each thread holds
// ceil(row / (threads * vector_width)) vectors of each element input, at most 32 elements: rows up
// to 32768 elements. With split S > 1 (few long rows, which one block per row would leave most SMs
// idle on, and rows of any length) a row is cut into S chunks, one block each, and the chain runs as
// one kernel per reduction plus one for the outputs (RowRegionSplit.cpp): each writes its chunk's
// partial of its reduction to scratch, and the next merges a row's partials in a fixed order.
// With columns = true (rows along a strided dim, adjacent rows adjacent in memory: a reduction over a
// middle or leading dim) each thread walks one row and `threads` is the rows of a block
// (RowRegionColumns.cpp); column_parts P (1, 2, 4, 8; 1 unless columns) lets P threads share a row,
// each a contiguous Pth of it, where the rows alone are too few to fill the GPU.
// Index reductions (argmax, max.dim) are pair reductions: every layout carries (value, int index)
// through its walk and combines the pairs across threads, warps, blocks and parts by eager's rule
// (row_code::fold).
// Thread: see KernelFamily.

#include "builtin_proposer/KernelFamily.h"
#include "pointwise/PointwiseExpression.h"

#include <memory>

namespace kforge::core {

class RowRegionFamily final : public KnobFamily {
public:
    /// Unsupported with the reason when the chain has no row reduction, a member is not covered or
    /// the layouts are not (reductions over rows of different shapes, an output of another shape).
    static Result<std::unique_ptr<RowRegionFamily>> create(const OperatorCard& card);
    /// Single-op card `card` (softmax, log_softmax, layer_norm, rms_norm, sum, mean, amax, amin over
    /// the last dim) as its one-member chain: the plan passes the card's own arguments.
    static Result<std::unique_ptr<RowRegionFamily>> createForOp(const OperatorCard& card);
    /// Whether a card reducing `rows` rows of `rowLength` elements is few long rows: one block per
    /// row would leave most of a large GPU's SMs idle, so the split kernel is the better start.
    static bool fewLongRows(std::int64_t rows, std::int64_t rowLength);

    std::string name() const override { return "row_region"; }
    /// Whether the root candidate cuts each row over several blocks (few long rows, or rows too long
    /// for registers).
    bool splitsAtRoot() const { return rootParams()["split"].get<int>() > 1; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;
    /// `split` (1), `columns` (false) and `column_parts` (1) where older trees' params lack them.
    nlohmann::json withDefaults(const nlohmann::json& params) const override;

private:
    struct Operand {
        std::string name;  // "in0", "out1"
        std::string token; // the plan's argument: "ptr:in0", or a single-op card's "ptr:input"
        std::string dtype;
        bool output = false;
        bool used = true;
        bool perRow = false;                    // one value per row (read or written once per row)
        std::vector<std::int64_t> outerStrides; // over the row shape's outer dims (elements)
        std::vector<std::int64_t> rowStrides;   // over m_rowDims; all 0 for a per-row operand
        int node = -1;                          // outputs: the expression node written
        int slot = -1;                          // element inputs: index in x[]; element outputs: in y[]
    };

    explicit RowRegionFamily(PointwiseExpression expression) : m_expression(std::move(expression)) {}
    std::vector<Knob> knobs() const override;
    Result<void> check(const nlohmann::json& params) const override;
    bool vectorWidthAllowed(int width) const;
    bool vectorMoves(const Operand& op, int width) const;
    int elementInputs() const;
    /// Whether element value `id` is kept in registers by a stage before `stage`.
    /// (Never with `keep` false: the split kernels keep nothing between launches.)
    bool cachedBefore(int id, int stage, bool keep = true) const;
    /// The name a node's value has in code that runs at `stage` (a reduction's index; the outputs'
    /// is the number of reductions): "rv[k]" for a row value, "c[k]" for an element value an earlier
    /// stage kept, "v<id>" otherwise.
    std::string valueName(int id, int stage, bool keep = true) const;
    /// `void NAME(const float (&x)[NX], const float (&c)[NC], const float (&rv)[NRV], float (&y)[roots])`:
    /// the element values `roots` at `stage`.
    std::string elementFunction(const std::string& name, const std::vector<int>& roots, int stage,
                                bool keep = true) const;
    /// `rv[k] = ...;` for each live row value computed from inputs and reductions up to `stage` only.
    std::string rowStatements(int stage, const std::string& indent) const;
    /// `float rv[NRV];` and, where the chain has pair reductions, `int ri[NRI];`: a row's values.
    std::string rowValueDeclarations(const std::string& indent) const;
    /// The statements that store reduction `k`'s accumulator (acc, and a pair's at) as its row values.
    std::string reductionResult(int k, const std::string& indent) const;
    /// The value a row output `o` stores: its node's value converted to the output's dtype.
    std::string storedRowValue(const Operand& o) const;
    std::string operandDefinitions(int width) const;
    /// What every kernel of a candidate starts with: the comment, the constants, operand types and
    /// offsets, the formulas' helpers and the row combine functions.
    std::string preamble(const nlohmann::json& params, std::int64_t items, int rowsPerBlock) const;
    /// `extern "C" __global__ void __launch_bounds__(BLOCK) NAME(inputs..., outputs...EXTRA)\n{\n`.
    std::string kernelHead(const std::string& name, const std::string& block, bool withOutputs,
                           const std::string& extra) const;
    /// The statements that load per-row inputs into rv[] (`active` and `ro_<input>` in scope).
    std::string rowInputLoads(const std::string& indent) const;
    /// The statements that load the element inputs of the vector at row column `c0` into
    /// `target[slot][e]` (zero where `inside` is false).
    std::string elementInputLoads(const std::string& target, const std::string& inside, const std::string& indent,
                                  int width) const;
    /// The statements that compute and store the element outputs of the vector at `c0` from the
    /// element inputs in `inputs[slot][e]` and the kept values in `kept[slot][e]` (none when empty).
    std::string elementOutputStores(const std::string& inputs, const std::string& kept, const std::string& indent,
                                    int width) const;
    /// The start of a split kernel's body: the block's row and chunk, the row inputs and the row
    /// values of the first `stagesKnown` reductions, merged from `partials`. With `blockPerRow` the
    /// grid has one block per row (part 0), not SPLIT.
    std::string splitRowStart(int stagesKnown, bool blockPerRow = false) const;
    std::vector<int> elementOutputNodes() const;
    /// The kinds of the chain's reductions, each once, in order of first use.
    std::vector<PointwiseReduce> reduceKinds() const;
    /// The elements of a row each of `parts` column parts walks, the last part shorter.
    std::int64_t columnPartLength(int parts) const;
    /// The chunk of a row each block of a split row covers: whole vectors, the last chunk shorter.
    std::int64_t chunkLength(int split, int width) const;
    Result<Candidate> generateSplit(const nlohmann::json& params) const;
    /// Whether the reduced tensor's rows run along a strided dim while adjacent rows are adjacent in
    /// memory: a thread per row reads coalesced where a group of threads per row would not.
    bool rowsRunAlongMemory() const;
    /// columns = true: one thread per row, a pass over the row per reduction (RowRegionColumns.cpp).
    Result<Candidate> generateColumns(const nlohmann::json& params) const;
    /// Whether a thread per row holds its whole row's element inputs in registers (a short row: a
    /// softmax over 21 channels), so that each input is read once instead of once per pass.
    bool columnsHoldRow() const;

    PointwiseExpression m_expression;
    std::vector<Operand> m_inputs, m_outputs;
    std::vector<std::int64_t> m_outer;   // the row shape's outer sizes (all but the reduced dims)
    std::vector<std::int64_t> m_rowDims; // the reduced dims, merged where every operand allows
    std::int64_t m_rows = 0;
    std::int64_t m_rowLength = 0;
    std::vector<bool> m_live;     // per node: an output depends on it
    std::vector<bool> m_perRow;   // per node: one value per row
    std::vector<int> m_rowSlot;   // per node: its index in rv[] (live row values but constants, positions), else -1
    std::vector<int> m_indexSlot; // per pair Reduce node: the index in ri[] of the index it carries, else -1
    std::vector<int> m_stage;     // per row node: the reduction stage after which it is known (-1: at the start)
    std::vector<int> m_reduces;   // live Reduce nodes, in order (stage k computes m_reduces[k])
    std::vector<int> m_cacheSlot; // per node: its index in cs[] (a reduced element value kept), else -1
    std::vector<int> m_cachedAt;  // per kept node: the stage that computes and keeps it
    int m_cached = 0;
    int m_rowValues = 0;
    int m_indices = 0;
    std::string m_chain;
};

} // namespace kforge::core
