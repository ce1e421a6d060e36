// RowRegionFamily with columns = true: a thread per row and part of it, walking its part element by
// element. For rows that run along a strided dim (a sum over the middle dim of [A, R, B], a softmax
// over NCHW channels) while the rows themselves are adjacent in memory: consecutive threads take
// consecutive rows, so every load of a warp is one contiguous run, where a row group of threads
// would read one element per B. With column_parts P > 1 (rows too few to fill the GPU with a thread
// each) P threads share a row, each walking one contiguous Pth of it; after each pass the parts'
// accumulators meet in shared memory and combine in part order (a sum's compensated (acc, lost)
// pairs, a pair reduction's (value, index) pairs), so every part knows the row values and writes the
// element outputs of its own elements. Each reduction is a pass over the part that reads its inputs
// again (no registers hold a row of any length; the L1 / L2 caches serve most re-reads), except for
// a short row (64 floats of inputs or fewer, a softmax over 21 channels): one read fills registers,
// every pass reads those, and each input is read from memory once.
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
    const int parts = params["column_parts"].get<int>();
    const std::vector<PointwiseNode>& nodes = m_expression.nodes();
    const std::vector<PointwiseReduce> kinds = reduceKinds();
    const bool sums = std::find(kinds.begin(), kinds.end(), PointwiseReduce::Sum) != kinds.end();
    const std::string kernel = "kf_row_region_columns";
    std::ostringstream s;
    s << preamble(params, 1, 1) << "constexpr int PARTS = " << parts << ";\n"
      << "constexpr int PART = (N + PARTS - 1) / PARTS; // the elements of a row one part walks\n";
    if (sums)
        // A sum walks the row one term at a time, so its rounding error would grow with the row;
        // compensated summation (Neumaier's: `lost` gathers each addition's rounding error, the
        // larger operand's low bits, and is added back at the end) keeps it near one rounding of
        // the result where the sum cancels, below eager's tree. Kahan's plain form is not enough:
        // a term larger than the running sum loses its own low bits. The compensation skips an
        // addition whose result is not finite (inf - inf would make it NaN where eager's is inf).
        s << "__device__ __forceinline__ void kfAddCompensated(float& acc, float& lost, float y)\n{\n"
          << "    const float next = acc + y;\n"
          << "    if (fabsf(next) < __int_as_float(0x7f800000))\n"
          << "        lost += fabsf(acc) >= fabsf(y) ? (acc - next) + y : (y - next) + acc;\n"
          << "    acc = next;\n}\n";
    s << kernelHead(kernel, "THREADS * PARTS", true, "") << "    const int lane = threadIdx.x % THREADS;\n"
      << "    const int part = PARTS > 1 ? static_cast<int>(threadIdx.x / THREADS) : 0;\n"
      << "    const long long row = static_cast<long long>(blockIdx.x) * THREADS + lane;\n"
      << "    const bool active = row < ROWS; // no early return: the parts of a block meet at barriers\n"
      << "    const int begin = part * PART;\n"
      << "    const int end = active ? (begin + PART < N ? begin + PART : N) : begin;\n";
    if (parts > 1) {
        // Each part's accumulator, for the parts of its row to combine in part order.
        s << "    __shared__ float part_acc[PARTS][THREADS];\n";
        if (sums)
            s << "    __shared__ float part_lost[PARTS][THREADS];\n";
        if (m_indices > 0)
            s << "    __shared__ int part_at[PARTS][THREADS];\n";
    }
    s << rowValueDeclarations("    ");
    for (const Operand& o : m_inputs)
        if (o.used)
            s << "    const long long ro_" << o.name << " = active ? kfRowOffset_" << o.name << "(row) : 0;\n";
    for (const Operand& o : m_outputs)
        if (!o.perRow)
            s << "    const long long ro_" << o.name << " = active ? kfRowOffset_" << o.name << "(row) : 0;\n";
    s << rowInputLoads("    ") << rowStatements(-1, "    ");
    // Each pass over the part's elements of the row: its element inputs loaded again, or, for a
    // short row, taken from the registers one read filled.
    std::string columnLoop = "    for (int c0 = begin; c0 < end; ++c0) {\n"
                             "        float xs[NX][V];\n" +
        elementInputLoads("xs", "true", "        ", 1);
    if (columnsHoldRow()) {
        const std::string heldLoop = "#pragma unroll\n    for (int j = 0; j < PART; ++j) {\n"
                                     "        const int c0 = begin + j;\n"
                                     "        if (c0 >= end)\n            break;\n"
                                     "        float xs[NX][V];\n";
        s << "    float held[PART][NX];\n"
          << heldLoop << elementInputLoads("xs", "true", "        ", 1) << "#pragma unroll\n"
          << "        for (int n = 0; n < NX; ++n)\n            held[j][n] = xs[n][0];\n    }\n";
        columnLoop =
            heldLoop + "#pragma unroll\n        for (int n = 0; n < NX; ++n)\n            xs[n][0] = held[j][n];\n";
    }
    for (std::size_t k = 0; k < m_reduces.size(); ++k) {
        const PointwiseReduce kind = nodes[static_cast<std::size_t>(m_reduces[k])].reduce;
        const bool compensated = kind == PointwiseReduce::Sum;
        const bool pair = isPairReduce(kind);
        s << "    {\n" << row_code::accumulators(kind, "        ");
        if (compensated)
            s << "        float lost = 0.0f;\n";
        s << columnLoop << "        float x[NX];\n#pragma unroll\n"
          << "        for (int n = 0; n < NX; ++n)\n            x[n] = xs[n][0];\n"
          << "        const float c[NC] = {};\n"
          << "        float y[1];\n"
          << "        kfStage" << k << "(x, c, rv, y);\n"
          << "        " << (compensated ? "kfAddCompensated(acc, lost, y[0]);" : row_code::fold(kind, "y[0]", "c0"))
          << "\n    }\n";
        if (parts > 1) {
            // The parts' accumulators combined in part order, the same in every part of the row.
            s << "        part_acc[part][lane] = acc;\n"
              << (compensated ? "        part_lost[part][lane] = lost;\n" : "")
              << (pair ? "        part_at[part][lane] = at;\n" : "") << "        __syncthreads();\n"
              << "        acc = part_acc[0][lane];\n"
              << (compensated ? "        lost = part_lost[0][lane];\n" : "")
              << (pair ? "        at = part_at[0][lane];\n" : "") << "        for (int p = 1; p < PARTS; ++p) {\n";
            if (compensated)
                s << "            kfAddCompensated(acc, lost, part_acc[p][lane]);\n"
                  << "            lost += part_lost[p][lane];\n";
            else
                s << "            " << row_code::fold(kind, "part_acc[p][lane]", "part_at[p][lane]") << "\n";
            s << "        }\n        __syncthreads();\n";
        }
        if (compensated)
            s << "        acc += lost;\n";
        s << reductionResult(static_cast<int>(k), "        ") << "    }\n"
          << rowStatements(static_cast<int>(k), "    ");
    }
    if (!elementOutputNodes().empty())
        s << columnLoop << elementOutputStores("xs", "", "        ", 1) << "    }\n";
    for (const Operand& o : m_outputs)
        if (o.perRow)
            s << "    if (active && part == 0)\n        " << o.name << "[kfRowOffset_" << o.name
              << "(row)] = " << storedRowValue(o) << ";\n";
    s << "}\n";
    std::vector<std::string> args;
    for (const Operand& o : m_inputs)
        args.push_back(o.token);
    for (const Operand& o : m_outputs)
        args.push_back(o.token);
    const std::int64_t grid = (m_rows + threads - 1) / threads;
    return Candidate{s.str(), {{"launches", nlohmann::json::array({launchJson(kernel, grid, threads * parts, args)})}}};
}

} // namespace kforge::core
