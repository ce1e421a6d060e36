#pragma once
// A region card (OperatorCard::region) whose members are all pointwise ops of the op table
// (pointwise/PointwiseOpTable.h): one kernel, one pass over memory, computes every region output
// from the region inputs through the chain's expression DAG (pointwise/PointwiseExpression.h), in
// fp32 with 16-bit intermediates rounded as eager rounds them.
//
// Iteration: the region outputs' common sizes, walked in the first output's storage order (size-1
// dims dropped, dims every operand steps through as one merged). Each operand is then
//   flat     laid out as that walk (a full-size input or an output of the first output's layout):
//            read and written as whole vectors at the walk index;
//   scalar   the same element everywhere (0-dim, or broadcast over every dim): read once per thread;
//   strided  anything else (a broadcast per-channel operand, a transposed input, an output of
//            another dense layout): its offset computed from the walk index with sizes and strides
//            baked in, whole vectors where its strides allow.
// When every operand is flat or scalar the elements after the last whole vector are a scalar
// tail; otherwise vector_width must divide the innermost merged dim.
// Parameters (docs/builtin-proposer.md): threads (64..1024), vector_width (1, 2, 4, 8; at most 16
// bytes of any vector-moved operand), items_per_thread (1..8), as UnaryFamily's.
// A cat member (rotary's cat(-x2, x1)) is a select by the element's coordinate along the cat dim;
// each input a branch reads is an operand of its own, read at offsets shifted back by the branch's
// start and only for elements in that branch (pointwise/PointwiseExpression.h, "Concatenation"),
// whole vectors where a vector never straddles a branch boundary.
// A single-op card of a table op no tuned family covers runs as its one-member chain (createForOp):
// the launch plan names the card's own tensor arguments, and an in-place op writes through self
// (self and out0 alias: no __restrict__ on any pointer; each element is read before the same
// thread writes it).
// Thread: see KernelFamily.

#include "builtin_proposer/KernelFamily.h"
#include "pointwise/PointwiseExpression.h"

#include <memory>

namespace kforge::core {

class PointwiseRegionFamily final : public KnobFamily {
public:
    /// Unsupported with the reason when a member is not pointwise in the table or the layouts are
    /// not covered (outputs of different sizes, an output not dense, an input that does not broadcast).
    static Result<std::unique_ptr<PointwiseRegionFamily>> create(const OperatorCard& card);
    /// Single-op card `card` (not a region) through its one-member chain (regions/RegionOperatorCard.h).
    static Result<std::unique_ptr<PointwiseRegionFamily>> createForOp(const OperatorCard& card);

    std::string name() const override { return "pointwise_region"; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;

private:
    enum class Mode { Flat, Scalar, Strided };
    /// lo <= cat `cat`'s coordinate < hi.
    struct CatMask {
        int cat = -1;
        std::int64_t lo = 0, hi = 0;
    };
    struct Operand {
        std::string name;  // "in0", "out1"
        std::string token; // what the launch plan passes: "ptr:in0", "ptr:self", "ptr:out1"
        std::string dtype;
        bool output = false;
        bool used = true; // inputs: read by some output
        Mode mode = Mode::Flat;
        std::vector<std::int64_t> strides; // over m_dims (elements)
        PointwiseInputRead read;           // inputs: the region input and the context it is read in
        std::int64_t shift = 0;            // a branch's input: added to its offset (elements)
        std::vector<CatMask> masks = {};   // a branch's input: where it is read (all of them hold)
    };
    /// Where the element at walk index i is along cat c's dim: (i / stride) % size + offset over the
    /// first output's layout (offset: the enclosing branches' shifts along that dim).
    struct CatCoordinate {
        std::int64_t stride = 1;
        std::int64_t size = 1;
        std::int64_t offset = 0;
    };

    explicit PointwiseRegionFamily(PointwiseExpression expression) : m_expression(std::move(expression)) {}
    std::vector<Knob> knobs() const override;
    Result<void> check(const nlohmann::json& params) const override;
    bool vectorWidthAllowed(int width) const;
    bool hasStrided() const;
    /// Whether strided operand `op` moves as whole vectors of `width`.
    bool vectorMoves(const Operand& op, int width) const;
    /// The per-operand types, loaders, storers, vector structs and offset functions.
    std::string operandDefinitions(int width) const;
    /// The statements reading operand input `k` of vector j (element index i) into xs[k][n][e].
    std::string loadStatements(std::size_t n, int width) const;
    std::string storeStatements(std::size_t o, int width) const;
    /// ", a cat's branch: cat coordinates LO to HI ..." for a branch operand's comment ("" otherwise).
    static std::string branchText(const Operand& o);
    /// Whether the elements of a vector of `width` always share their coordinate's branch along cat `c`.
    bool catVectorsUniform(int c, int width) const;
    /// The element function's arguments: each input read (PointwiseExpression::inputReads) as
    /// PREFIX<operand name>SUFFIX, each used cat's coordinate as `kfCat<c>(AT)`, then y0, y1, ...
    std::string regionArguments(const std::string& prefix, const std::string& suffix, const std::string& at) const;

    PointwiseExpression m_expression;
    std::vector<Operand> m_inputs, m_outputs;
    std::vector<CatCoordinate> m_cats; // per cat of the expression
    std::vector<std::int64_t> m_dims;  // merged output dims, outermost first in storage
    std::int64_t m_numel = 0;
    std::string m_chain;    // the chain in one line, for the source's comment
    bool m_inPlace = false; // a single in-place op: out0 is its self
};

} // namespace kforge::core
