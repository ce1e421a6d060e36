#include "builtin_proposer/KernelFamily.h"

#include "pointwise/DtypePromotion.h"

#include <algorithm>
#include <sstream>

namespace kforge::core {

bool isBuiltinFloatDtype(const std::string& dtype)
{
    return dtype == "float32" || dtype == "float16" || dtype == "bfloat16";
}

bool isBuiltinIntegerDtype(const std::string& dtype)
{
    return dtype == "int64" || dtype == "int32" || dtype == "int16" || dtype == "int8" || dtype == "uint8";
}

int dtypeBytes(const std::string& dtype)
{
    if (dtype == "float64" || dtype == "int64")
        return 8;
    if (dtype == "bool" || dtype == "int8" || dtype == "uint8")
        return 1;
    return dtype == "float32" || dtype == "int32" ? 4 : 2;
}

const char* dtypeCType(const std::string& dtype)
{
    if (dtype == "float16")
        return "__half";
    if (dtype == "bfloat16")
        return "__nv_bfloat16";
    if (dtype == "float64")
        return "double";
    if (dtype == "bool")
        return "bool";
    if (const char* integer = integerCType(dtype))
        return integer;
    return "float";
}

namespace {

std::string loadExpr(const std::string& dtype)
{
    if (dtype == "float16")
        return "__half2float(v)";
    if (dtype == "bfloat16")
        return "__bfloat162float(v)";
    if (dtype == "float64")
        return "static_cast<float>(v)"; // round to nearest, as c10's double -> float
    if (dtype == "bool")
        return "(v ? 1.0f : 0.0f)";
    if (isBuiltinIntegerDtype(dtype))
        return "static_cast<float>(v)"; // round to nearest, as c10's integer -> float
    return "v";
}

std::string storeExpr(const std::string& dtype)
{
    // Round to nearest even, as PyTorch's conversions do.
    if (dtype == "float16")
        return "__float2half_rn(v)";
    if (dtype == "bfloat16")
        return "__float2bfloat16_rn(v)";
    if (dtype == "int64")
        return "static_cast<long long>(v)"; // an index, exact in fp32
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

Error unsupportedCard(const OperatorCard& card, const std::string& why)
{
    return makeError(ErrorCode::Unsupported, why, "built-in proposer, " + card.qualifiedName());
}

Result<const TensorSpec*> floatTensorInput(const OperatorCard& card, const std::string& name)
{
    const ArgSpec* arg = card.findArg(name);
    if (!arg || arg->kind != ArgKind::Tensor || arg->tensors.size() != 1)
        return unsupportedCard(card, "the card has no tensor argument '" + name + "'");
    const TensorSpec& in = arg->tensors[0];
    if (!isBuiltinFloatDtype(in.dtype))
        return unsupportedCard(card, "input dtype " + in.dtype + " not covered (float32, float16, bfloat16)");
    return &in;
}

Result<const TensorSpec*> contiguousFloatInput(const OperatorCard& card, const std::string& name)
{
    auto input = floatTensorInput(card, name);
    if (!input)
        return input;
    const TensorSpec& in = *input.value();
    if (!in.isContiguous())
        return unsupportedCard(card, "non-contiguous input " + in.toShortString());
    if (in.numel() == 0)
        return unsupportedCard(card, "empty input");
    return &in;
}

std::optional<std::vector<std::int64_t>> poolingInts(const OperatorCard& card, const std::string& name,
                                                     std::size_t count, const std::vector<std::int64_t>& fallback)
{
    const ArgSpec* arg = card.findArg(name);
    if (!arg || arg->kind != ArgKind::Value)
        return std::nullopt;
    const nlohmann::json& v = arg->value;
    if (v.is_number_integer())
        return std::vector<std::int64_t>(count, v.get<std::int64_t>());
    if (!v.is_array() || (v.size() > 1 && v.size() != count))
        return std::nullopt;
    for (const auto& x : v)
        if (!x.is_number_integer())
            return std::nullopt;
    if (v.empty())
        return fallback;
    if (v.size() == 1)
        return std::vector<std::int64_t>(count, v[0].get<std::int64_t>());
    return v.get<std::vector<std::int64_t>>();
}

std::int64_t pooledSize(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                        std::int64_t dilation, bool ceil)
{
    const std::int64_t span = in + 2 * padding - dilation * (kernel - 1) - 1 + (ceil ? stride - 1 : 0);
    std::int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
    if (ceil && (out - 1) * stride >= in + padding)
        --out;
    return out;
}

bool isPowerOfTwo(std::int64_t v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

int widestVectorWidth(std::int64_t unit, const std::string& inDtype, const std::string& outDtype)
{
    for (int w : {8, 4, 2})
        if (w * dtypeBytes(inDtype) <= 16 && w * dtypeBytes(outDtype) <= 16 && unit % w == 0)
            return w;
    return 1;
}

int widestAllowedWidth(const std::function<bool(int)>& allowed)
{
    for (int w : {8, 4, 2})
        if (allowed(w))
            return w;
    return 1;
}

bool isChannelsLast(const TensorSpec& t)
{
    if (t.sizes.size() != 4 || t.strides.size() != 4)
        return false;
    const std::int64_t c = t.sizes[1], h = t.sizes[2], w = t.sizes[3];
    return t.strides[1] == 1 && t.strides[3] == c && t.strides[2] == w * c && t.strides[0] == h * w * c;
}

std::optional<std::vector<std::size_t>> denseStorageOrder(const TensorSpec& t)
{
    const std::size_t rank = t.sizes.size();
    if (t.strides.size() != rank)
        return std::nullopt;
    std::vector<std::size_t> order(rank);
    for (std::size_t d = 0; d < rank; ++d)
        order[d] = d;
    // Size-1 dims (any stride) go last; the others by decreasing stride, ties kept in dim order.
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const bool oneA = t.sizes[a] == 1, oneB = t.sizes[b] == 1;
        if (oneA != oneB)
            return oneB;
        return !oneA && t.strides[a] > t.strides[b];
    });
    std::int64_t expected = 1;
    for (std::size_t i = rank; i-- > 0;) {
        const std::size_t d = order[i];
        if (t.sizes[d] == 1)
            continue;
        if (t.sizes[d] == 0 || t.strides[d] != expected)
            return std::nullopt;
        expected *= t.sizes[d];
    }
    return order;
}

MergedDims mergeDims(const std::vector<std::size_t>& order, const std::vector<std::int64_t>& sizes,
                     const std::vector<std::vector<std::int64_t>>& strides)
{
    MergedDims merged;
    merged.strides.resize(strides.size());
    for (const std::size_t d : order) {
        if (sizes[d] == 1)
            continue;
        const std::size_t last = merged.sizes.size();
        bool steps = last > 0;
        for (std::size_t k = 0; steps && k < strides.size(); ++k)
            steps = merged.strides[k][last - 1] == strides[k][d] * sizes[d];
        if (steps) {
            merged.sizes[last - 1] *= sizes[d];
            for (std::size_t k = 0; k < strides.size(); ++k)
                merged.strides[k][last - 1] = strides[k][d];
            continue;
        }
        merged.sizes.push_back(sizes[d]);
        for (std::size_t k = 0; k < strides.size(); ++k)
            merged.strides[k].push_back(strides[k][d]);
    }
    return merged;
}

bool stridesAllowVectors(const std::vector<std::int64_t>& strides, int width)
{
    if (strides.empty() || strides.back() != 1)
        return false;
    for (std::size_t d = 0; d + 1 < strides.size(); ++d)
        if (strides[d] % width != 0)
            return false;
    return true;
}

std::string dtypeLoader(const std::string& fn, const std::string& dtype)
{
    std::string s;
    if (dtype == "float16")
        s += "#include <cuda_fp16.h>\n";
    if (dtype == "bfloat16")
        s += "#include <cuda_bf16.h>\n";
    s += "__device__ __forceinline__ float " + fn + "(" + dtypeCType(dtype) + " v) { return " + loadExpr(dtype) +
        "; }\n";
    return s;
}

std::string dtypeStorer(const std::string& fn, const std::string& dtype)
{
    std::string s;
    if (dtype == "float16")
        s += "#include <cuda_fp16.h>\n";
    if (dtype == "bfloat16")
        s += "#include <cuda_bf16.h>\n";
    s += "__device__ __forceinline__ " + std::string(dtypeCType(dtype)) + " " + fn + "(float v) { return " +
        storeExpr(dtype) + "; }\n";
    return s;
}

std::optional<std::vector<std::int64_t>> broadcastStrides(const TensorSpec& t, const std::vector<std::int64_t>& sizes)
{
    if (t.sizes.size() > sizes.size() || t.strides.size() != t.sizes.size())
        return std::nullopt;
    const std::size_t lead = sizes.size() - t.sizes.size();
    std::vector<std::int64_t> strides(sizes.size(), 0);
    for (std::size_t d = lead; d < sizes.size(); ++d) {
        const std::int64_t size = t.sizes[d - lead];
        if (size == sizes[d] && size != 1)
            strides[d] = t.strides[d - lead];
        else if (size != 1)
            return std::nullopt;
    }
    return strides;
}

std::string offsetFunction(const std::string& name, const std::vector<std::int64_t>& dims,
                           const std::vector<std::int64_t>& strides)
{
    std::ostringstream s;
    s << "__device__ __forceinline__ long long " << name << "(long long i)\n{\n    long long o = 0;\n";
    for (std::size_t d = dims.size(); d-- > 0;) {
        if (d == 0) {
            if (strides[d] != 0)
                s << "    o += i * " << strides[d] << "LL;\n";
        } else {
            if (strides[d] != 0)
                s << "    o += (i % " << dims[d] << "LL) * " << strides[d] << "LL;\n";
            s << "    i /= " << dims[d] << "LL;\n";
        }
    }
    s << "    (void)i;\n    return o;\n}\n";
    return s.str();
}

std::string regionOperandTypes(const std::string& name, const std::string& dtype, bool output, bool vectors)
{
    const std::string type = "t_" + name;
    std::string s = std::string("typedef ") + dtypeCType(dtype) + " " + type + ";\n" +
        (output ? dtypeStorer("kfStore_" + name, dtype) : dtypeLoader("kfLoad_" + name, dtype));
    if (vectors)
        s += "struct alignas(V * sizeof(" + type + ")) Vec_" + name + " { " + type + " v[V]; };\n";
    return s;
}

std::string integerOperandTypes(const std::string& name, const std::string& dtype, bool output, bool vectors)
{
    const std::string type = "t_" + name;
    const std::string c = dtypeCType(dtype);
    std::string s = "typedef " + c + " " + type + ";\n__device__ __forceinline__ " + c + " " +
        (output ? "kfStore_" : "kfLoad_") + name + "(" + c + " v) { return v; }\n";
    if (vectors)
        s += "struct alignas(V * sizeof(" + type + ")) Vec_" + name + " { " + type + " v[V]; };\n";
    return s;
}

std::string reductionHelpers()
{
    return R"(__device__ __forceinline__ float kfWarpSum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
// Sum over a 1-D block of T threads; every thread must call it and gets the total.
template <int T>
__device__ __forceinline__ float kfBlockSum(float v)
{
    v = kfWarpSum(v);
    if constexpr (T > 32) {
        __shared__ float red[32];
        if ((threadIdx.x & 31) == 0)
            red[threadIdx.x >> 5] = v;
        __syncthreads();
        v = (threadIdx.x & 31) < (T >> 5) ? red[threadIdx.x & 31] : 0.0f;
        v = kfWarpSum(v);
        __syncthreads();
    }
    return v;
}
// Chan et al.: merges (n2, mean2, m22) into (n, mean, m2).
__device__ __forceinline__ void kfWelfordMerge(float& n, float& mean, float& m2, float n2, float mean2, float m22)
{
    const float nn = n + n2;
    if (n2 == 0.0f)
        return;
    const float d = mean2 - mean;
    const float r = n2 / nn;
    mean += d * r;
    m2 += m22 + d * d * n * r;
    n = nn;
}
__device__ __forceinline__ void kfWelfordAdd(float& n, float& mean, float& m2, float x)
{
    n += 1.0f;
    const float d = x - mean;
    mean += d / n;
    m2 += d * (x - mean);
}
__device__ __forceinline__ void kfWarpWelford(float& n, float& mean, float& m2)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float n2 = __shfl_xor_sync(0xffffffffu, n, o);
        const float mean2 = __shfl_xor_sync(0xffffffffu, mean, o);
        const float m22 = __shfl_xor_sync(0xffffffffu, m2, o);
        kfWelfordMerge(n, mean, m2, n2, mean2, m22);
    }
}
template <int T>
__device__ __forceinline__ void kfBlockWelford(float& n, float& mean, float& m2)
{
    kfWarpWelford(n, mean, m2);
    if constexpr (T > 32) {
        __shared__ float rn[32], rmean[32], rm2[32];
        if ((threadIdx.x & 31) == 0) {
            rn[threadIdx.x >> 5] = n;
            rmean[threadIdx.x >> 5] = mean;
            rm2[threadIdx.x >> 5] = m2;
        }
        __syncthreads();
        const bool live = (threadIdx.x & 31) < (T >> 5);
        n = live ? rn[threadIdx.x & 31] : 0.0f;
        mean = live ? rmean[threadIdx.x & 31] : 0.0f;
        m2 = live ? rm2[threadIdx.x & 31] : 0.0f;
        kfWarpWelford(n, mean, m2);
        __syncthreads();
    }
}
)";
}

