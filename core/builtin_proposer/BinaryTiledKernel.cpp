// BinaryFamily's transpose_tile path: an elementwise binary op where an operand's unit-stride dim
// (J) is not the output's innermost dim (I), e.g. SD's VAE attention residual: a channels-last
// output plus an NCHW operand, [N, HW, C] with the operand's unit stride along HW. The strided path
// reads such an operand 32 cache lines per warp; here a block stages a 32 x 32 (I, J) tile of it
// in shared memory, read with a warp along J, and then writes the output with a warp along I, so
// every global access of both phases is coalesced.

#include "builtin_proposer/BinaryFamily.h"

#include <sstream>

namespace kforge::core {

Candidate BinaryFamily::generateTiled(const nlohmann::json& params, const std::string& kernel,
                                      const std::string& prelude) const
{
    const int threads = params["threads"].get<int>();
    const std::size_t inner = m_dims.size() - 1;
    const std::size_t tileDim = static_cast<std::size_t>(m_tileDim);
    // The output is dense over m_dims (storage order): dim d's stride is the product of the later dims.
    std::vector<std::int64_t> outStrides(m_dims.size(), 1);
    for (std::size_t d = inner; d-- > 0;)
        outStrides[d] = outStrides[d + 1] * m_dims[d + 1];
    std::vector<std::size_t> outerDims; // every dim but I and J, outermost first
    std::int64_t outer = 1;
    for (std::size_t d = 0; d < inner; ++d)
        if (d != tileDim) {
            outerDims.push_back(d);
            outer *= m_dims[d];
        }
    const std::int64_t di = m_dims[inner], dj = m_dims[tileDim];
    const std::int64_t tilesI = (di + 31) / 32, tilesJ = (dj + 31) / 32;
    const std::int64_t blocks = tilesI * tilesJ * outer;
    const char* names[2] = {"self", "other"};
    const char* pointers[2] = {"x", "z"};
    const char* offsets[2] = {"oa", "ob"};

    std::ostringstream s;
    s << "// Built-in elementwise " << m_op << (m_inPlace ? "_ (in place)" : "") << " over " << m_numel << " "
      << m_dtype << " outputs in 32 x 32 tiles of merged dims " << tileDim << " (J) and " << inner
      << " (I, the output's innermost)";
    for (int k = 0; k < 2; ++k)
        if (m_tiled[k])
            s << ", '" << names[k] << "' (unit stride along J) staged in shared memory";
    s << ", fp32 math.\n"
      << scalarOperandComment() << "// Template parameters: " << params.dump() << "\n"
      << prelude << "// Merged output dims, then self, other and output strides (elements):";
    for (std::size_t d = 0; d < m_dims.size(); ++d)
        s << " [" << m_dims[d] << ": " << m_strides[0][d] << ", " << m_strides[1][d] << ", " << outStrides[d] << "]";
    s << "\nconstexpr int T = 32;\n"
      << "constexpr int ROWS = THREADS / T; // tile rows per pass of a block\n"
      << "constexpr long long DI = " << di << "LL, DJ = " << dj << "LL;\n"
      << "constexpr long long TILES_I = " << tilesI << "LL, TILES_J = " << tilesJ << "LL, BLOCKS = " << blocks
      << "LL;\n"
      << "// Offsets of outer index o (the dims other than I and J) in self, other and the output.\n"
      << "__device__ __forceinline__ void kfOuterOffsets(long long o, long long& oa, long long& ob, long long& oy)\n{\n"
      << "    (void)o;\n    oa = 0;\n    ob = 0;\n    oy = 0;\n";
    for (std::size_t n = outerDims.size(); n-- > 0;) {
        const std::size_t d = outerDims[n];
        s << "    {\n        const long long q = "
          << (n == 0 ? std::string("o") : "o % " + std::to_string(m_dims[d]) + "LL") << ";\n";
        for (int k = 0; k < 2; ++k)
            if (m_strides[k][d] != 0)
                s << "        " << offsets[k] << " += q * " << m_strides[k][d] << "LL;\n";
        s << "        oy += q * " << outStrides[d] << "LL;\n    }\n";
        if (n > 0)
            s << "    o /= " << m_dims[d] << "LL;\n";
    }
    s << "}\n\n" << kernelSignature(kernel) << "\n{\n";
    for (int k = 0; k < 2; ++k)
        if (m_tiled[k])
            s << "    __shared__ float tile" << k
              << "[T][T + 1]; // [i][j]; the +1 keeps reads along i conflict-free\n";
    if (m_scalarOperand >= 0)
        s << "    const float sv = kfScalarOperand(" << pointers[m_scalarOperand] << ");\n";
    s << "    const int tx = threadIdx.x % T, ty = threadIdx.x / T;\n"
      << "    // Every thread of a block takes the same steps: the __syncthreads() below are reached by all.\n"
      << "    for (long long blk = blockIdx.x; blk < BLOCKS; blk += gridDim.x) {\n"
      << "        const long long i0 = blk % TILES_I * T, j0 = blk / TILES_I % TILES_J * T;\n"
      << "        long long oa, ob, oy;\n"
      << "        kfOuterOffsets(blk / TILES_I / TILES_J, oa, ob, oy);\n";
    const bool anyTiled = m_tiled[0] || m_tiled[1];
    if (anyTiled) {
        s << "        // Transposed operands in: a warp reads 32 consecutive j (unit stride) of one i.\n"
          << "        for (int r = ty; r < T; r += ROWS) {\n"
          << "            const long long i = i0 + r, j = j0 + tx;\n"
          << "            if (i < DI && j < DJ) {\n";
        for (int k = 0; k < 2; ++k)
            if (m_tiled[k])
                s << "                tile" << k << "[r][tx] = kfLoad(" << pointers[k] << "[" << offsets[k] << " + i * "
                  << m_strides[k][inner] << "LL + j]);\n";
        s << "            }\n        }\n        __syncthreads();\n";
    }
    auto operand = [&](int k) {
        if (k == m_scalarOperand)
            return std::string("sv");
        if (m_tiled[k])
            return "tile" + std::to_string(k) + "[tx][r]";
        std::string offset = offsets[k];
        if (m_strides[k][tileDim] != 0)
            offset += " + j * " + std::to_string(m_strides[k][tileDim]) + "LL";
        if (m_strides[k][inner] != 0)
            offset += " + i * " + std::to_string(m_strides[k][inner]) + "LL";
        return "kfLoad(" + std::string(pointers[k]) + "[" + offset + "])";
    };
    s << "        // The output (and the operands not staged): a warp writes 32 consecutive i of one j.\n"
      << "        for (int r = ty; r < T; r += ROWS) {\n"
      << "            const long long i = i0 + tx, j = j0 + r;\n"
      << "            if (i < DI && j < DJ)\n"
      << "                y[oy + j * " << outStrides[tileDim] << "LL + i] = kfStore(kfOp(" << operand(0) << ", "
      << operand(1) << "));\n"
      << "        }\n";
    if (anyTiled)
        s << "        __syncthreads(); // before the next step refills the tiles\n";
    s << "    }\n}\n";

    return oneLaunch(s.str(), kernel, blocks, threads);
}

} // namespace kforge::core
