#pragma once
// group_norm of a contiguous NCHW-style float32/float16/bfloat16 tensor [N, C, *] (aten::group_norm),
// optional per-channel weight/bias [C], fp32 Welford statistics. Parameters (docs/builtin-proposer.md):
// threads, vector_width (the spatial size must be a multiple so a vector never straddles channels),
// split (1: one block per (n, group); S > 1: S blocks per group write Welford partials to a scratch
// buffer, a second kernel merges them and normalizes). Thread: see KernelFamily.

#include "search/builtin/KernelFamily.h"

#include <memory>

namespace kforge::core {

class GroupNormFamily final : public KernelFamily {
public:
    static bool coversOp(const std::string& qualifiedOp) { return qualifiedOp == "aten::group_norm"; }
    static Result<std::unique_ptr<GroupNormFamily>> create(const OperatorCard& card);

    std::string name() const override { return "group_norm"; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;
    std::vector<Transformation> transformations(const nlohmann::json& params) const override;

private:
    GroupNormFamily() = default;
    Result<void> check(const nlohmann::json& params) const;

    std::string m_inDtype, m_outDtype, m_weightDtype, m_biasDtype;
    std::int64_t m_batch = 0, m_channels = 0, m_groups = 0, m_spatial = 0;
    double m_eps = 0;
};

} // namespace kforge::core
