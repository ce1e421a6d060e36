#include "builtin_proposer/RowRegionCode.h"

#include <sstream>

namespace kforge::core::row_code {

const char* reduceName(PointwiseReduce r)
{
    switch (r) {
    case PointwiseReduce::Sum:
        return "sum";
    case PointwiseReduce::Prod:
        return "prod";
    case PointwiseReduce::Max:
        return "max";
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

const char* identity(PointwiseReduce r)
{
    if (r == PointwiseReduce::Sum)
        return "0.0f";
    if (r == PointwiseReduce::Prod)
        return "1.0f";
    return r == PointwiseReduce::Max ? "(-__int_as_float(0x7f800000))" : "__int_as_float(0x7f800000)";
}

std::string reduceFunction(PointwiseReduce r)
{
    std::ostringstream s;
    s << "__device__ __forceinline__ float kfRow_" << reduceName(r) << "(float v, float* scratch)\n{\n"
      << "#pragma unroll\n    for (int o = 16; o > 0; o >>= 1)\n"
      << "        v = " << combine(r, "v", "__shfl_xor_sync(0xffffffffu, v, o)") << ";\n"
      << "    if constexpr (WARPS > 1) {\n"
      << "        const int group = threadIdx.x / THREADS, lane = threadIdx.x % THREADS;\n"
      << "        if ((lane & 31) == 0)\n            scratch[group * WARPS + (lane >> 5)] = v;\n"
      << "        __syncthreads();\n        v = scratch[group * WARPS];\n"
      << "#pragma unroll\n        for (int w = 1; w < WARPS; ++w)\n"
      << "            v = " << combine(r, "v", "scratch[group * WARPS + w]") << ";\n"
      << "        __syncthreads();\n    }\n    return v;\n}\n";
    return s.str();
}

} // namespace kforge::core::row_code
