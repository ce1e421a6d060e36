#include "builtin_proposer/RowRegionCode.h"

#include <sstream>

namespace kforge::core::row_code {

namespace {

const char* identity(PointwiseReduce r)
{
    switch (r) {
    case PointwiseReduce::Sum:
        return "0.0f";
    case PointwiseReduce::Prod:
        return "1.0f";
    case PointwiseReduce::Max:
    case PointwiseReduce::ArgMax:
        return "(-__int_as_float(0x7f800000))";
    case PointwiseReduce::Min:
    case PointwiseReduce::ArgMin:
        break;
    }
    return "__int_as_float(0x7f800000)";
}

// kfPair_<kind>: NaN first (a NaN over a number, the lower index between NaNs), then the strictly
// greater (lesser) value, then on equal values the lower index. Pairs of distinct indices are
// totally ordered by this, so the fold is associative and commutative: the butterfly, the
// per-warp merge and the split merge all give the first extreme.
std::string pairFunction(PointwiseReduce r)
{
    const char* better = r == PointwiseReduce::ArgMax ? "w > v" : "w < v";
    std::ostringstream s;
    s << "__device__ __forceinline__ void kfPair_" << reduceName(r) << "(float& v, int& i, float w, int j)\n{\n"
      << "    const bool take = w != w ? (v == v || j < i) : (" << better << " || (w == v && j < i));\n"
      << "    if (take) {\n        v = w;\n        i = j;\n    }\n}\n";
    return s.str();
}

} // namespace

const char* reduceName(PointwiseReduce r)
{
    switch (r) {
    case PointwiseReduce::Sum:
        return "sum";
    case PointwiseReduce::Prod:
        return "prod";
    case PointwiseReduce::Max:
        return "max";
    case PointwiseReduce::ArgMax:
        return "argmax";
    case PointwiseReduce::ArgMin:
        return "argmin";
    case PointwiseReduce::Min:
        break;
    }
    return "min";
}

std::string combine(PointwiseReduce r, const std::string& a, const std::string& b)
{
    if (r == PointwiseReduce::Sum)
        return "(" + a + " + " + b + ")";
    if (r == PointwiseReduce::Prod)
        return "(" + a + " * " + b + ")";
    return std::string(r == PointwiseReduce::Max ? "kfMaximum(" : "kfMinimum(") + a + ", " + b + ")";
}

std::string accumulators(PointwiseReduce r, const std::string& indent)
{
    std::string s = indent + "float acc = " + identity(r) + ";\n";
    if (isPairReduce(r))
        s += indent + "int at = 0x7fffffff; // past every column: any element wins over it\n";
    return s;
}

std::string fold(PointwiseReduce r, const std::string& value, const std::string& index)
{
    if (isPairReduce(r))
        return std::string("kfPair_") + reduceName(r) + "(acc, at, " + value + ", " + index + ");";
    return "acc = " + combine(r, "acc", value) + ";";
}

std::string reduceFunctions(PointwiseReduce r)
{
    const bool pair = isPairReduce(r);
    std::ostringstream s;
    if (pair)
        s << pairFunction(r) << "__device__ __forceinline__ void kfRow_" << reduceName(r)
          << "(float& v, int& i, float* scratch, int* scratch_at)\n{\n"
          << "#pragma unroll\n    for (int o = 16; o > 0; o >>= 1) {\n"
          << "        const float w = __shfl_xor_sync(0xffffffffu, v, o);\n"
          << "        const int j = __shfl_xor_sync(0xffffffffu, i, o);\n"
          << "        kfPair_" << reduceName(r) << "(v, i, w, j);\n    }\n";
    else
        s << "__device__ __forceinline__ float kfRow_" << reduceName(r) << "(float v, float* scratch)\n{\n"
          << "#pragma unroll\n    for (int o = 16; o > 0; o >>= 1)\n"
          << "        v = " << combine(r, "v", "__shfl_xor_sync(0xffffffffu, v, o)") << ";\n";
    s << "    if constexpr (WARPS > 1) {\n"
      << "        const int group = threadIdx.x / THREADS, lane = threadIdx.x % THREADS;\n"
      << "        if ((lane & 31) == 0) {\n"
      << "            scratch[group * WARPS + (lane >> 5)] = v;\n"
      << (pair ? "            scratch_at[group * WARPS + (lane >> 5)] = i;\n" : "") << "        }\n"
      << "        __syncthreads();\n        v = scratch[group * WARPS];\n"
      << (pair ? "        i = scratch_at[group * WARPS];\n" : "") << "#pragma unroll\n"
      << "        for (int w = 1; w < WARPS; ++w)\n";
    if (pair)
        s << "            kfPair_" << reduceName(r)
          << "(v, i, scratch[group * WARPS + w], scratch_at[group * WARPS + w]);\n";
    else
        s << "            v = " << combine(r, "v", "scratch[group * WARPS + w]") << ";\n";
    s << "        __syncthreads();\n    }\n" << (pair ? "" : "    return v;\n") << "}\n";
    return s.str();
}

std::string rowCombine(PointwiseReduce r)
{
    if (isPairReduce(r))
        return std::string("kfRow_") + reduceName(r) + "(acc, at, scratch, scratch_at);";
    return std::string("acc = kfRow_") + reduceName(r) + "(acc, scratch);";
}

} // namespace kforge::core::row_code
