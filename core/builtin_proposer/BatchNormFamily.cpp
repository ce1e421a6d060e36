#include "builtin_proposer/BatchNormFamily.h"

#include <sstream>

namespace kforge::core {

namespace {

const std::vector<Knob> kKnobs = {{"threads", "threads-per-block", "", ""},
                                  {"vector_width", "vector-width", "", ""},
                                  {"items_per_thread", "items-per-thread", "", ""},
                                  {"precompute", "", "precompute-scale-shift", "inline-scale-shift"}};
constexpr int kParamThreads = 128; // threads of the per-channel kernel
// Inside the grid-stride loop over `base` of both main kernels: load the thread's ITEMS vectors
// (strided by THREADS), then open the per-item block that computes vector j (closed by the caller).
constexpr const char* kLoadItemsThenEach =
    "        InVec t[ITEMS];\n"
    "#pragma unroll\n        for (int k = 0; k < ITEMS; ++k) {\n"
    "            const long long j = base + static_cast<long long>(k) * THREADS;\n"
    "            if (j < NVEC)\n                t[k] = xv[j];\n        }\n"
    "#pragma unroll\n        for (int k = 0; k < ITEMS; ++k) {\n"
    "            const long long j = base + static_cast<long long>(k) * THREADS;\n"
    "            if (j < NVEC) {\n";

} // namespace

Result<std::unique_ptr<BatchNormFamily>> BatchNormFamily::create(const OperatorCard& card)
{
    if (!coversOp(card.qualifiedName()))
        return unsupportedCard(card, "op not covered by the built-in proposer yet");
    const ArgSpec* training = card.findArg("training");
    if (!training || training->kind != ArgKind::Value || !training->value.is_boolean())
        return unsupportedCard(card, "the card has no bool argument 'training'");
    if (training->value.get<bool>())
        return unsupportedCard(card, "training=true (batch statistics) not covered: inference only");
    auto input = floatTensorInput(card, "input");
    if (!input)
        return input.error();
    const TensorSpec& in = *input.value();
    const bool channelsLast = !in.isContiguous() && isChannelsLast(in);
    if (!in.isContiguous() && !channelsLast)
        return unsupportedCard(card, "input layout " + in.toShortString() + " (NCHW contiguous or channels-last only)");
    if (in.sizes.size() < 2 || in.numel() == 0)
        return unsupportedCard(card, "input " + in.toShortString() + ": expected a non-empty [N, C, *] tensor");
    std::unique_ptr<BatchNormFamily> f(new BatchNormFamily());
    f->m_inDtype = in.dtype;
    f->m_channelsLast = channelsLast;
    f->m_numel = in.numel();
    f->m_channels = in.sizes[1];
    f->m_spatial = in.numel() / (in.sizes[0] * in.sizes[1]);
    struct PerChannel {
        const char* name;
        std::string* dtype;
        bool required;
    };
    for (const PerChannel& pc :
         {PerChannel{"weight", &f->m_weightDtype, false}, PerChannel{"bias", &f->m_biasDtype, false},
          PerChannel{"running_mean", &f->m_meanDtype, true}, PerChannel{"running_var", &f->m_varDtype, true}}) {
        const ArgSpec* arg = card.findArg(pc.name);
        if (!arg || arg->kind == ArgKind::None) {
            if (pc.required)
                return unsupportedCard(card, std::string(pc.name) + " is None: inference needs the running statistics");
            continue;
        }
        if (arg->kind != ArgKind::Tensor || arg->tensors.size() != 1)
            return unsupportedCard(card, std::string("argument '") + pc.name + "' is not a tensor or None");
        const TensorSpec& t = arg->tensors[0];
        if (!isBuiltinFloatDtype(t.dtype) || t.sizes != std::vector<std::int64_t>{f->m_channels} || !t.isContiguous())
            return unsupportedCard(card,
                                   std::string(pc.name) + " " + t.toShortString() + ": expected a float [C] tensor");
        *pc.dtype = t.dtype;
    }
    const ArgSpec* eps = card.findArg("eps");
    if (!eps || eps->kind != ArgKind::Value || !eps->value.is_number())
        return unsupportedCard(card, "the card has no numeric argument 'eps'");
    f->m_eps = eps->value.get<double>();
    if (card.outputs.size() != 1 || !isBuiltinFloatDtype(card.outputs[0].dtype) || card.outputs[0].sizes != in.sizes ||
        (channelsLast ? card.outputs[0].strides != in.strides : !card.outputs[0].isContiguous()))
        return unsupportedCard(card, "expected one float output of the input's sizes and layout");
    f->m_outDtype = card.outputs[0].dtype;
    return f;
}

Result<void> BatchNormFamily::check(const nlohmann::json& p) const
{
    const std::string context = "batch_norm template parameters";
    if (auto r = checkKnobsAndThreads(p, kKnobs, context); !r)
        return r;
    const int threads = p["threads"].get<int>();
    const int v = p["vector_width"].get<int>();
    // A vector never straddles channels (NCHW: V divides the spatial size) or wraps past the last
    // channel (channels-last: V divides C).
    const std::int64_t unit = m_channelsLast ? m_channels : m_spatial;
    if (v > 8 || v * dtypeBytes(m_inDtype) > 16 || v * dtypeBytes(m_outDtype) > 16 || unit % v != 0)
        return makeError(ErrorCode::InvalidArgument,
                         "vector_width " + std::to_string(v) + " must divide the " +
                             (m_channelsLast ? "channel count " : "spatial size ") + std::to_string(unit) +
                             " (at most 16 bytes)",
                         context);
    if (p["items_per_thread"].get<int>() > 8)
        return makeError(ErrorCode::InvalidArgument, "items_per_thread must be 1, 2, 4 or 8", context);
    // Channels-last without the precompute kernel: each thread keeps the (mean, scale, shift) of its
    // own V channels in registers, which holds only when a row's C / V vectors divide a block.
    if (m_channelsLast && !p["precompute"].get<bool>() && threads % (m_channels / v) != 0)
        return makeError(ErrorCode::InvalidArgument,
                         "inline scale/shift of a channels-last input needs C / vector_width (" +
                             std::to_string(m_channels / v) + ") to divide threads (" + std::to_string(threads) + ")",
                         context);
    return {};
}

nlohmann::json BatchNormFamily::rootParams() const
{
    const int v = widestVectorWidth(m_channelsLast ? m_channels : m_spatial, m_inDtype, m_outDtype);
    const int items = m_numel >= (1 << 22) ? 2 : 1;
    if (m_channelsLast) {
        // Channel-resident (one launch, each thread's channels in registers) where a block of at
        // most 1024 threads holds whole rows of C / V vectors; else precomputed into scratch.
        const std::int64_t rowVectors = m_channels / v;
        int threads = 256;
        while (threads < 1024 && threads % rowVectors != 0)
            threads *= 2;
        const bool resident = threads % rowVectors == 0;
        return {{"threads", resident ? threads : 256},
                {"vector_width", v},
                {"items_per_thread", items},
                {"precompute", !resident}};
    }
    // Per-channel values reused by many vectors: precompute them once when the spatial size is small
    // relative to the channel count (the inline form reloads four values per vector).
    return {{"threads", 256}, {"vector_width", v}, {"items_per_thread", items}, {"precompute", m_spatial / v < 64}};
}

std::vector<Knob> BatchNormFamily::knobs() const
{
    return kKnobs;
}

// The grid-stride kernel over vectors of the flat tensor: each vector finds its channel (NCHW: the
// vector's spatial block; channels-last: V consecutive channels at the flat index modulo C) and
// reads its (mean, scale, shift) from the precomputed scratch or computes them inline.
std::string BatchNormFamily::flatKernel(bool precompute, const std::string& statParams,
                                        const std::string& statArgs) const
{
    std::ostringstream s;
    s << "\nextern \"C\" __global__ void __launch_bounds__(THREADS) kf_batch_norm(const in_t* __restrict__ x, "
      << (precompute ? "const float* __restrict__ params, " : statParams) << "out_t* __restrict__ y)\n{\n"
      << "    const InVec* xv = reinterpret_cast<const InVec*>(x);\n"
      << "    OutVec* yv = reinterpret_cast<OutVec*>(y);\n"
      << "    const long long stride = static_cast<long long>(gridDim.x) * THREADS * ITEMS;\n"
      << "    for (long long base = static_cast<long long>(blockIdx.x) * THREADS * ITEMS + threadIdx.x; base < NVEC;\n"
      << "         base += stride) {\n"
      << kLoadItemsThenEach;
    if (m_channelsLast) {
        // Element e of the vector is channel c0 + e (the flat NHWC index modulo C); always precomputed
        // here (channels-last inline is channelResidentKernel).
        s << "                const long long c0 = (j * V) % C;\n"
          << "                OutVec o;\n"
          << "#pragma unroll\n                for (int e = 0; e < V; ++e) {\n"
          << "                    const float mean = params[c0 + e], scale = params[C + c0 + e],\n"
          << "                                shift = params[2 * C + c0 + e];\n"
          << "                    o.v[e] = kfStore((kfLoad(t[k].v[e]) - mean) * scale + shift);\n"
          << "                }\n"
          << "                yv[j] = o;\n            }\n        }\n    }\n}\n";
    } else {
        s << "                const long long c = (j * V / S) % C;\n"
          << "                float mean, scale, shift;\n";
        if (precompute)
            s << "                mean = params[c];\n                scale = params[C + c];\n"
              << "                shift = params[2 * C + c];\n";
        else
            s << "                kfChannel(" << statArgs << "rm, rv, c, mean, scale, shift);\n";
        s << "                OutVec o;\n"
          << "#pragma unroll\n                for (int e = 0; e < V; ++e)\n"
          << "                    o.v[e] = kfStore((kfLoad(t[k].v[e]) - mean) * scale + shift);\n"
          << "                yv[j] = o;\n            }\n        }\n    }\n}\n";
    }
    return s.str();
}

// Channels-last, one launch: a block covers whole rows of C / V vectors (THREADS is a multiple of
// C / V, and so is every stride of the loop), so a thread's vectors are always the same V channels,
// whose (mean, scale, shift) it computes once into registers; the loop then only streams x to y.
std::string BatchNormFamily::channelResidentKernel(const std::string& statParams, const std::string& statArgs) const
{
    std::ostringstream s;
    s << "\nconstexpr long long ROW_VECTORS = C / V; // divides THREADS\n"
      << "extern \"C\" __global__ void __launch_bounds__(THREADS) kf_batch_norm(const in_t* __restrict__ x, "
      << statParams << "out_t* __restrict__ y)\n{\n"
      << "    const InVec* xv = reinterpret_cast<const InVec*>(x);\n"
      << "    OutVec* yv = reinterpret_cast<OutVec*>(y);\n"
      << "    const long long first = static_cast<long long>(blockIdx.x) * THREADS * ITEMS + threadIdx.x;\n"
      << "    const long long c0 = (first % ROW_VECTORS) * V;\n"
      << "    float mean[V], scale[V], shift[V];\n"
      << "#pragma unroll\n    for (int e = 0; e < V; ++e)\n"
      << "        kfChannel(" << statArgs << "rm, rv, c0 + e, mean[e], scale[e], shift[e]);\n"
      << "    const long long stride = static_cast<long long>(gridDim.x) * THREADS * ITEMS;\n"
      << "    for (long long base = first; base < NVEC; base += stride) {\n"
      << kLoadItemsThenEach << "                OutVec o;\n"
      << "#pragma unroll\n                for (int e = 0; e < V; ++e)\n"
      << "                    o.v[e] = kfStore((kfLoad(t[k].v[e]) - mean[e]) * scale[e] + shift[e]);\n"
      << "                yv[j] = o;\n            }\n        }\n    }\n}\n";
    return s.str();
}

Result<Candidate> BatchNormFamily::generate(const nlohmann::json& params) const
{
    if (auto r = check(params); !r)
        return r.error();
    const int threads = params["threads"].get<int>();
    const int v = params["vector_width"].get<int>();
    const int items = params["items_per_thread"].get<int>();
    const bool precompute = params["precompute"].get<bool>();
    const bool hasW = !m_weightDtype.empty();
    const bool hasB = !m_biasDtype.empty();
    const std::string wParam = hasW ? "const " + std::string(dtypeCType(m_weightDtype)) + "* __restrict__ w, " : "";
    const std::string bParam = hasB ? "const " + std::string(dtypeCType(m_biasDtype)) + "* __restrict__ b, " : "";
    const std::string statParams = "const " + std::string(dtypeCType(m_meanDtype)) + "* __restrict__ rm, const " +
        dtypeCType(m_varDtype) + "* __restrict__ rv, ";

    std::ostringstream s;
    s << "// Built-in batch_norm (inference, running statistics) over " << m_numel << " elements, C = " << m_channels
      << ", spatial " << m_spatial << (m_channelsLast ? " (channels-last)" : "") << ", " << m_inDtype << " -> "
      << m_outDtype << ", fp32 math"
      << (precompute ? ", per-channel (mean, scale, shift) precomputed into scratch" : ", per-channel values inline")
      << ".\n"
      << "// Template parameters: " << params.dump() << "\n"
      << dtypePrelude(m_inDtype, m_outDtype) << dtypeLoader("kfLoadMean", m_meanDtype)
      << dtypeLoader("kfLoadVar", m_varDtype);
    if (hasW)
        s << dtypeLoader("kfLoadW", m_weightDtype);
    if (hasB)
        s << dtypeLoader("kfLoadB", m_biasDtype);
    s << "constexpr long long NUMEL = " << m_numel << "LL;\n"
      << "constexpr long long C = " << m_channels << "LL;\n"
      << (m_channelsLast ? std::string()
                         : "constexpr long long S = " + std::to_string(m_spatial) + "LL; // elements per (n, c)\n")
      << "constexpr int V = " << v << ";\n"
      << "constexpr int THREADS = " << threads << ";\n"
      << "constexpr int ITEMS = " << items << ";\n"
      << (m_channelsLast ? "constexpr long long NVEC = NUMEL / V; // V divides C: channels c0 .. c0 + V - 1\n"
                         : "constexpr long long NVEC = NUMEL / V; // V divides S: a vector never straddles channels\n")
      << "constexpr float EPS = " << floatLiteral(m_eps) << ";\n"
      << "struct alignas(V * sizeof(in_t)) InVec { in_t v[V]; };\n"
      << "struct alignas(V * sizeof(out_t)) OutVec { out_t v[V]; };\n"
      // (x - mean) * scale + shift with scale = w * rsqrt(var + eps), shift = b: eager's
      // ((x - mean) * invstd) * w + b with the product w * invstd folded (no cancellation against b).
      << "__device__ __forceinline__ void kfChannel(" << wParam << bParam << statParams
      << "long long c, float& mean, float& scale, float& shift)\n{\n"
      << "    mean = kfLoadMean(rm[c]);\n"
      << "    scale = rsqrtf(kfLoadVar(rv[c]) + EPS)" << (hasW ? " * kfLoadW(w[c])" : "") << ";\n"
      << "    shift = " << (hasB ? "kfLoadB(b[c])" : "0.0f") << ";\n}\n";
    const std::string wArg = hasW ? "w, " : "";
    const std::string bArg = hasB ? "b, " : "";
    if (precompute)
        s << "\nextern \"C\" __global__ void __launch_bounds__(" << kParamThreads << ") kf_batch_norm_params(" << wParam
          << bParam << statParams << "float* __restrict__ params)\n{\n"
          << "    const long long c = static_cast<long long>(blockIdx.x) * " << kParamThreads << " + threadIdx.x;\n"
          << "    if (c >= C)\n        return;\n"
          << "    float mean, scale, shift;\n"
          << "    kfChannel(" << wArg << bArg << "rm, rv, c, mean, scale, shift);\n"
          << "    params[c] = mean;\n    params[C + c] = scale;\n    params[2 * C + c] = shift;\n}\n";
    if (m_channelsLast && !precompute)
        s << channelResidentKernel(wParam + bParam + statParams, wArg + bArg);
    else
        s << flatKernel(precompute, wParam + bParam + statParams, wArg + bArg);

    std::vector<std::string> stats;
    if (hasW)
        stats.push_back("ptr:weight");
    if (hasB)
        stats.push_back("ptr:bias");
    stats.push_back("ptr:running_mean");
    stats.push_back("ptr:running_var");
    const std::int64_t perBlock = static_cast<std::int64_t>(threads) * items;
    std::int64_t grid = (m_numel / v + perBlock - 1) / perBlock;
    if (grid > 2147483647LL)
        grid = 2147483647LL; // the grid-stride loop covers the rest
    nlohmann::json launches = nlohmann::json::array();
    std::vector<std::string> mainArgs = {"ptr:input"};
    if (precompute) {
        std::vector<std::string> pArgs = stats;
        pArgs.push_back("ptr:scratch.params");
        launches.push_back(
            launchJson("kf_batch_norm_params", (m_channels + kParamThreads - 1) / kParamThreads, kParamThreads, pArgs));
        mainArgs.push_back("ptr:scratch.params");
    } else {
        mainArgs.insert(mainArgs.end(), stats.begin(), stats.end());
    }
    mainArgs.push_back("ptr:out0");
    launches.push_back(launchJson("kf_batch_norm", grid, threads, mainArgs));
    Candidate candidate;
    candidate.launchPlan = {{"launches", launches}};
    if (precompute)
        candidate.launchPlan["scratch"] =
            nlohmann::json::array({{{"name", "params"}, {"bytes", m_channels * 3 * 4}, {"zero", false}}});
    candidate.source = s.str();
    return candidate;
}

} // namespace kforge::core
