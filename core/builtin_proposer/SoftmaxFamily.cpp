#include "builtin_proposer/SoftmaxFamily.h"

#include <algorithm>
#include <sstream>

namespace kforge::core {

namespace {

constexpr std::int64_t kMaxRegisterElements = 32;     // fp32 values a thread keeps for its share of a row
constexpr std::int64_t kMaxWarpRegisterElements = 64; // over all the rows of a warp (rows_per_warp > 1)

} // namespace

bool SoftmaxFamily::coversOp(const std::string& qualifiedOp)
{
    return qualifiedOp == "aten::softmax.int" || qualifiedOp == "aten::_softmax" ||
        qualifiedOp == "aten::log_softmax.int" || qualifiedOp == "aten::_log_softmax";
}

Result<std::unique_ptr<SoftmaxFamily>> SoftmaxFamily::create(const OperatorCard& card)
{
    const std::string op = card.qualifiedName();
    if (!coversOp(op))
        return unsupportedCard(card, "op not covered by the built-in proposer yet");
    auto input = contiguousFloatInput(card, "self");
    if (!input)
        return input.error();
    const TensorSpec& in = *input.value();

    const ArgSpec* dim = card.findArg("dim");
    if (!dim || dim->kind != ArgKind::Value || !dim->value.is_number_integer())
        return unsupportedCard(card, "the card has no integer argument 'dim'");
    const auto rank = static_cast<std::int64_t>(in.sizes.size());
    const std::int64_t d = dim->value.get<std::int64_t>();
    const bool lastDim = rank == 0 ? (d == 0 || d == -1) : (d == -1 || d == rank - 1);
    if (!lastDim)
        return unsupportedCard(card,
                               "softmax over dim " + std::to_string(d) + " of a rank-" + std::to_string(rank) +
                                   " tensor: only the last dimension is covered");

    if (card.outputs.size() != 1)
        return unsupportedCard(card, "expected exactly one output");
    const TensorSpec& out = card.outputs[0];
    // dtype=D: eager converts the input to D, then softmax in D. Covered for D float32 (the
    // conversion from float16 / bfloat16 / float32 is exact, so reading the input as it is and
    // computing in fp32 gives eager's values) and for D the input's own dtype (no conversion): the
    // kernel reads the input dtype and writes D in one pass (transformers' eager attention calls
    // softmax(bf16, dtype=float32)).
    if (const ArgSpec* dtype = card.findArg("dtype"); dtype && dtype->kind != ArgKind::None) {
        if (dtype->kind != ArgKind::Value || !dtype->value.is_number_integer())
            return unsupportedCard(card, "dtype argument " + dtype->value.dump() + " not understood");
        if (!(out.dtype == "float32" || out.dtype == in.dtype))
            return unsupportedCard(card,
                                   "dtype argument converting " + in.dtype + " to " + out.dtype +
                                       ": only to float32 or to the input's own dtype is covered");
    }
    // _softmax(half_to_float=True) yields float32 from float16: allowed, the output dtype comes from the card.
    if (!isBuiltinFloatDtype(out.dtype))
        return unsupportedCard(card, "output dtype " + out.dtype + " not covered");
    if (out.sizes != in.sizes || !out.isContiguous())
        return unsupportedCard(card, "output layout " + out.toShortString() + " differs from the input's");

    std::unique_ptr<SoftmaxFamily> family(new SoftmaxFamily());
    family->m_log = op.find("log_softmax") != std::string::npos;
    family->m_inDtype = in.dtype;
    family->m_outDtype = out.dtype;
    family->m_rowLength = rank == 0 ? 1 : in.sizes.back();
    family->m_rows = in.numel() / family->m_rowLength;
    if (family->m_rowLength > (1 << 30))
        return unsupportedCard(card, "row length " + std::to_string(family->m_rowLength) + " too long");
    return family;
}

bool SoftmaxFamily::vectorWidthAllowed(int width) const
{
    // The plan guarantees aligned vector accesses: each row starts at a multiple of `width` elements
    // because the row length is one, and the base pointer is 16-byte aligned by the assumption
    // documented in docs/builtin-proposer.md (contiguous tensors with storage offset 0).
    if (width != 1 && width != 2 && width != 4 && width != 8)
        return false;
    // Loads are at most 16 bytes; a float32 output of a float16 input (half_to_float) may store 32.
    return width * dtypeBytes(m_inDtype) <= 16 && m_rowLength % width == 0;
}

std::int64_t SoftmaxFamily::registerElements(const Params& p) const
{
    const std::int64_t vectors = m_rowLength / p.vectorWidth;
    const std::int64_t tpr = threadsPerRow(p);
    return (vectors + tpr - 1) / tpr * p.vectorWidth;
}

SoftmaxFamily::Params SoftmaxFamily::normalized(Params p) const
{
    if (p.registers && registerElements(p) > kMaxRegisterElements)
        p.registers = false;
    if (p.registers)
        p.online = false;
    if (!p.registers || p.rowsPerBlock == 1)
        p.rowsPerWarp = 1;
    while (p.rowsPerWarp > 1 && registerElements(p) * p.rowsPerWarp > kMaxWarpRegisterElements)
        p.rowsPerWarp /= 2;
    return p;
}

nlohmann::json SoftmaxFamily::toJson(const Params& p)
{
    return {{"threads", p.threads},          {"rows_per_block", p.rowsPerBlock},
            {"vector_width", p.vectorWidth}, {"online", p.online},
            {"registers", p.registers},      {"fast_math", p.fastMath},
            {"rows_per_warp", p.rowsPerWarp}};
}

Result<SoftmaxFamily::Params> SoftmaxFamily::parse(const nlohmann::json& j) const
{
    const std::string context = "softmax template parameters";
    if (!j.is_object())
        return makeError(ErrorCode::InvalidArgument, "not a JSON object", context);
    Params p;
    try {
        p.threads = j.at("threads").get<int>();
        p.rowsPerBlock = j.at("rows_per_block").get<int>();
        p.vectorWidth = j.at("vector_width").get<int>();
        p.online = j.at("online").get<bool>();
        p.registers = j.at("registers").get<bool>();
        p.fastMath = j.value("fast_math", false); // absent in trees written before the knob existed
        p.rowsPerWarp = j.value("rows_per_warp", 1);
    } catch (const nlohmann::json::exception& e) {
        return makeError(ErrorCode::InvalidArgument, std::string("missing or mistyped parameter: ") + e.what(),
                         context);
    }
    const bool pow2 = p.threads > 0 && (p.threads & (p.threads - 1)) == 0;
    if (!pow2 || p.threads < 64 || p.threads > 1024)
        return makeError(ErrorCode::InvalidArgument, "threads must be a power of two in 64..1024", context);
    if (p.rowsPerBlock != 1 && p.threads != 32 * p.rowsPerBlock)
        return makeError(ErrorCode::InvalidArgument,
                         "rows_per_block > 1 means warp-per-row: threads = 32 * rows_per_block", context);
    if (!vectorWidthAllowed(p.vectorWidth))
        return makeError(ErrorCode::InvalidArgument,
                         "vector_width " + std::to_string(p.vectorWidth) + " not allowed for row length " +
                             std::to_string(m_rowLength) + " and dtype " + m_inDtype,
                         context);
    if (p.registers && registerElements(p) > kMaxRegisterElements)
        return makeError(ErrorCode::InvalidArgument, "registers: the row does not fit in registers", context);
    if (p.rowsPerWarp != 1 && p.rowsPerWarp != 2 && p.rowsPerWarp != 4)
        return makeError(ErrorCode::InvalidArgument, "rows_per_warp must be 1, 2 or 4", context);
    if (p.rowsPerWarp > 1 &&
        (p.rowsPerBlock == 1 || !p.registers || registerElements(p) * p.rowsPerWarp > kMaxWarpRegisterElements))
        return makeError(
            ErrorCode::InvalidArgument,
            "rows_per_warp > 1 needs warp-per-row with the rows in registers (at most 64 values per thread)", context);
    return p;
}

nlohmann::json SoftmaxFamily::rootParams() const
{
    Params p;
    p.vectorWidth = widestAllowedWidth([this](int w) { return vectorWidthAllowed(w); });
    const std::int64_t vectors = m_rowLength / p.vectorWidth;
    if (vectors <= 32 * 8) {
        // Short rows: a warp per row, four rows per block, no block barriers.
        p.rowsPerBlock = 4;
        p.threads = 128;
    } else {
        // About four vectors per thread, 64..1024 threads.
        p.threads = 64;
        while (p.threads < 1024 && p.threads * 4 < vectors)
            p.threads *= 2;
    }
    p.registers = true;
    p = normalized(p);
    if (!p.registers)
        p.online = true; // two reads of the row instead of three
    return toJson(p);
}

std::vector<Transformation> SoftmaxFamily::transformations(const nlohmann::json& params) const
{
    std::vector<Transformation> out;
    auto parsed = parse(params);
    if (!parsed)
        return out;
    const Params p = parsed.value();
    auto add = [&](std::string name, Params q) {
        q = normalized(q);
        const nlohmann::json j = toJson(q);
        if (j != params && parse(j).ok())
            out.push_back({std::move(name), j});
    };
    if (p.rowsPerBlock == 1) {
        for (int t : {p.threads * 2, p.threads / 2})
            if (t >= 64 && t <= 1024) {
                Params q = p;
                q.threads = t;
                add("threads-per-block " + std::to_string(p.threads) + "->" + std::to_string(t), q);
            }
        Params q = p;
        q.rowsPerBlock = 4;
        q.threads = 128;
        add("warp-per-row", q);
    } else {
        for (int r : {p.rowsPerBlock * 2, p.rowsPerBlock / 2})
            if (r >= 4 && r <= 32) {
                Params q = p;
                q.rowsPerBlock = r;
                q.threads = 32 * r;
                add("rows-per-block " + std::to_string(p.rowsPerBlock) + "->" + std::to_string(r), q);
            }
        Params q = p;
        q.rowsPerBlock = 1;
        q.threads = 256;
        add("block-per-row", q);
    }
    for (int w : {p.vectorWidth * 2, p.vectorWidth / 2})
        if (w >= 1 && vectorWidthAllowed(w)) {
            Params q = p;
            q.vectorWidth = w;
            add("vector-width " + std::to_string(p.vectorWidth) + "->" + std::to_string(w), q);
        }
    if (!p.registers) {
        Params q = p;
        q.online = !p.online;
        add(p.online ? "two-pass" : "online-softmax", q);
        Params r = p;
        r.registers = true;
        add("row-in-registers", r);
    } else {
        Params q = p;
        q.registers = false;
        q.online = true;
        add("row-from-global online-softmax", q);
    }
    if (p.rowsPerBlock > 1 && p.registers)
        for (int r : {p.rowsPerWarp * 2, p.rowsPerWarp / 2})
            if (r >= 1 && r <= 4) {
                Params q = p;
                q.rowsPerWarp = r;
                add("rows-per-warp " + std::to_string(p.rowsPerWarp) + "->" + std::to_string(r), q);
            }
    Params f = p;
    f.fastMath = !p.fastMath;
    add(p.fastMath ? "accurate-exp" : "fast-math-exp", f);
    return out;
}

Result<Candidate> SoftmaxFamily::generate(const nlohmann::json& params) const
{
    auto parsed = parse(params);
    if (!parsed)
        return parsed.error();
    const Params p = parsed.value();
    const int tpr = threadsPerRow(p);
    const std::string kernel = m_log ? "kf_log_softmax" : "kf_softmax";

    std::ostringstream s;
    s << "// Built-in " << (m_log ? "log_softmax" : "softmax") << " over rows of " << m_rowLength << " (" << m_rows
      << " rows), " << m_inDtype << " -> " << m_outDtype << ", fp32 accumulation.\n"
      << "// Template parameters: " << params.dump() << "\n"
      << dtypePrelude(m_inDtype, m_outDtype) << "#define KF_NEG_INF (-__int_as_float(0x7f800000))\n"
      << (p.fastMath ? "#define KF_EXP(x) __expf(x)\n#define KF_LOG(x) __logf(x)\n"
                     : "#define KF_EXP(x) expf(x)\n#define KF_LOG(x) logf(x)\n")
      << (p.rowsPerBlock > 1 ? "constexpr long long ROWS = " + std::to_string(m_rows) + "LL;\n" : std::string())
      << "constexpr int N = " << m_rowLength << ";\n"
      << "constexpr int V = " << p.vectorWidth << ";\n"
      << "constexpr int NV = N / V;\n"
      << "constexpr int THREADS = " << p.threads << ";\n"
      << "constexpr int TPR = " << tpr << "; // threads per row\n"
      << "constexpr int RPB = " << p.rowsPerBlock << "; // warps (warp-per-row) or 1 (block-per-row) per block\n"
      << "constexpr int RPW = " << p.rowsPerWarp << "; // rows a warp holds at once (warp-per-row)\n"
      << (p.registers ? "constexpr int ITEMS = (NV + TPR - 1) / TPR; // vectors per thread\n" : "")
      << "struct alignas(V * sizeof(in_t)) InVec { in_t v[V]; };\n"
      << "struct alignas(V * sizeof(out_t)) OutVec { out_t v[V]; };\n"
      << R"(
__device__ __forceinline__ float warpMax(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ float warpSum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
// Merges two (max, sum of exp(x - max)) pairs.
__device__ __forceinline__ void mergeOnline(float& m, float& s, float m2, float s2)
{
    const float mn = fmaxf(m, m2);
    if (mn != KF_NEG_INF)
        s = s * KF_EXP(m - mn) + s2 * KF_EXP(m2 - mn);
    m = mn;
}
__device__ __forceinline__ void warpOnline(float& m, float& s)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
        const float s2 = __shfl_xor_sync(0xffffffffu, s, o);
        mergeOnline(m, s, m2, s2);
    }
}
)";
    if (tpr == 32) {
        s << "__device__ __forceinline__ float rowMax(float v) { return warpMax(v); }\n"
          << "__device__ __forceinline__ float rowSum(float v) { return warpSum(v); }\n"
          << "__device__ __forceinline__ void rowOnline(float& m, float& s) { warpOnline(m, s); }\n";
    } else {
        // Block-per-row: every thread of the block reaches each barrier (no early exit).
        s << R"(
__device__ __forceinline__ float rowMax(float v)
{
    __shared__ float red[32];
    v = warpMax(v);
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = v;
    __syncthreads();
    v = (threadIdx.x & 31) < (TPR >> 5) ? red[threadIdx.x & 31] : KF_NEG_INF;
    v = warpMax(v);
    __syncthreads();
    return v;
}
__device__ __forceinline__ float rowSum(float v)
{
    __shared__ float red[32];
    v = warpSum(v);
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = v;
    __syncthreads();
    v = (threadIdx.x & 31) < (TPR >> 5) ? red[threadIdx.x & 31] : 0.0f;
    v = warpSum(v);
    __syncthreads();
    return v;
}
__device__ __forceinline__ void rowOnline(float& m, float& s)
{
    __shared__ float redM[32];
    __shared__ float redS[32];
    warpOnline(m, s);
    if ((threadIdx.x & 31) == 0) {
        redM[threadIdx.x >> 5] = m;
        redS[threadIdx.x >> 5] = s;
    }
    __syncthreads();
    const bool live = (threadIdx.x & 31) < (TPR >> 5);
    m = live ? redM[threadIdx.x & 31] : KF_NEG_INF;
    s = live ? redS[threadIdx.x & 31] : 0.0f;
    warpOnline(m, s);
    __syncthreads();
}
)";
    }
    s << "\nextern \"C\" __global__ void __launch_bounds__(THREADS) " << kernel
      << "(const in_t* __restrict__ x, out_t* __restrict__ y)\n{\n"
      << "    const int lane = threadIdx.x % TPR;\n"
      << "    const long long row = (static_cast<long long>(blockIdx.x) * RPB + threadIdx.x / TPR) * RPW;\n";
    if (p.rowsPerBlock > 1)
        s << "    if (row >= ROWS)\n        return; // the whole warp leaves: warp-per-row has no block barriers\n";
    if (!p.registers)
        s << "    const InVec* xr = reinterpret_cast<const InVec*>(x + row * N);\n"
          << "    OutVec* yr = reinterpret_cast<OutVec*>(y + row * N);\n";

    const std::string finish = m_log ? "    const float lse = m + KF_LOG(s);\n" : "    const float inv = 1.0f / s;\n";
    if (p.registers) {
        // RPW rows per warp (1 in block-per-row mode): every load of every row first, then the
        // reductions of the rows, interleaved by the unrolled loops. Rows past ROWS (the last
        // warp's) are skipped warp-uniformly, so the shuffles stay converged.
        const std::string valid = p.rowsPerBlock > 1 ? "row + r < ROWS" : "true";
        s << "    float cache[RPW][ITEMS][V];\n"
          << "    float m[RPW], s[RPW];\n"
          << "#pragma unroll\n    for (int r = 0; r < RPW; ++r) {\n"
          << "        m[r] = KF_NEG_INF;\n        s[r] = 0.0f;\n"
          << "        if (" << valid << ") {\n"
          << "            const InVec* xr = reinterpret_cast<const InVec*>(x + (row + r) * N);\n"
          << "#pragma unroll\n            for (int k = 0; k < ITEMS; ++k) {\n"
          << "                const int j = lane + k * TPR;\n"
          << "                if (j < NV) {\n                    const InVec t = xr[j];\n"
          << "#pragma unroll\n                    for (int e = 0; e < V; ++e) {\n"
          << "                        cache[r][k][e] = kfLoad(t.v[e]);\n"
          << "                        m[r] = fmaxf(m[r], cache[r][k][e]);\n"
          << "                    }\n                }\n            }\n        }\n    }\n"
          << "#pragma unroll\n    for (int r = 0; r < RPW; ++r)\n        m[r] = rowMax(m[r]);\n"
          << "#pragma unroll\n    for (int r = 0; r < RPW; ++r) {\n"
          << "#pragma unroll\n        for (int k = 0; k < ITEMS; ++k) {\n"
          << "            if (lane + k * TPR < NV) {\n"
          << "#pragma unroll\n                for (int e = 0; e < V; ++e)\n";
        if (m_log)
            s << "                    s[r] += KF_EXP(cache[r][k][e] - m[r]);\n";
        else
            s << "                    s[r] += (cache[r][k][e] = KF_EXP(cache[r][k][e] - m[r]));\n";
        s << "            }\n        }\n    }\n"
          << "#pragma unroll\n    for (int r = 0; r < RPW; ++r)\n        s[r] = rowSum(s[r]);\n"
          << "#pragma unroll\n    for (int r = 0; r < RPW; ++r) {\n"
          << "        if (" << valid << ") {\n"
          << (m_log ? "            const float lse = m[r] + KF_LOG(s[r]);\n"
                    : "            const float inv = 1.0f / s[r];\n")
          << "            OutVec* yr = reinterpret_cast<OutVec*>(y + (row + r) * N);\n"
          << "#pragma unroll\n            for (int k = 0; k < ITEMS; ++k) {\n"
          << "                const int j = lane + k * TPR;\n"
          << "                if (j < NV) {\n                    OutVec o;\n"
          << "#pragma unroll\n                    for (int e = 0; e < V; ++e)\n"
          << (m_log ? "                        o.v[e] = kfStore(cache[r][k][e] - lse);\n"
                    : "                        o.v[e] = kfStore(cache[r][k][e] * inv);\n")
          << "                    yr[j] = o;\n                }\n            }\n        }\n    }\n}\n";
    } else {
        if (p.online) {
            s << "    float m = KF_NEG_INF;\n    float s = 0.0f;\n"
              << "    for (int j = lane; j < NV; j += TPR) {\n"
              << "        const InVec t = xr[j];\n        float vals[V];\n        float vm = KF_NEG_INF;\n"
              << "#pragma unroll\n        for (int e = 0; e < V; ++e) {\n"
              << "            vals[e] = kfLoad(t.v[e]);\n            vm = fmaxf(vm, vals[e]);\n        }\n"
              << "        const float mn = fmaxf(m, vm);\n"
              << "        if (mn != KF_NEG_INF) {\n            s *= KF_EXP(m - mn);\n"
              << "#pragma unroll\n            for (int e = 0; e < V; ++e)\n                s += KF_EXP(vals[e] - mn);\n"
              << "        }\n        m = mn;\n    }\n"
              << "    rowOnline(m, s);\n";
        } else {
            s << "    float m = KF_NEG_INF;\n"
              << "    for (int j = lane; j < NV; j += TPR) {\n        const InVec t = xr[j];\n"
              << "#pragma unroll\n        for (int e = 0; e < V; ++e)\n            m = fmaxf(m, kfLoad(t.v[e]));\n    "
                 "}\n"
              << "    m = rowMax(m);\n    float s = 0.0f;\n"
              << "    for (int j = lane; j < NV; j += TPR) {\n        const InVec t = xr[j];\n"
              << "#pragma unroll\n        for (int e = 0; e < V; ++e)\n            s += KF_EXP(kfLoad(t.v[e]) - m);\n  "
                 "  }\n"
              << "    s = rowSum(s);\n";
        }
        s << finish << "    for (int j = lane; j < NV; j += TPR) {\n        const InVec t = xr[j];\n        OutVec o;\n"
          << "#pragma unroll\n        for (int e = 0; e < V; ++e)\n"
          << (m_log ? "            o.v[e] = kfStore(kfLoad(t.v[e]) - lse);\n"
                    : "            o.v[e] = kfStore(KF_EXP(kfLoad(t.v[e]) - m) * inv);\n")
          << "        yr[j] = o;\n    }\n}\n";
    }

    const std::int64_t rowsPerBlock = static_cast<std::int64_t>(p.rowsPerBlock) * p.rowsPerWarp;
    const std::int64_t grid = (m_rows + rowsPerBlock - 1) / rowsPerBlock;
    if (grid > 2147483647LL)
        return makeError(ErrorCode::Unsupported, "too many rows for one grid", "softmax template");
    Candidate candidate;
    candidate.source = s.str();
    candidate.launchPlan = {{"launches",
                             nlohmann::json::array({{{"kernel", kernel},
                                                     {"grid", nlohmann::json::array({grid})},
                                                     {"block", nlohmann::json::array({p.threads})},
                                                     {"shared_bytes", 0},
                                                     {"args", {"ptr:self", "ptr:out0"}}}})}};
    return candidate;
}

} // namespace kforge::core
