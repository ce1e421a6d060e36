// RowRegionFamily with split > 1: a row cut into chunks, one block each (few long rows, or rows too
// long to hold in registers). Reduction k is kernel kf_row_region_stage<k>: every block computes the
// row values known before it (merging the earlier stages' partials of its row, in chunk order, so
// every block of a row gets the same values), reduces its chunk and writes one partial. The last
// kernel, kf_row_region_outputs, merges every stage and writes its chunk of the element outputs
// (the row outputs from the row's first block; a chain of row outputs only, a mean of every element,
// runs it as one warp per row, which has nothing else to do). Each input is read once per kernel. A pair
// reduction (argmax) writes its partial's index beside it, to the `indices` scratch.
#include "builtin_proposer/RowRegionCode.h"
#include "builtin_proposer/RowRegionFamily.h"

#include <sstream>

namespace kforge::core {

namespace {

// `float kfMerge_<kind>(const float* p)`: a row's SPLIT partials combined in chunk order; for a pair
// `void kfMerge_<kind>(const float* p, const int* q, float& acc, int& at)`, with their indices q.
std::string mergeFunction(PointwiseReduce r)
{
    std::ostringstream s;
    if (isPairReduce(r))
        s << "__device__ __forceinline__ void kfMerge_" << row_code::reduceName(r)
          << "(const float* p, const int* q, float& acc, int& at)\n{\n"
          << "    acc = p[0];\n    at = q[0];\n";
    else
        s << "__device__ __forceinline__ float kfMerge_" << row_code::reduceName(r) << "(const float* p)\n{\n"
          << "    float acc = p[0];\n";
    s << "    for (int s = 1; s < SPLIT; ++s)\n"
      << "        " << row_code::fold(r, "p[s]", "q[s]") << "\n"
      << (isPairReduce(r) ? "}\n" : "    return acc;\n}\n");
    return s.str();
}

} // namespace

std::string RowRegionFamily::splitRowStart(int stagesKnown, bool blockPerRow) const
{
    const std::vector<PointwiseNode>& nodes = m_expression.nodes();
    std::ostringstream s;
    if (stagesKnown < static_cast<int>(m_reduces.size())) {
        s << "    __shared__ float scratch[WARPS > 1 ? WARPS : 1];\n";
        if (m_indices > 0)
            s << "    __shared__ int scratch_at[WARPS > 1 ? WARPS : 1];\n";
    }
    s << "    const int lane = threadIdx.x;\n"
      << (blockPerRow ? "    const long long row = blockIdx.x;\n    const int part = 0;\n"
                      : "    const long long row = blockIdx.x / SPLIT;\n"
                        "    const int part = static_cast<int>(blockIdx.x % SPLIT);\n")
      << "    const bool active = true;\n"
      << rowValueDeclarations("    ");
    for (const Operand& o : m_inputs)
        if (o.used)
            s << "    const long long ro_" << o.name << " = kfRowOffset_" << o.name << "(row);\n";
    s << rowInputLoads("    ") << rowStatements(-1, "    ");
    for (int j = 0; j < stagesKnown; ++j) {
        const auto reduce = static_cast<std::size_t>(m_reduces[static_cast<std::size_t>(j)]);
        const std::string at = "(" + std::to_string(j) + "LL * ROWS + row) * SPLIT";
        const std::string merge = std::string("kfMerge_") + row_code::reduceName(nodes[reduce].reduce);
        if (m_indexSlot[reduce] >= 0)
            s << "    " << merge << "(partials + " << at << ", indices + " << at << ", "
              << valueName(static_cast<int>(reduce), 0) << ", ri[" << m_indexSlot[reduce] << "]);\n";
        else
            s << "    " << valueName(static_cast<int>(reduce), 0) << " = " << merge << "(partials + " << at << ");\n";
        s << rowStatements(j, "    ");
    }
    s << "    const int begin = part * CHUNK;\n"
      << "    const int end = begin + CHUNK < N ? begin + CHUNK : N;\n"
      << "    (void)active;\n    (void)begin;\n    (void)end;\n";
    return s.str();
}

Result<Candidate> RowRegionFamily::generateSplit(const nlohmann::json& params) const
{
    const int v = params["vector_width"].get<int>();
    const int threads = params["threads"].get<int>();
    const int split = params["split"].get<int>();
    const std::int64_t chunk = chunkLength(split, v);
    const std::vector<PointwiseNode>& nodes = m_expression.nodes();
    std::ostringstream s;
    s << preamble(params, 1, 1) << "constexpr int SPLIT = " << split << ";\n"
      << "constexpr int CHUNK = " << chunk << ";\n";
    for (const PointwiseReduce kind : reduceKinds())
        s << mergeFunction(kind);
    // The loop over a block's chunk, each thread a vector at a time, the inputs loaded into xs.
    const std::string chunkLoop = "#pragma unroll 4\n"
                                  "    for (int c0 = begin + lane * V; c0 < end; c0 += THREADS * V) {\n"
                                  "        float xs[NX][V];\n" +
        elementInputLoads("xs", "true", "        ", v);

    std::vector<std::string> inputs;
    for (const Operand& o : m_inputs)
        inputs.push_back(o.token);
    // The partials of every stage; where the chain has a pair reduction, their indices too.
    const bool pairs = m_indices > 0;
    std::vector<std::string> scratchArgs = {"ptr:scratch.partials"};
    if (pairs)
        scratchArgs.push_back("ptr:scratch.indices");
    const std::string writable =
        pairs ? "float* __restrict__ partials, int* __restrict__ indices" : "float* __restrict__ partials";
    const std::string readable = pairs ? "const float* __restrict__ partials, const int* __restrict__ indices"
                                       : "const float* __restrict__ partials";
    nlohmann::json launches = nlohmann::json::array();
    const std::int64_t grid = m_rows * split;
    for (std::size_t k = 0; k < m_reduces.size(); ++k) {
        const PointwiseReduce kind = nodes[static_cast<std::size_t>(m_reduces[k])].reduce;
        const std::string kernel = "kf_row_region_stage" + std::to_string(k);
        s << kernelHead(kernel, "THREADS", false, writable) << splitRowStart(static_cast<int>(k))
          << row_code::accumulators(kind, "    ") << chunkLoop
          << "#pragma unroll\n        for (int e = 0; e < V; ++e) {\n"
          << "            float x[NX];\n#pragma unroll\n"
          << "            for (int n = 0; n < NX; ++n)\n                x[n] = xs[n][e];\n"
          << "            const float c[NC] = {};\n"
          << "            float y[1];\n"
          << "            kfStage" << k << "(x, c, rv, y);\n"
          << "            " << row_code::fold(kind, "y[0]", "c0 + e") << "\n"
          << "        }\n    }\n"
          << "    " << row_code::rowCombine(kind) << "\n"
          << "    if (lane == 0) {\n        partials[(" << k << "LL * ROWS + row) * SPLIT + part] = acc;\n"
          << (isPairReduce(kind) ? "        indices[(" + std::to_string(k) + "LL * ROWS + row) * SPLIT + part] = at;\n"
                                 : std::string())
          << "    }\n}\n";
        std::vector<std::string> args = inputs;
        args.insert(args.end(), scratchArgs.begin(), scratchArgs.end());
        launches.push_back(launchJson(kernel, grid, threads, args));
    }

    const std::string kernel = "kf_row_region_outputs";
    const bool rowOutputsOnly = elementOutputNodes().empty();
    s << kernelHead(kernel, "THREADS", true, readable)
      << splitRowStart(static_cast<int>(m_reduces.size()), rowOutputsOnly);
    if (!rowOutputsOnly) {
        for (const Operand& o : m_outputs)
            if (!o.perRow)
                s << "    const long long ro_" << o.name << " = kfRowOffset_" << o.name << "(row);\n";
        s << chunkLoop << elementOutputStores("xs", "", "        ", v) << "    }\n";
    }
    for (const Operand& o : m_outputs)
        if (o.perRow)
            s << "    if (part == 0 && lane == 0)\n        " << o.name << "[kfRowOffset_" << o.name
              << "(row)] = " << storedRowValue(o) << ";\n";
    s << "}\n";
    std::vector<std::string> args = inputs;
    for (const Operand& o : m_outputs)
        args.push_back(o.token);
    args.insert(args.end(), scratchArgs.begin(), scratchArgs.end());
    launches.push_back(rowOutputsOnly ? launchJson(kernel, m_rows, 32, args) : launchJson(kernel, grid, threads, args));

    const std::int64_t partials = static_cast<std::int64_t>(m_reduces.size()) * m_rows * split;
    nlohmann::json scratch = nlohmann::json::array({{{"name", "partials"}, {"bytes", partials * 4}, {"zero", false}}});
    if (pairs)
        scratch.push_back({{"name", "indices"}, {"bytes", partials * 4}, {"zero", false}});
    return Candidate{s.str(), {{"launches", launches}, {"scratch", scratch}}};
}

} // namespace kforge::core
