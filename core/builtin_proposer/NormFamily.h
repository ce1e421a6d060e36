#pragma once
// layer_norm and rms_norm over the trailing `normalized_shape` dims of a contiguous float32/float16/
// bfloat16 tensor (aten::layer_norm, aten::rms_norm), optional weight/bias, fp32 accumulation.
// Parameters (docs/builtin-proposer.md): threads, warp_per_row, vector_width, and for layer_norm
// welford (single-pass Welford statistics vs two-pass mean then variance). Thread: see KernelFamily.

#include "builtin_proposer/KernelFamily.h"

#include <memory>

namespace kforge::core {

class NormFamily final : public KnobFamily {
public:
    static bool coversOp(const std::string& qualifiedOp);
    static Result<std::unique_ptr<NormFamily>> create(const OperatorCard& card);

    std::string name() const override { return m_rms ? "rms_norm" : "layer_norm"; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;

private:
    NormFamily() = default;
    std::vector<Knob> knobs() const override;
    Result<void> check(const nlohmann::json& params) const override;
    /// fp32 values per thread when the row is kept in registers.
    std::int64_t registerElements(int threads, bool warp, int vectorWidth) const;

    bool m_rms = false;
    std::string m_inDtype, m_outDtype, m_weightDtype, m_biasDtype; // empty dtype: argument is None
    std::int64_t m_rows = 0;
    std::int64_t m_rowLength = 0;
    double m_eps = 0;
};

} // namespace kforge::core
