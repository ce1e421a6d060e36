// RowRegionFamily with columns = true: one thread per row, walking it element by element. For rows
// that run along a strided dim (a sum over the middle dim of [A, R, B], a softmax over NCHW
// channels) while the rows themselves are adjacent in memory: consecutive threads take consecutive
// rows, so every load of a warp is one contiguous run, where a row group of threads would read one
// element per B. Each reduction is a pass over the row that reads its inputs again (no registers
// hold a row of any length; the L1 / L2 caches serve most re-reads), except for a short row (64
// floats of inputs or fewer, a softmax over 21 channels): one read fills registers, every pass
// reads those, and each input is read from memory once.
#include "builtin_proposer/RowRegionCode.h"
#include "builtin_proposer/RowRegionFamily.h"

#include <algorithm>
#include <sstream>

namespace kforge::core {

bool RowRegionFamily::rowsRunAlongMemory() const
{
    // The reduced tensor's operand: the first element input. Its rows are strided and adjacent
    // rows are adjacent elements.
    for (const Operand& o : m_inputs)
        if (o.used && !o.perRow)
            return !o.rowStrides.empty() && o.rowStrides.back() != 1 && !o.outerStrides.empty() &&
                o.outerStrides.back() == 1;
    return false;
}

bool RowRegionFamily::columnsHoldRow() const
{
    // Fully unrolled loops over the row keep it in registers; past 64 floats a thread the register
    // file would spill (and occupancy drop) for reads the caches mostly serve anyway.
    constexpr std::int64_t kHeldFloats = 64;
    return m_rowLength * std::max(elementInputs(), 1) <= kHeldFloats;
}

Result<Candidate> RowRegionFamily::generateColumns(const nlohmann::json& params) const
{
    const int threads = params["threads"].get<int>();
    const std::vector<PointwiseNode>& nodes = m_expression.nodes();
    const std::string kernel = "kf_row_region_columns";
    std::ostringstream s;
    s << preamble(params, 1, 1) << kernelHead(kernel, "THREADS", true, "")
      << "    const long long row = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;\n"
      << "    if (row >= ROWS)\n        return;\n"
      << "    const bool active = true;\n    (void)active;\n"
      << "    float rv[NRV];\n    (void)rv;\n";
    for (const Operand& o : m_inputs)
        if (o.used)
            s << "    const long long ro_" << o.name << " = kfRowOffset_" << o.name << "(row);\n";
    for (const Operand& o : m_outputs)
        if (!o.perRow)
            s << "    const long long ro_" << o.name << " = kfRowOffset_" << o.name << "(row);\n";
    s << rowInputLoads("    ") << rowStatements(-1, "    ");
    // Each pass over the row: its element inputs loaded again, or, for a short row, taken from the
    // registers one read filled.
    std::string columnLoop = "    for (int c0 = 0; c0 < N; ++c0) {\n"
                             "        float xs[NX][V];\n" +
        elementInputLoads("xs", "true", "        ", 1);
    if (columnsHoldRow()) {
        s << "    float held[N][NX];\n#pragma unroll\n"
          << columnLoop << "#pragma unroll\n"
          << "        for (int n = 0; n < NX; ++n)\n            held[c0][n] = xs[n][0];\n    }\n";
        columnLoop = "#pragma unroll\n    for (int c0 = 0; c0 < N; ++c0) {\n"
                     "        float xs[NX][V];\n#pragma unroll\n"
                     "        for (int n = 0; n < NX; ++n)\n            xs[n][0] = held[c0][n];\n";
    }
    for (std::size_t k = 0; k < m_reduces.size(); ++k) {
        const PointwiseReduce kind = nodes[static_cast<std::size_t>(m_reduces[k])].reduce;
        // A sum walks the row one term at a time, so its rounding error would grow with the row;
        // compensated summation (Neumaier's: `lost` gathers each addition's rounding error, the
        // larger operand's low bits, and is added back at the end) keeps it near one rounding of
        // the result where the sum cancels, below eager's tree. Kahan's plain form is not enough:
        // a term larger than the running sum loses its own low bits. The compensation skips an
        // addition whose result is not finite (inf - inf would make it NaN where eager's is inf).
        const bool compensated = kind == PointwiseReduce::Sum;
        s << "    {\n        float acc = " << row_code::identity(kind) << ";\n";
        if (compensated)
            s << "        float lost = 0.0f;\n";
        s << columnLoop << "        float x[NX];\n#pragma unroll\n"
          << "        for (int n = 0; n < NX; ++n)\n            x[n] = xs[n][0];\n"
          << "        const float c[NC] = {};\n"
          << "        float y[1];\n"
          << "        kfStage" << k << "(x, c, rv, y);\n";
        if (compensated)
            s << "        const float next = acc + y[0];\n"
              << "        if (fabsf(next) < __int_as_float(0x7f800000))\n"
              << "            lost += fabsf(acc) >= fabsf(y[0]) ? (acc - next) + y[0] : (y[0] - next) + acc;\n"
              << "        acc = next;\n";
        else
            s << "        acc = " << row_code::combine(kind, "acc", "y[0]") << ";\n";
        s << "    }\n"
          << "    " << valueName(m_reduces[k], 0) << (compensated ? " = acc + lost;\n    }\n" : " = acc;\n    }\n")
          << rowStatements(static_cast<int>(k), "    ");
    }
    if (!elementOutputNodes().empty())
        s << columnLoop << elementOutputStores("xs", "", "        ", 1) << "    }\n";
    for (const Operand& o : m_outputs)
        if (o.perRow)
            s << "    " << o.name << "[kfRowOffset_" << o.name << "(row)] = kfStore_" << o.name << "("
              << valueName(o.node, 0) << ");\n";
    s << "}\n";
    std::vector<std::string> args;
    for (const Operand& o : m_inputs)
        args.push_back(o.token);
    for (const Operand& o : m_outputs)
        args.push_back(o.token);
    const std::int64_t grid = (m_rows + threads - 1) / threads;
    return Candidate{s.str(), {{"launches", nlohmann::json::array({launchJson(kernel, grid, threads, args)})}}};
}

} // namespace kforge::core
