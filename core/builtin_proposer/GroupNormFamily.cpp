#include "builtin_proposer/GroupNormFamily.h"

#include <sstream>

namespace kforge::core {

namespace {

const std::vector<Knob> kKnobs = {{"threads", "threads-per-block", "", ""},
                                  {"vector_width", "vector-width", "", ""},
                                  {"split", "split-groups", "", ""}};
constexpr int kMaxSplit = 64;

} // namespace

Result<std::unique_ptr<GroupNormFamily>> GroupNormFamily::create(const OperatorCard& card)
{
    if (!coversOp(card.qualifiedName()))
        return unsupportedCard(card, "op not covered by the built-in proposer yet");
    auto input = floatTensorInput(card, "input");
    if (!input)
        return input.error();
    const TensorSpec& in = *input.value();
    const bool channelsLast = !in.isContiguous() && isChannelsLast(in);
    if (!in.isContiguous() && !channelsLast)
        return unsupportedCard(card, "input layout " + in.toShortString() + " (NCHW contiguous or channels-last only)");
    if (in.sizes.size() < 2 || in.numel() == 0)
        return unsupportedCard(card, "input " + in.toShortString() + ": expected a non-empty [N, C, *] tensor");
    const ArgSpec* groups = card.findArg("num_groups");
    if (!groups || groups->kind != ArgKind::Value || !groups->value.is_number_integer())
        return unsupportedCard(card, "the card has no integer argument 'num_groups'");
    std::unique_ptr<GroupNormFamily> f(new GroupNormFamily());
    f->m_inChannelsLast = channelsLast;
    f->m_inDtype = in.dtype;
    f->m_batch = in.sizes[0];
    f->m_channels = in.sizes[1];
    f->m_groups = groups->value.get<std::int64_t>();
    if (f->m_groups <= 0 || f->m_channels % f->m_groups != 0)
        return unsupportedCard(card,
                               "num_groups " + std::to_string(f->m_groups) + " does not divide " +
                                   std::to_string(f->m_channels) + " channels");
    f->m_spatial = in.numel() / (f->m_batch * f->m_channels);
    if (f->m_channels / f->m_groups * f->m_spatial > (1 << 30))
        return unsupportedCard(card, "group too large");
    for (const char* name : {"weight", "bias"}) {
        const ArgSpec* arg = card.findArg(name);
        if (!arg || arg->kind == ArgKind::None)
            continue;
        if (arg->kind != ArgKind::Tensor || arg->tensors.size() != 1)
            return unsupportedCard(card, std::string("argument '") + name + "' is not a tensor or None");
        const TensorSpec& t = arg->tensors[0];
        if (!isBuiltinFloatDtype(t.dtype) || t.sizes != std::vector<std::int64_t>{f->m_channels} || !t.isContiguous())
            return unsupportedCard(card, std::string(name) + " " + t.toShortString() + ": expected a float [C] tensor");
        (std::string(name) == "weight" ? f->m_weightDtype : f->m_biasDtype) = t.dtype;
    }
    const ArgSpec* eps = card.findArg("eps");
    if (!eps || eps->kind != ArgKind::Value || !eps->value.is_number())
        return unsupportedCard(card, "the card has no numeric argument 'eps'");
    f->m_eps = eps->value.get<double>();
    if (card.outputs.size() != 1 || !isBuiltinFloatDtype(card.outputs[0].dtype) || card.outputs[0].sizes != in.sizes)
        return unsupportedCard(card, "expected one float output of the input's sizes");
    const TensorSpec& out = card.outputs[0];
    // Eager's CUDA group_norm makes a channels-last input contiguous first, so its output is NCHW;
    // a channels-last output (the layout of the input) is covered too.
    f->m_outChannelsLast = channelsLast && !out.isContiguous() && isChannelsLast(out);
    if (!out.isContiguous() && !f->m_outChannelsLast)
        return unsupportedCard(
            card,
            "output layout " + out.toShortString() +
                (channelsLast ? " (NCHW contiguous or channels-last only)" : " (NCHW contiguous only)"));
    f->m_outDtype = out.dtype;
    if (f->m_batch * f->m_groups * kMaxSplit > 2147483647LL)
        return unsupportedCard(card, "too many groups for one grid");
    return f;
}

Result<void> GroupNormFamily::check(const nlohmann::json& p) const
{
    const std::string context = "group_norm template parameters";
    if (auto r = checkKnobsAndThreads(p, kKnobs, context); !r)
        return r;
    const int threads = p["threads"].get<int>();
    const int v = p["vector_width"].get<int>();
    const int split = p["split"].get<int>();
    if (v > 8 || v * dtypeBytes(m_inDtype) > 16 || v * dtypeBytes(m_outDtype) > 16 || vectorUnit() % v != 0)
        return makeError(ErrorCode::InvalidArgument,
                         "vector_width " + std::to_string(v) + " must divide the " +
                             (m_inChannelsLast ? "channels per group " : "spatial size ") +
                             std::to_string(vectorUnit()) + " (at most 16 bytes)",
                         context);
    const std::int64_t groupVectors = m_channels / m_groups * m_spatial / v;
    // Every split block gets at least one vector per thread.
    if (split > kMaxSplit || (split > 1 && groupVectors < static_cast<std::int64_t>(split) * threads))
        return makeError(ErrorCode::InvalidArgument, "split " + std::to_string(split) + " too large for the group size",
                         context);
    return {};
}

nlohmann::json GroupNormFamily::rootParams() const
{
    const int v = widestVectorWidth(vectorUnit(), m_inDtype, m_outDtype);
    const std::int64_t groupVectors = m_channels / m_groups * m_spatial / v;
    nlohmann::json p = {{"threads", groupVectors >= 4096 ? 512 : 128}, {"vector_width", v}, {"split", 1}};
    // Few (n, group) pairs: split each group so that about 264 blocks (2 per H200 SM) are busy.
    const std::int64_t pairs = m_batch * m_groups;
    int split = 1;
    while (split < kMaxSplit && pairs * split < 264) {
        nlohmann::json q = p;
        q["split"] = split * 2;
        if (!check(q))
            break;
        split *= 2;
    }
    p["split"] = split;
    return p;
}

std::vector<Knob> GroupNormFamily::knobs() const
{
    return kKnobs;
}

std::string GroupNormFamily::nchwSource(bool hasW, bool hasB) const
{
    // Item j of a group is its vector j: the group's CPG * HW values are contiguous.
    // normalizeRange: vectors [begin, end) of group `pair` with the group's mean and rstd.
    std::ostringstream s;
    s << "__device__ __forceinline__ void normalizeRange(const in_t* __restrict__ x, "
      << (hasW ? "const " + std::string(dtypeCType(m_weightDtype)) + "* __restrict__ w, " : "")
      << (hasB ? "const " + std::string(dtypeCType(m_biasDtype)) + "* __restrict__ b, " : "")
      << "out_t* __restrict__ y, long long pair, int begin, int end, float mean, float rstd)\n{\n"
      << "    const InVec* xg = reinterpret_cast<const InVec*>(x + pair * D);\n"
      << "    OutVec* yg = reinterpret_cast<OutVec*>(y + pair * D);\n"
      << (hasW || hasB ? "    const int c0 = static_cast<int>(pair % G) * CPG;\n" : "")
      << "    for (int j = begin + threadIdx.x; j < end; j += THREADS) {\n"
      << (hasW || hasB ? "        const int c = c0 + j * V / HW; // HW % V == 0: one channel per vector\n" : "")
      << (m_spatial == 1 ? std::string()
                         : std::string("        const float a = rstd") + (hasW ? " * kfLoadW(w[c])" : "") + ";\n" +
                  "        const float sh = " + (hasB ? "kfLoadB(b[c])" : "0.0f") + " - mean * a;\n")
      << "        const InVec t = xg[j];\n        OutVec o;\n"
      << "#pragma unroll\n        for (int e = 0; e < V; ++e)\n"
      // Eager's two forms: one element per channel (HW == 1) is ((x - mean) * rstd) * w + b per
      // element; otherwise the fused x * a + (b - mean * a).
      << (m_spatial == 1 ? std::string("            o.v[e] = kfStore((kfLoad(t.v[e]) - mean) * rstd") +
                  (hasW ? " * kfLoadW(w[c])" : "") + (hasB ? " + kfLoadB(b[c])" : "") + ");\n"
                         : std::string("            o.v[e] = kfStore(kfLoad(t.v[e]) * a + sh);\n"))
      << "        yg[j] = o;\n    }\n}\n"
      << "__device__ __forceinline__ void welfordRange(const in_t* __restrict__ x, long long pair, int begin, int end, "
         "float& n, float& mean, float& m2)\n{\n"
      << "    const InVec* xg = reinterpret_cast<const InVec*>(x + pair * D);\n"
      << "    n = 0.0f;\n    mean = 0.0f;\n    m2 = 0.0f;\n"
      << "    for (int j = begin + threadIdx.x; j < end; j += THREADS) {\n        const InVec t = xg[j];\n"
      << "#pragma unroll\n        for (int e = 0; e < V; ++e)\n            kfWelfordAdd(n, mean, m2, "
         "kfLoad(t.v[e]));\n    }\n"
      << "    kfBlockWelford<THREADS>(n, mean, m2);\n}\n";
    return s.str();
}

std::string GroupNormFamily::channelsLastSource(bool hasW, bool hasB) const
{
    // Item j of a group is the V channels (j % NCV) * V .. + V - 1 of the group at spatial position
    // j / NCV: V contiguous values in NHWC memory, and consecutive threads read consecutive ones.
    std::ostringstream s;
    s << "constexpr int NCV = CPG / V; // vectors per spatial position of a group\n"
      << "__device__ __forceinline__ long long kfGroupBase(long long pair) // (n, hw 0, channel g * CPG)\n{\n"
      << "    return (pair / G) * HW * C + (pair % G) * CPG;\n}\n"
      << "__device__ __forceinline__ long long kfItemOffset(int j) { return static_cast<long long>(j / NCV) * C + (j % "
         "NCV) * V; }\n"
      << "__device__ __forceinline__ void welfordRange(const in_t* __restrict__ x, long long pair, int begin, int end, "
         "float& n, float& mean, float& m2)\n{\n"
      << "    const in_t* xg = x + kfGroupBase(pair);\n"
      << "    n = 0.0f;\n    mean = 0.0f;\n    m2 = 0.0f;\n"
      << "    for (int j = begin + threadIdx.x; j < end; j += THREADS) {\n"
      << "        const InVec t = *reinterpret_cast<const InVec*>(xg + kfItemOffset(j));\n"
      << "#pragma unroll\n        for (int e = 0; e < V; ++e)\n            kfWelfordAdd(n, mean, m2, "
         "kfLoad(t.v[e]));\n    }\n"
      << "    kfBlockWelford<THREADS>(n, mean, m2);\n}\n";
    // Normalizes items [begin, end) of group `pair`: per element x * a + (b - mean * a), the fused
    // form eager's NCHW kernel uses (it runs on a contiguous copy of a channels-last input).
    s << "__device__ __forceinline__ void normalizeRange(const in_t* __restrict__ x, "
      << (hasW ? "const " + std::string(dtypeCType(m_weightDtype)) + "* __restrict__ w, " : "")
      << (hasB ? "const " + std::string(dtypeCType(m_biasDtype)) + "* __restrict__ b, " : "")
      << "out_t* __restrict__ y, long long pair, int begin, int end, float mean, float rstd)\n{\n"
      << "    const long long base = kfGroupBase(pair);\n"
      << "    const int c0 = static_cast<int>(pair % G) * CPG;\n"
      << "    for (int j = begin + threadIdx.x; j < end; j += THREADS) {\n"
      << "        const long long at = base + kfItemOffset(j);\n"
      << "        const int c = c0 + (j % NCV) * V;\n"
      << "        const InVec t = *reinterpret_cast<const InVec*>(x + at);\n"
      << (m_outChannelsLast
              ? "        OutVec o;\n"
              : "        // NCHW output: element e goes to channel c + e's plane at this spatial position.\n"
                "        out_t* yp = y + ((pair / G) * C + c) * static_cast<long long>(HW) + j / NCV;\n")
      << "#pragma unroll\n        for (int e = 0; e < V; ++e) {\n"
      << "            const float a = rstd" << (hasW ? " * kfLoadW(w[c + e])" : "") << ";\n"
      << "            const float sh = " << (hasB ? "kfLoadB(b[c + e])" : "0.0f") << " - mean * a;\n"
      << (m_outChannelsLast ? "            o.v[e] = kfStore(kfLoad(t.v[e]) * a + sh);\n"
                            : "            yp[static_cast<long long>(e) * HW] = kfStore(kfLoad(t.v[e]) * a + sh);\n")
      << "        }\n"
      << (m_outChannelsLast ? "        *reinterpret_cast<OutVec*>(y + at) = o;\n" : "") << "    }\n}\n";
    return s.str();
}

Result<Candidate> GroupNormFamily::generate(const nlohmann::json& params) const
{
    if (auto r = check(params); !r)
        return r.error();
    const int threads = params["threads"].get<int>();
    const int v = params["vector_width"].get<int>();
    const int split = params["split"].get<int>();
    const bool hasW = !m_weightDtype.empty();
    const bool hasB = !m_biasDtype.empty();
    const std::int64_t pairs = m_batch * m_groups;

    std::ostringstream s;
    s << "// Built-in group_norm: " << m_batch << " x " << m_groups << " groups of " << m_channels / m_groups
      << " channels x " << m_spatial << " elements"
      << (m_inChannelsLast ? (m_outChannelsLast ? " (channels-last)" : " (channels-last input, NCHW output)") : "")
      << ", " << m_inDtype << " -> " << m_outDtype << ", fp32 Welford statistics"
      << (split > 1 ? ", each group split over " + std::to_string(split) + " blocks" : "")
      << ".\n// Template parameters: " << params.dump() << "\n"
      << dtypePrelude(m_inDtype, m_outDtype);
    if (hasW)
        s << dtypeLoader("kfLoadW", m_weightDtype);
    if (hasB)
        s << dtypeLoader("kfLoadB", m_biasDtype);
    s << reductionHelpers() << "constexpr int C = " << m_channels << ";\n"
      << "constexpr int G = " << m_groups << ";\n"
      << "constexpr int CPG = C / G;\n"
      << "constexpr int HW = " << m_spatial << ";\n"
      << "constexpr int D = CPG * HW; // elements per group\n"
      << "constexpr int V = " << v << ";\n"
      << "constexpr int DV = D / V;\n"
      << "constexpr int THREADS = " << threads << ";\n"
      << (split > 1 ? "constexpr int SPLIT = " + std::to_string(split) + ";\n" : std::string())
      << (split > 1 ? "constexpr int CHUNK = (DV + SPLIT - 1) / SPLIT; // vectors per split block\n" : "")
      << "constexpr float EPS = " << floatLiteral(m_eps) << ";\n"
      << "struct alignas(V * sizeof(in_t)) InVec { in_t v[V]; };\n"
      << "struct alignas(V * sizeof(out_t)) OutVec { out_t v[V]; };\n"
      // Eager keeps a group's mean and rstd in the input's dtype (native_group_norm returns them),
      // so a float16 / bfloat16 group is normalized with rounded statistics. Rounding them the same
      // way matters where (x - mean) cancels: groups of a few nearly equal values.
      << "// The group statistics rounded to the input dtype, as eager stores them.\n"
      << "__device__ __forceinline__ float kfStat(float v) { return "
      << (m_inDtype == "float16"        ? "__half2float(__float2half_rn(v))"
              : m_inDtype == "bfloat16" ? "__bfloat162float(__float2bfloat16_rn(v))"
                                        : "v")
      << "; }\n";
    const std::string wParam = hasW ? "const " + std::string(dtypeCType(m_weightDtype)) + "* __restrict__ w, " : "";
    const std::string bParam = hasB ? "const " + std::string(dtypeCType(m_biasDtype)) + "* __restrict__ b, " : "";
    s << (m_inChannelsLast ? channelsLastSource(hasW, hasB) : nchwSource(hasW, hasB));
    const std::string wArg = std::string(hasW ? "w, " : "") + (hasB ? "b, " : "");
    nlohmann::json launches = nlohmann::json::array();
    std::vector<std::string> affineArgs;
    if (hasW)
        affineArgs.push_back("ptr:weight");
    if (hasB)
        affineArgs.push_back("ptr:bias");
    nlohmann::json plan;
    if (split == 1) {
        s << "\nextern \"C\" __global__ void __launch_bounds__(THREADS) kf_group_norm(const in_t* __restrict__ x, "
          << wParam << bParam << "out_t* __restrict__ y)\n{\n"
          << "    const long long pair = blockIdx.x; // n * G + g\n"
          << "    float n, mean, m2;\n    welfordRange(x, pair, 0, DV, n, mean, m2);\n"
          << "    normalizeRange(x, " << wArg
          << "y, pair, 0, DV, kfStat(mean), kfStat(rsqrtf(fmaxf(m2 / D, 0.0f) + EPS)));\n}\n";
        std::vector<std::string> args = {"ptr:input"};
        args.insert(args.end(), affineArgs.begin(), affineArgs.end());
        args.push_back("ptr:out0");
        launches.push_back(launchJson("kf_group_norm", pairs, threads, args));
        plan = {{"launches", launches}};
    } else {
        s << "\n// Pass 1: block (pair, k) writes the Welford triple of its chunk to part[(pair * SPLIT + k) * 3].\n"
          << "extern \"C\" __global__ void __launch_bounds__(THREADS) kf_group_norm_stats(const in_t* __restrict__ x, "
             "float* __restrict__ part)\n{\n"
          << "    const long long pair = blockIdx.x / SPLIT;\n    const int k = blockIdx.x % SPLIT;\n"
          << "    const int begin = k * CHUNK;\n    const int end = min(DV, begin + CHUNK);\n"
          << "    float n, mean, m2;\n    welfordRange(x, pair, begin, end, n, mean, m2);\n"
          << "    if (threadIdx.x == 0) {\n        part[blockIdx.x * 3LL] = n;\n        part[blockIdx.x * 3LL + 1] = "
             "mean;\n"
          << "        part[blockIdx.x * 3LL + 2] = m2;\n    }\n}\n"
          << "// Pass 2: every thread merges the group's SPLIT triples in a fixed order, then normalizes the chunk.\n"
          << "extern \"C\" __global__ void __launch_bounds__(THREADS) kf_group_norm_apply(const in_t* __restrict__ x, "
             "const float* __restrict__ part, "
          << wParam << bParam << "out_t* __restrict__ y)\n{\n"
          << "    const long long pair = blockIdx.x / SPLIT;\n    const int k = blockIdx.x % SPLIT;\n"
          << "    float n = 0.0f, mean = 0.0f, m2 = 0.0f;\n"
          << "    for (int i = 0; i < SPLIT; ++i) {\n        const float* q = part + (pair * SPLIT + i) * 3;\n"
          << "        kfWelfordMerge(n, mean, m2, q[0], q[1], q[2]);\n    }\n"
          << "    const int begin = k * CHUNK;\n    const int end = min(DV, begin + CHUNK);\n"
          << "    normalizeRange(x, " << wArg
          << "y, pair, begin, end, kfStat(mean), kfStat(rsqrtf(fmaxf(m2 / D, 0.0f) + EPS)));\n}\n";
        launches.push_back(
            launchJson("kf_group_norm_stats", pairs * split, threads, {"ptr:input", "ptr:scratch.partials"}));
        std::vector<std::string> args = {"ptr:input", "ptr:scratch.partials"};
        args.insert(args.end(), affineArgs.begin(), affineArgs.end());
        args.push_back("ptr:out0");
        launches.push_back(launchJson("kf_group_norm_apply", pairs * split, threads, args));
        plan = {{"launches", launches},
                {"scratch",
                 nlohmann::json::array({{{"name", "partials"}, {"bytes", pairs * split * 3 * 4}, {"zero", false}}})}};
    }
    Candidate candidate;
    candidate.source = s.str();
    candidate.launchPlan = plan;
    return candidate;
}

} // namespace kforge::core
