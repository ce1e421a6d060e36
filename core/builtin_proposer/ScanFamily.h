#pragma once
// Inclusive scans along one dim of a contiguous float32/float16/bfloat16 tensor: aten::cumsum and
// aten::cumprod (dtype None or a float dtype), fp32 accumulation, each output rounded once.
// Two layouts of the work, by where the scanned dim lies:
// - innermost (rows): a warp or a block per row walks it in chunks of (threads per row) x V
//   elements: a thread's V values are scanned in registers, the threads' totals by warp shuffles
//   and, in a block, the warps' totals through shared memory; the running value is carried from
//   chunk to chunk. Few long rows split over SPLIT blocks each: a first launch writes each
//   segment's total to scratch, the second scans every segment from the total of those before it.
// - with inner dims after it (columns): a thread per V adjacent columns walks the dim, its loads
//   issued UNROLL steps ahead of the adds.
// Parameters (docs/builtin-proposer.md, "scan"): rows: threads, warp_per_row, vector_width, split;
// columns: threads, vector_width, unroll. Thread: see KernelFamily.

#include "builtin_proposer/KernelFamily.h"

#include <memory>

namespace kforge::core {

class ScanFamily final : public KnobFamily {
public:
    /// "aten::cumsum", "aten::cumprod" (qualified names: the dimname overloads are not covered).
    static bool coversOp(const std::string& qualifiedOp);
    static Result<std::unique_ptr<ScanFamily>> create(const OperatorCard& card);

    std::string name() const override { return "scan"; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;

private:
    ScanFamily() = default;
    std::vector<Knob> knobs() const override;
    Result<void> check(const nlohmann::json& params) const override;
    bool scansRows() const { return m_inner == 1; }
    Candidate rowsCandidate(const nlohmann::json& params) const;
    Candidate columnsCandidate(const nlohmann::json& params) const;
    /// Dtype prelude, the combine function and its identity, shared by both layouts.
    std::string prelude(const nlohmann::json& params) const;

    std::string m_kernel; // "kf_cumsum", "kf_cumprod"
    bool m_product = false;
    std::string m_inDtype, m_outDtype;
    std::int64_t m_outer = 0;  // product of the dims before the scanned one
    std::int64_t m_length = 0; // the scanned dim's size
    std::int64_t m_inner = 0;  // product of the dims after it
};

} // namespace kforge::core
