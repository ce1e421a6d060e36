#pragma once
// aten::cat of 2 to 8 float32/float16/bfloat16 tensors of the output's dtype, any non-negative strides
// (rotate_half's torch.cat((-x2, x1), dim=-1) of a sliced, transposed query: 1.8% of Qwen s512's
// model time in run 8), into a dense output of any layout (what eager allocates). One launch: each
// input is copied into its slab of the output by its own range of the grid's blocks (in proportion
// to its size), its elements walked in the output's storage order, dims merged where both the input
// and the output slab step through them as one, vectors where both rows allow. A pure copy: the
// values are moved, never converted.
// Parameters (docs/builtin-proposer.md): threads, vector_width. Thread: see KernelFamily.

#include "builtin_proposer/KernelFamily.h"

#include <memory>

namespace kforge::core {

class CatFamily final : public KnobFamily {
public:
    static bool coversOp(const std::string& qualifiedOp) { return qualifiedOp == "aten::cat"; }
    static Result<std::unique_ptr<CatFamily>> create(const OperatorCard& card);

    std::string name() const override { return "cat"; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;

private:
    CatFamily() = default;
    std::vector<Knob> knobs() const override;
    Result<void> check(const nlohmann::json& params) const override;
    /// Whether every input's copy can move `width` elements at a time.
    bool vectorWidthFits(int width) const;

    // One input's copy: merged dims (outermost first) with the input's and the output's strides,
    // and where its slab starts in the output (elements).
    struct Piece {
        std::vector<std::int64_t> sizes, inStrides, outStrides;
        std::int64_t outBase = 0;
        std::int64_t numel = 0;
    };
    std::string m_dtype;
    int m_dim = 0;
    std::vector<Piece> m_pieces;
};

} // namespace kforge::core