nlohmann::json launchJson(const std::string& kernel, std::int64_t grid, int block, const std::vector<std::string>& args)
{
    return {{"kernel", kernel},
            {"grid", nlohmann::json::array({grid})},
            {"block", nlohmann::json::array({block})},
            {"shared_bytes", 0},
            {"args", args}};
}

Result<void> checkKnobs(const nlohmann::json& params, const std::vector<Knob>& knobs, const std::string& context)
{
    if (!params.is_object())
        return makeError(ErrorCode::InvalidArgument, "not a JSON object", context);
    for (const Knob& knob : knobs) {
        if (!params.contains(knob.key))
            return makeError(ErrorCode::InvalidArgument, "missing parameter '" + knob.key + "'", context);
        const nlohmann::json& v = params[knob.key];
        if (knob.isBool() ? !v.is_boolean() : !v.is_number_integer())
            return makeError(ErrorCode::InvalidArgument,
                             "parameter '" + knob.key + "' must be " + (knob.isBool() ? "a bool" : "an integer"),
                             context);
        if (!knob.isBool() && !isPowerOfTwo(v.get<std::int64_t>()))
            return makeError(ErrorCode::InvalidArgument, "parameter '" + knob.key + "' must be a power of two",
                             context);
    }
    if (params.size() != knobs.size())
        return makeError(ErrorCode::InvalidArgument, "unknown parameter in " + params.dump(), context);
    return {};
}

