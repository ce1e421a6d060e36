#pragma once
// Softmax / log_softmax over the last dimension of a contiguous float32/float16/bfloat16 tensor
// (aten::softmax.int, aten::_softmax, aten::log_softmax.int, aten::_log_softmax), any row length.
// Parameters (docs/builtin-proposer.md):
//   threads         threads per block (64..1024, power of two)
//   rows_per_block  1: block-per-row (all threads on one row, warp shuffles + shared memory);
//                   4..32: warp-per-row (threads = 32 * rows_per_block, shuffles only)
//   vector_width    elements per load/store (1, 2, 4, 8; at most 16 bytes; divides the row length)
//   online          single pass computing max and sum together (rescaled) vs separate max and sum passes
//   registers       the row is read once into registers (only when it fits: <= 32 floats a thread)
// Accumulation is in fp32. Thread: see KernelFamily.

#include "builtin_proposer/KernelFamily.h"

#include <cstdint>
#include <memory>

namespace kforge::core {

class SoftmaxFamily final : public KernelFamily {
public:
    /// True for the four ops this family is responsible for (whether or not the card's layout is).
    static bool coversOp(const std::string& qualifiedOp);
    /// Unsupported with the reason when the card's layout, dtype or arguments are not handled.
    static Result<std::unique_ptr<SoftmaxFamily>> create(const OperatorCard& card);

    std::string name() const override { return "softmax"; }
    nlohmann::json rootParams() const override;
    Result<Candidate> generate(const nlohmann::json& params) const override;
    std::vector<Transformation> transformations(const nlohmann::json& params) const override;

private:
    struct Params {
        int threads = 256;
        int rowsPerBlock = 1;
        int vectorWidth = 1;
        bool online = false;
        bool registers = false;
        bool fastMath = false; // __expf / __logf (hardware approximations) instead of expf / logf
        int rowsPerWarp = 1;   // warp-per-row with registers: rows one warp holds and reduces together
    };

    SoftmaxFamily() = default;
    Result<Params> parse(const nlohmann::json& params) const;
    static nlohmann::json toJson(const Params& p);
    bool vectorWidthAllowed(int width) const;
    int threadsPerRow(const Params& p) const { return p.rowsPerBlock == 1 ? p.threads : 32; }
    /// Row elements each thread holds when the row is kept in registers.
    std::int64_t registerElements(const Params& p) const;
    /// Turns `registers` off when it no longer fits and `online` off when registers are on.
    Params normalized(Params p) const;

    bool m_log = false;
    std::string m_inDtype;
    std::string m_outDtype;
    std::int64_t m_rows = 0;
    std::int64_t m_rowLength = 0;
};

} // namespace kforge::core
