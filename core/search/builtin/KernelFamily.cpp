#include "search/builtin/KernelFamily.h"

namespace kforge::core {

bool isBuiltinFloatDtype(const std::string& dtype)
{
    return dtype == "float32" || dtype == "float16" || dtype == "bfloat16";
}

int dtypeBytes(const std::string& dtype)
{
    return dtype == "float32" ? 4 : 2;
}

const char* dtypeCType(const std::string& dtype)
{
    if (dtype == "float16")
        return "__half";
    if (dtype == "bfloat16")
        return "__nv_bfloat16";
    return "float";
}

namespace {

std::string loadExpr(const std::string& dtype)
{
    if (dtype == "float16")
        return "__half2float(v)";
    if (dtype == "bfloat16")
        return "__bfloat162float(v)";
    return "v";
}

std::string storeExpr(const std::string& dtype)
{
    // Round to nearest even, as PyTorch's conversions do.
    if (dtype == "float16")
        return "__float2half_rn(v)";
    if (dtype == "bfloat16")
        return "__float2bfloat16_rn(v)";
    return "v";
}

} // namespace

std::string dtypePrelude(const std::string& inDtype, const std::string& outDtype)
{
    std::string s;
    if (inDtype == "float16" || outDtype == "float16")
        s += "#include <cuda_fp16.h>\n";
    if (inDtype == "bfloat16" || outDtype == "bfloat16")
        s += "#include <cuda_bf16.h>\n";
    s += "typedef " + std::string(dtypeCType(inDtype)) + " in_t;\n";
    s += "typedef " + std::string(dtypeCType(outDtype)) + " out_t;\n";
    s += "__device__ __forceinline__ float kfLoad(in_t v) { return " + loadExpr(inDtype) + "; }\n";
    s += "__device__ __forceinline__ out_t kfStore(float v) { return " + storeExpr(outDtype) + "; }\n";
    return s;
}

} // namespace kforge::core