Result<void> checkKnobsAndThreads(const nlohmann::json& params, const std::vector<Knob>& knobs,
                                  const std::string& context, int minThreads)
{
    if (auto r = checkKnobs(params, knobs, context); !r)
        return r;
    const int threads = params["threads"].get<int>();
    if (threads < minThreads || threads > 1024)
        return makeError(ErrorCode::InvalidArgument,
                         "threads must be a power of two in " + std::to_string(minThreads) + "..1024", context);
    return {};
}

std::vector<Transformation> knobNeighbours(const nlohmann::json& params, const std::vector<Knob>& knobs,
                                           const std::function<bool(const nlohmann::json&)>& valid)
{
    std::vector<Transformation> out;
    auto add = [&](std::string name, nlohmann::json q) {
        if (q != params && valid(q))
            out.push_back({std::move(name), std::move(q)});
    };
    for (const Knob& knob : knobs) {
        nlohmann::json q = params;
        if (knob.isBool()) {
            const bool on = params[knob.key].get<bool>();
            q[knob.key] = !on;
            add(on ? knob.offName : knob.onName, q);
            continue;
        }
        const std::int64_t v = params[knob.key].get<std::int64_t>();
        for (std::int64_t w : {v * 2, v / 2}) {
            if (w < 1)
                continue;
            q[knob.key] = w;
            add(knob.stepName + " " + std::to_string(v) + "->" + std::to_string(w), q);
        }
    }
    return out;
}

std::vector<Transformation> KnobFamily::transformations(const nlohmann::json& params) const
{
    if (!check(params))
        return {};
    return knobNeighbours(params, knobs(), [this](const nlohmann::json& q) { return check(q).ok(); });
}

} // namespace kforge::core
