#pragma once
// A region card whose chain reduces rows: softmax, log_softmax, sum, mean, amax, amin, layer_norm or
// rms_norm over the last dim, with any pointwise ops of the op table before, between and after them
// (attention's scale + mask -> softmax -> to, RMSNorm written out, residual add -> layer_norm). One
// kernel, one read of every input and one write of every output: each row group of threads holds
// its row in registers, computes the chain's reductions one after another from them (a reduction
// over the row, then the values that depend on it) and writes the outputs
// (pointwise/PointwiseExpression.h with rowReductions decomposes each member, in fp32 as eager's
// kernels compute it).
//
// The row shape S is the reduced tensor's (every reduction of the chain reduces the last dim of a
// tensor of sizes S). Every value of the chain is either an element value (varies along the row:
// sizes that broadcast to S) or a row value (one per row: a reduction's result, keepdim or not, and
// what is computed from row values only). An input is read at its broadcast strides over S: an input
// that does not vary along the row (a per-row or 0-dim tensor) is a row value, read once per row.
// A reduction without keepdim may be an output but not feed an element value (eager would broadcast
// it against the wrong dims).
//
// Parameters (docs/builtin-proposer.md): threads (threads per row, 32..1024), rows_per_block
// (1..32, threads * rows_per_block <= 1024), vector_width (1, 2, 4, 8: divides the row; at most 16
// bytes of any element operand). Each thread holds ceil(row / (threads * vector_width)) vectors of
// each element input, at most 32 elements: rows up to 32768 elements.
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

    std::string name() const override { return "row_region"; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;

private:
    struct Operand {
        std::string name; // "in0", "out1"
        std::string dtype;
        bool output = false;
        bool used = true;
        bool perRow = false;                    // one value per row (read or written once per row)
        std::vector<std::int64_t> outerStrides; // over the row shape's outer dims (elements)
        std::int64_t rowStride = 0;             // along the row; 0 for a per-row operand
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
    bool cachedBefore(int id, int stage) const;
    /// The name a node's value has in code that runs at `stage` (a reduction's index; the outputs'
    /// is the number of reductions): "rv[k]" for a row value, "c[k]" for an element value an earlier
    /// stage kept, "v<id>" otherwise.
    std::string valueName(int id, int stage) const;
    /// `void NAME(const float (&x)[NX], const float (&c)[NC], const float (&rv)[NRV], float (&y)[roots])`:
    /// the element values `roots` at `stage`.
    std::string elementFunction(const std::string& name, const std::vector<int>& roots, int stage) const;
    /// `rv[k] = ...;` for each live row value computed from inputs and reductions up to `stage` only.
    std::string rowStatements(int stage, const std::string& indent) const;
    std::string operandDefinitions(int width) const;

    PointwiseExpression m_expression;
    std::vector<Operand> m_inputs, m_outputs;
    std::vector<std::int64_t> m_outer; // the row shape's sizes but the last
    std::int64_t m_rows = 0;
    std::int64_t m_rowLength = 0;
    std::vector<bool> m_live;     // per node: an output depends on it
    std::vector<bool> m_perRow;   // per node: one value per row
    std::vector<int> m_rowSlot;   // per node: its index in rv[] (live row values but constants), else -1
    std::vector<int> m_stage;     // per row node: the reduction stage after which it is known (-1: at the start)
    std::vector<int> m_reduces;   // live Reduce nodes, in order (stage k computes m_reduces[k])
    std::vector<int> m_cacheSlot; // per node: its index in cs[] (a reduced element value kept), else -1
    std::vector<int> m_cachedAt;  // per kept node: the stage that computes and keeps it
    int m_cached = 0;
    int m_rowValues = 0;
    std::string m_chain;
};

} // namespace kforge::core
