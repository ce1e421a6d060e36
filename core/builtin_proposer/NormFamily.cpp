#include "builtin_proposer/NormFamily.h"

#include <cfloat>
#include <sstream>

namespace kforge::core {

namespace {

constexpr std::int64_t kMaxRegisterElements = 64; // fp32 row values a thread keeps in `registers` mode

} // namespace

bool NormFamily::coversOp(const std::string& qualifiedOp)
{
    return qualifiedOp == "aten::layer_norm" || qualifiedOp == "aten::rms_norm";
}

Result<std::unique_ptr<NormFamily>> NormFamily::create(const OperatorCard& card)
{
    const std::string op = card.qualifiedName();
    if (!coversOp(op))
        return unsupportedCard(card, "op not covered by the built-in proposer yet");
    auto input = contiguousFloatInput(card, "input");
    if (!input)
        return input.error();
    const TensorSpec& in = *input.value();
    const ArgSpec* shape = card.findArg("normalized_shape");
    if (!shape || shape->kind != ArgKind::Value || !shape->value.is_array() || shape->value.empty())
        return unsupportedCard(card, "the card has no non-empty int list 'normalized_shape'");
    std::vector<std::int64_t> normalized;
    for (const auto& v : shape->value) {
        if (!v.is_number_integer())
            return unsupportedCard(card, "normalized_shape is not a list of ints");
        normalized.push_back(v.get<std::int64_t>());
    }
    if (normalized.size() > in.sizes.size() ||
        !std::equal(normalized.begin(), normalized.end(),
                    in.sizes.end() - static_cast<std::ptrdiff_t>(normalized.size())))
        return unsupportedCard(card, "normalized_shape " + shape->value.dump() + " is not the input's trailing sizes");

    std::unique_ptr<NormFamily> family(new NormFamily());
    family->m_rms = op == "aten::rms_norm";
    family->m_inDtype = in.dtype;
    family->m_rowLength = 1;
    for (std::int64_t s : normalized)
        family->m_rowLength *= s;
    family->m_rows = in.numel() / family->m_rowLength;
    if (family->m_rowLength > (1 << 30))
        return unsupportedCard(card, "row length " + std::to_string(family->m_rowLength) + " too long");
    if (family->m_rows > 2147483647LL)
        return unsupportedCard(card, "too many rows for one grid");

    auto affine = [&](const char* name, std::string& dtype) -> Result<void> {
        const ArgSpec* arg = card.findArg(name);
        if (!arg || arg->kind == ArgKind::None)
            return {};
        if (arg->kind != ArgKind::Tensor || arg->tensors.size() != 1)
            return unsupportedCard(card, std::string("argument '") + name + "' is not a tensor or None");
        const TensorSpec& t = arg->tensors[0];
        if (!isBuiltinFloatDtype(t.dtype) || !t.isContiguous() || t.sizes != normalized)
            return unsupportedCard(card,
                                   std::string(name) + " " + t.toShortString() +
                                       ": expected a contiguous float tensor of normalized_shape");
        dtype = t.dtype;
        return {};
    };
    if (auto r = affine("weight", family->m_weightDtype); !r)
        return r.error();
    if (!family->m_rms)
        if (auto r = affine("bias", family->m_biasDtype); !r)
            return r.error();

    const ArgSpec* eps = card.findArg("eps");
    if (eps && eps->kind == ArgKind::Value && eps->value.is_number())
        family->m_eps = eps->value.get<double>();
    else if (family->m_rms && (!eps || eps->kind == ArgKind::None))
        // rms_norm(eps=None): PyTorch computes in fp32 for every covered dtype and uses
        // torch.finfo(float32).eps (torch/_decomp _fused_rms_norm), not the input dtype's eps.
        family->m_eps = FLT_EPSILON;
    else
        return unsupportedCard(card, "the card has no numeric argument 'eps'");

    if (card.outputs.size() != 1)
        return unsupportedCard(card, "expected exactly one output");
    const TensorSpec& out = card.outputs[0];
    if (!isBuiltinFloatDtype(out.dtype) || out.sizes != in.sizes || !out.isContiguous())
        return unsupportedCard(
            card, "output " + out.toShortString() + " is not a contiguous float tensor of the input's sizes");
    family->m_outDtype = out.dtype;
    return family;
}

std::vector<Knob> NormFamily::knobs() const
{
    std::vector<Knob> k = {{"threads", "threads-per-block", "", ""},
                           {"warp_per_row", "", "warp-per-row", "block-per-row"},
                           {"vector_width", "vector-width", "", ""},
                           {"registers", "", "row-in-registers", "row-from-global"}};
    if (!m_rms)
        k.push_back({"welford", "", "welford", "two-pass"});
    return k;
}

Result<void> NormFamily::check(const nlohmann::json& p) const
{
    const std::string context = name() + " template parameters";
    if (auto r = checkKnobsAndThreads(p, knobs(), context); !r)
        return r;
    const int threads = p["threads"].get<int>();
    const int v = p["vector_width"].get<int>();
    // Every row starts at a multiple of the vector (row length divisible) and the base is 16-byte
    // aligned (docs/builtin-proposer.md, alignment assumption).
    if (v > 8 || v * dtypeBytes(m_inDtype) > 16 || v * dtypeBytes(m_outDtype) > 16 || m_rowLength % v != 0)
        return makeError(ErrorCode::InvalidArgument,
                         "vector_width " + std::to_string(v) + " not allowed for row length " +
                             std::to_string(m_rowLength),
                         context);
    if (p["registers"].get<bool>()) {
        if (registerElements(threads, p["warp_per_row"].get<bool>(), v) > kMaxRegisterElements)
            return makeError(ErrorCode::InvalidArgument, "registers: the row does not fit in registers", context);
        if (!m_rms && p["welford"].get<bool>())
            return makeError(ErrorCode::InvalidArgument, "registers computes exact two-pass statistics (welford false)",
                             context);
    }
    return {};
}

std::int64_t NormFamily::registerElements(int threads, bool warp, int v) const
{
    const std::int64_t tpr = warp ? 32 : threads;
    return (m_rowLength / v + tpr - 1) / tpr * v;
}

nlohmann::json NormFamily::rootParams() const
{
    const int v = widestVectorWidth(m_rowLength, m_inDtype, m_outDtype);
    const std::int64_t vectors = m_rowLength / v;
    nlohmann::json p = {{"vector_width", v}};
    if (vectors <= 32 * 8) {
        p["threads"] = 128;
        p["warp_per_row"] = true;
    } else {
        int threads = 64;
        while (threads < 1024 && threads * 4 < vectors)
            threads *= 2;
        p["threads"] = threads;
        p["warp_per_row"] = false;
    }
    // The row read once into registers when a thread's share fits: statistics and the normalize
    // pass then never go back to memory. Otherwise Welford (one pass) and a second read.
    const bool registers =
        registerElements(p["threads"].get<int>(), p["warp_per_row"].get<bool>(), v) <= kMaxRegisterElements;
    p["registers"] = registers;
    if (!m_rms)
        p["welford"] = !registers;
    return p;
}

Result<Candidate> NormFamily::generate(const nlohmann::json& params) const
{
    if (auto r = check(params); !r)
        return r.error();
    const int threads = params["threads"].get<int>();
    const bool warp = params["warp_per_row"].get<bool>();
    const int v = params["vector_width"].get<int>();
    const bool welford = !m_rms && params["welford"].get<bool>();
    const bool registers = params["registers"].get<bool>();
    const bool hasW = !m_weightDtype.empty();
    const bool hasB = !m_biasDtype.empty();
    const std::string kernel = m_rms ? "kf_rms_norm" : "kf_layer_norm";

    std::ostringstream s;
    s << "// Built-in " << name() << " over rows of " << m_rowLength << " (" << m_rows << " rows), " << m_inDtype
      << " -> " << m_outDtype << ", fp32 accumulation" << (welford ? ", Welford statistics" : "") << ".\n"
      << "// Template parameters: " << params.dump() << "\n"
      << dtypePrelude(m_inDtype, m_outDtype);
    if (hasW)
        s << dtypeLoader("kfLoadW", m_weightDtype);
    if (hasB)
        s << dtypeLoader("kfLoadB", m_biasDtype);
    s << reductionHelpers() << (warp ? "constexpr long long ROWS = " + std::to_string(m_rows) + "LL;\n" : std::string())
      << "constexpr int N = " << m_rowLength << ";\n"
      << "constexpr int V = " << v << ";\n"
      << "constexpr int NV = N / V;\n"
      << "constexpr int THREADS = " << threads << ";\n"
      << "constexpr int TPR = " << (warp ? 32 : threads) << "; // threads per row\n"
      << "constexpr int RPB = THREADS / TPR; // rows per block\n"
      << "constexpr float EPS = " << floatLiteral(m_eps) << ";\n"
      << "struct alignas(V * sizeof(in_t)) InVec { in_t v[V]; };\n"
      << "struct alignas(V * sizeof(out_t)) OutVec { out_t v[V]; };\n";
    if (registers)
        s << "constexpr int ITEMS = (NV + TPR - 1) / TPR; // vectors per thread, kept in registers\n";
    // Weight / bias as whole vectors when a vector of them is at most 16 bytes (aligned like the
    // row), else element by element.
    const bool vecW = hasW && v * dtypeBytes(m_weightDtype) <= 16;
    const bool vecB = hasB && v * dtypeBytes(m_biasDtype) <= 16;
    if (vecW)
        s << "struct alignas(V * sizeof(" << dtypeCType(m_weightDtype) << ")) WVec { " << dtypeCType(m_weightDtype)
          << " v[V]; };\n";
    if (vecB)
        s << "struct alignas(V * sizeof(" << dtypeCType(m_biasDtype) << ")) BVec { " << dtypeCType(m_biasDtype)
          << " v[V]; };\n";
    if (warp)
        s << "__device__ __forceinline__ float rowSum(float v) { return kfWarpSum(v); }\n"
          << "__device__ __forceinline__ void rowWelford(float& n, float& m, float& m2) { kfWarpWelford(n, m, m2); }\n";
    else
        s << "__device__ __forceinline__ float rowSum(float v) { return kfBlockSum<THREADS>(v); }\n"
          << "__device__ __forceinline__ void rowWelford(float& n, float& m, float& m2) { kfBlockWelford<THREADS>(n, "
             "m, "
             "m2); }\n";
    s << "\nextern \"C\" __global__ void __launch_bounds__(THREADS) " << kernel << "(const in_t* __restrict__ x, "
      << (hasW ? "const " + std::string(dtypeCType(m_weightDtype)) + "* __restrict__ w, " : "")
      << (hasB ? "const " + std::string(dtypeCType(m_biasDtype)) + "* __restrict__ b, " : "")
      << "out_t* __restrict__ y)\n{\n"
      << "    const int lane = threadIdx.x % TPR;\n"
      << "    const long long row = static_cast<long long>(blockIdx.x) * RPB + threadIdx.x / TPR;\n";
    if (warp)
        s << "    if (row >= ROWS)\n        return; // the whole warp leaves: warp-per-row has no block barriers\n";
    s << "    const InVec* xr = reinterpret_cast<const InVec*>(x + row * N);\n"
      << "    OutVec* yr = reinterpret_cast<OutVec*>(y + row * N);\n";
    // One vector of normalized outputs: `VAL(e)` is element e of the input vector at index j.
    auto emitNormalize = [&](const std::string& indent, const std::string& val) {
        if (vecW)
            s << indent << "const WVec wv = reinterpret_cast<const WVec*>(w)[j];\n";
        if (vecB)
            s << indent << "const BVec bv = reinterpret_cast<const BVec*>(b)[j];\n";
        s << indent << "OutVec o;\n#pragma unroll\n"
          << indent << "for (int e = 0; e < V; ++e) {\n"
          << indent << "    float r = (" << val << " - mean) * rstd;\n";
        if (hasW)
            s << indent << "    r *= " << (vecW ? "kfLoadW(wv.v[e])" : "kfLoadW(w[j * V + e])") << ";\n";
        if (hasB)
            s << indent << "    r += " << (vecB ? "kfLoadB(bv.v[e])" : "kfLoadB(b[j * V + e])") << ";\n";
        s << indent << "    o.v[e] = kfStore(r);\n" << indent << "}\n" << indent << "yr[j] = o;\n";
    };
    if (registers) {
        // Every load of the row first, then exact two-pass statistics from registers.
        s << "    float cache[ITEMS][V];\n    float sum = 0.0f;\n"
          << "#pragma unroll\n    for (int k = 0; k < ITEMS; ++k) {\n"
          << "        const int j = lane + k * TPR;\n"
          << "        if (j < NV) {\n            const InVec t = xr[j];\n"
          << "#pragma unroll\n            for (int e = 0; e < V; ++e) {\n"
          << "                cache[k][e] = kfLoad(t.v[e]);\n"
          << (m_rms ? "                sum += cache[k][e] * cache[k][e];\n" : "                sum += cache[k][e];\n")
          << "            }\n        }\n    }\n";
        if (m_rms) {
            s << "    const float mean = 0.0f;\n"
              << "    const float rstd = rsqrtf(rowSum(sum) / N + EPS);\n";
        } else {
            s << "    const float mean = rowSum(sum) / N;\n    float ss = 0.0f;\n"
              << "#pragma unroll\n    for (int k = 0; k < ITEMS; ++k) {\n"
              << "        if (lane + k * TPR < NV) {\n"
              << "#pragma unroll\n            for (int e = 0; e < V; ++e) {\n"
              << "                const float d = cache[k][e] - mean;\n                ss += d * d;\n"
              << "            }\n        }\n    }\n"
              << "    const float rstd = rsqrtf(rowSum(ss) / N + EPS);\n";
        }
        s << "#pragma unroll\n    for (int k = 0; k < ITEMS; ++k) {\n"
          << "        const int j = lane + k * TPR;\n        if (j < NV) {\n";
        emitNormalize("            ", "cache[k][e]");
        s << "        }\n    }\n}\n";
    } else {
        if (m_rms) {
            s << "    float ss = 0.0f;\n"
              << "    for (int j = lane; j < NV; j += TPR) {\n        const InVec t = xr[j];\n"
              << "#pragma unroll\n        for (int e = 0; e < V; ++e) {\n            const float a = kfLoad(t.v[e]);\n"
              << "            ss += a * a;\n        }\n    }\n"
              << "    const float mean = 0.0f;\n"
              << "    const float rstd = rsqrtf(rowSum(ss) / N + EPS);\n";
        } else if (welford) {
            s << "    float n = 0.0f, mean = 0.0f, m2 = 0.0f;\n"
              << "    for (int j = lane; j < NV; j += TPR) {\n        const InVec t = xr[j];\n"
              << "#pragma unroll\n        for (int e = 0; e < V; ++e)\n            kfWelfordAdd(n, mean, m2, "
                 "kfLoad(t.v[e]));\n    }\n"
              << "    rowWelford(n, mean, m2);\n"
              << "    const float rstd = rsqrtf(fmaxf(m2 / N, 0.0f) + EPS);\n";
        } else {
            s << "    float sum = 0.0f;\n"
              << "    for (int j = lane; j < NV; j += TPR) {\n        const InVec t = xr[j];\n"
              << "#pragma unroll\n        for (int e = 0; e < V; ++e)\n            sum += kfLoad(t.v[e]);\n    }\n"
              << "    const float mean = rowSum(sum) / N;\n"
              << "    float ss = 0.0f;\n"
              << "    for (int j = lane; j < NV; j += TPR) {\n        const InVec t = xr[j];\n"
              << "#pragma unroll\n        for (int e = 0; e < V; ++e) {\n            const float d = kfLoad(t.v[e]) - "
                 "mean;\n"
              << "            ss += d * d;\n        }\n    }\n"
              << "    const float rstd = rsqrtf(rowSum(ss) / N + EPS);\n";
        }
        s << "    for (int j = lane; j < NV; j += TPR) {\n        const InVec t = xr[j];\n";
        emitNormalize("        ", "kfLoad(t.v[e])");
        s << "    }\n}\n";
    }

    std::vector<std::string> args = {"ptr:input"};
    if (hasW)
        args.push_back("ptr:weight");
    if (hasB)
        args.push_back("ptr:bias");
    args.push_back("ptr:out0");
    const int rpb = warp ? threads / 32 : 1;
    Candidate candidate;
    candidate.source = s.str();
    candidate.launchPlan = {
        {"launches", nlohmann::json::array({launchJson(kernel, (m_rows + rpb - 1) / rpb, threads, args)})}};
    return candidate;
}

} // namespace kforge::core
