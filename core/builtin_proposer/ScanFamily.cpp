#include "builtin_proposer/ScanFamily.h"

#include <sstream>

namespace kforge::core {

namespace {

const std::vector<Knob> kRowKnobs = {{"threads", "threads-per-block", "", ""},
                                     {"warp_per_row", "", "warp-per-row", "block-per-row"},
                                     {"vector_width", "vector-width", "", ""},
                                     {"split", "split-rows", "", ""}};
const std::vector<Knob> kColumnKnobs = {
    {"threads", "threads-per-block", "", ""}, {"vector_width", "vector-width", "", ""}, {"unroll", "unroll", "", ""}};

// Rows up to this length start one warp per row; longer ones a block per row.
constexpr std::int64_t kWarpRowLimit = 2048;
// A split root aims at about this many blocks (two waves of a 132-SM GPU), with segments of at
// least four chunks each so that the carry between them stays a small part of the work.
constexpr std::int64_t kTargetBlocks = 264;
constexpr int kMaxSplit = 64;

// Segment length of a row split in `split`: a multiple of `v` (vector loads never straddle two
// segments), the last segment possibly shorter.
std::int64_t segmentLength(std::int64_t length, int split, int v)
{
    const std::int64_t per = (length + split - 1) / split;
    return (per + v - 1) / v * v;
}

bool vectorFits(int v, const std::string& inDtype, const std::string& outDtype, std::int64_t unit)
{
    return v <= 8 && v * dtypeBytes(inDtype) <= 16 && v * dtypeBytes(outDtype) <= 16 && unit % v == 0;
}

} // namespace

bool ScanFamily::coversOp(const std::string& op)
{
    return op == "aten::cumsum" || op == "aten::cumprod";
}

Result<std::unique_ptr<ScanFamily>> ScanFamily::create(const OperatorCard& card)
{
    const std::string op = card.qualifiedName();
    if (!coversOp(op))
        return unsupportedCard(card, "op not covered by the built-in proposer yet");
    auto input = contiguousFloatInput(card, "self");
    if (!input)
        return input.error();
    const TensorSpec& in = *input.value();
    const auto rank = static_cast<std::int64_t>(in.sizes.size());
    if (rank == 0)
        return unsupportedCard(card, "a 0-dim input has nothing to scan");
    const ArgSpec* dim = card.findArg("dim");
    if (!dim || dim->kind != ArgKind::Value || !dim->value.is_number_integer())
        return unsupportedCard(card, "dim is not an int");
    std::int64_t d = dim->value.get<std::int64_t>();
    if (d < -rank || d >= rank)
        return unsupportedCard(card, "dim " + std::to_string(d) + " out of range");
    if (d < 0)
        d += rank;
    if (card.outputs.size() != 1 || !isBuiltinFloatDtype(card.outputs[0].dtype) || !card.outputs[0].isContiguous() ||
        card.outputs[0].sizes != in.sizes)
        return unsupportedCard(card, "expected one contiguous float output of the input's sizes");

    std::unique_ptr<ScanFamily> f(new ScanFamily());
    f->m_product = op == "aten::cumprod";
    f->m_kernel = f->m_product ? "kf_cumprod" : "kf_cumsum";
    f->m_inDtype = in.dtype;
    f->m_outDtype = card.outputs[0].dtype; // dtype=None keeps the input's; a dtype argument names it
    f->m_outer = 1;
    f->m_inner = 1;
    for (std::int64_t k = 0; k < rank; ++k) {
        const std::int64_t size = in.sizes[static_cast<std::size_t>(k)];
        if (k < d)
            f->m_outer *= size;
        else if (k > d)
            f->m_inner *= size;
    }
    f->m_length = in.sizes[static_cast<std::size_t>(d)];
    if (f->m_outer * f->m_inner > 2147483647LL || in.numel() > (1LL << 40))
        return unsupportedCard(card, "input too large for one grid");
    return f;
}

std::vector<Knob> ScanFamily::knobs() const
{
    return scansRows() ? kRowKnobs : kColumnKnobs;
}

Result<void> ScanFamily::check(const nlohmann::json& p) const
{
    const std::string context = "scan template parameters";
    if (auto r = checkKnobsAndThreads(p, knobs(), context); !r)
        return r;
    const int v = p["vector_width"].get<int>();
    const std::int64_t unit = scansRows() ? m_length : m_inner;
    if (!vectorFits(v, m_inDtype, m_outDtype, unit))
        return makeError(ErrorCode::InvalidArgument,
                         "vector_width " + std::to_string(v) + " not allowed for " +
                             (scansRows() ? "row length " : "inner size ") + std::to_string(unit),
                         context);
    if (!scansRows()) {
        if (p["unroll"].get<int>() > 8)
            return makeError(ErrorCode::InvalidArgument, "unroll must be 1..8", context);
        return {};
    }
    const int split = p["split"].get<int>();
    if (split > kMaxSplit || (split > 1 && p["warp_per_row"].get<bool>()))
        return makeError(ErrorCode::InvalidArgument,
                         "split must be 1..64, and 1 with warp_per_row (a split row takes a block per segment)",
                         context);
    if ((split - 1) * segmentLength(m_length, split, v) >= m_length)
        return makeError(ErrorCode::InvalidArgument,
                         "split " + std::to_string(split) + " leaves a segment of row length " +
                             std::to_string(m_length) + " empty",
                         context);
    if (m_outer * split > 2147483647LL)
        return makeError(ErrorCode::InvalidArgument, "split " + std::to_string(split) + ": too many blocks", context);
    return {};
}

nlohmann::json ScanFamily::rootParams() const
{
    if (!scansRows()) {
        const int v = widestAllowedWidth([this](int w) { return vectorFits(w, m_inDtype, m_outDtype, m_inner); });
        return {{"threads", 256}, {"vector_width", v}, {"unroll", 4}};
    }
    if (m_length <= kWarpRowLimit) {
        // A vector per lane only where a row fills the warp's lanes with them.
        const int v = widestAllowedWidth(
            [this](int w) { return vectorFits(w, m_inDtype, m_outDtype, m_length) && 32 * w <= m_length; });
        return {{"threads", 256}, {"warp_per_row", true}, {"vector_width", v}, {"split", 1}};
    }
    const int v = widestAllowedWidth([this](int w) { return vectorFits(w, m_inDtype, m_outDtype, m_length); });
    const int threads = m_length >= 32768 ? 512 : 256;
    int split = 1;
    while (split < kMaxSplit && m_outer * split < kTargetBlocks && m_length / (2LL * split) >= 4LL * threads * v)
        split *= 2;
    return {{"threads", threads}, {"warp_per_row", false}, {"vector_width", v}, {"split", split}};
}

std::string ScanFamily::prelude(const nlohmann::json& params) const
{
    std::ostringstream s;
    s << "// Built-in " << (m_product ? "cumprod" : "cumsum") << " over " << m_length << " steps (" << m_outer
      << " outer x " << m_inner << " inner), " << m_inDtype << " -> " << m_outDtype
      << ", fp32 accumulation, each output rounded once.\n"
      << "// Template parameters: " << params.dump() << "\n"
      << dtypePrelude(m_inDtype, m_outDtype) << "constexpr float IDENTITY = " << (m_product ? "1.0f" : "0.0f") << ";\n"
      << "__device__ __forceinline__ float kfOp(float a, float b) { return a " << (m_product ? '*' : '+') << " b; }\n"
      << "constexpr int V = " << params["vector_width"].get<int>() << ";\n"
      << "constexpr int THREADS = " << params["threads"].get<int>() << ";\n"
      << "struct alignas(V * sizeof(in_t)) InVec { in_t v[V]; };\n"
      << "struct alignas(V * sizeof(out_t)) OutVec { out_t v[V]; };\n";
    return s.str();
}

Candidate ScanFamily::rowsCandidate(const nlohmann::json& params) const
{
    const bool warp = params["warp_per_row"].get<bool>();
    const int threads = params["threads"].get<int>();
    const int v = params["vector_width"].get<int>();
    const int split = params["split"].get<int>();
    const int tpr = warp ? 32 : threads;
    std::ostringstream s;
    s << prelude(params) << "constexpr long long N = " << m_length << "LL;\n"
      << "constexpr int TPR = " << tpr << "; // threads per row\n"
      << "constexpr int WARPS = TPR / 32; // warps per row\n";
    if (split == 1)
        s << "constexpr long long ROWS = " << m_outer << "LL;\n"
          << "constexpr int RPB = THREADS / TPR;\n";
    else
        s << "constexpr int SPLIT = " << split << ";\n"
          << "constexpr long long SEG = " << segmentLength(m_length, split, v) << "LL; // a segment's length\n";
    s << R"(
// Scans elements [begin, end) of one row (begin a multiple of V, end N or a segment's end, so a
// lane's V elements are all in or all out) from `carry`, writing y when WRITE; returns the carry
// after `end`, the same in every thread of the row. Every thread of the row's group calls it,
// active or not (the shuffles and barriers name them all).
template <bool WRITE>
__device__ __forceinline__ float kfScanRange(const in_t* __restrict__ x, out_t* __restrict__ y, long long begin,
                                             long long end, float carry, bool active)
{
    const int lane = threadIdx.x % TPR;
    const int warpLane = threadIdx.x % 32;
    for (long long base = begin; base < end; base += static_cast<long long>(TPR) * V) {
        const long long i = base + static_cast<long long>(lane) * V;
        const bool mine = active && i < end;
        float v[V];
        if (mine) {
            const InVec t = *reinterpret_cast<const InVec*>(x + i);
#pragma unroll
            for (int e = 0; e < V; ++e)
                v[e] = kfLoad(t.v[e]);
        } else {
#pragma unroll
            for (int e = 0; e < V; ++e)
                v[e] = IDENTITY;
        }
#pragma unroll
        for (int e = 1; e < V; ++e)
            v[e] = kfOp(v[e - 1], v[e]);
        // Inclusive scan of the lanes' totals across the warp (Hillis-Steele over shuffles).
        float inclusive = v[V - 1];
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const float other = __shfl_up_sync(0xffffffffu, inclusive, o);
            if (warpLane >= o)
                inclusive = kfOp(other, inclusive);
        }
        float before = __shfl_up_sync(0xffffffffu, inclusive, 1);
        if (warpLane == 0)
            before = IDENTITY;
        float chunkTotal;
        if (WARPS == 1) {
            chunkTotal = __shfl_sync(0xffffffffu, inclusive, 31);
        } else {
            __shared__ float warpTotals[WARPS > 1 ? WARPS : 1];
            const int warp = lane / 32;
            if (warpLane == 31)
                warpTotals[warp] = inclusive;
            __syncthreads();
            if (warp == 0) {
                float t = warpLane < WARPS ? warpTotals[warpLane] : IDENTITY;
#pragma unroll
                for (int o = 1; o < 32; o <<= 1) {
                    const float other = __shfl_up_sync(0xffffffffu, t, o);
                    if (warpLane >= o)
                        t = kfOp(other, t);
                }
                if (warpLane < WARPS)
                    warpTotals[warpLane] = t;
            }
            __syncthreads();
            if (warp > 0)
                before = kfOp(warpTotals[warp - 1], before);
            chunkTotal = warpTotals[WARPS - 1];
            __syncthreads(); // the next chunk writes warpTotals again
        }
        if (WRITE && mine) {
            const float prefix = kfOp(carry, before);
            OutVec o;
#pragma unroll
            for (int e = 0; e < V; ++e)
                o.v[e] = kfStore(kfOp(prefix, v[e]));
            *reinterpret_cast<OutVec*>(y + i) = o;
        }
        carry = kfOp(carry, chunkTotal);
    }
    return carry;
}
)";
    Candidate candidate;
    if (split == 1) {
        s << "\nextern \"C\" __global__ void __launch_bounds__(THREADS) " << m_kernel
          << "(const in_t* __restrict__ x, out_t* __restrict__ y)\n{\n"
          << "    const long long row = static_cast<long long>(blockIdx.x) * RPB + threadIdx.x / TPR;\n"
          << "    const bool active = row < ROWS;\n"
          << "    const long long offset = (active ? row : 0) * N;\n"
          << "    kfScanRange<true>(x + offset, y + offset, 0, N, IDENTITY, active);\n}\n";
        candidate.launchPlan = {
            {"launches",
             nlohmann::json::array({launchJson(m_kernel, (m_outer + (threads / tpr) - 1) / (threads / tpr), threads,
                                               {"ptr:self", "ptr:out0"})})}};
    } else {
        // Block b scans segment b % SPLIT of row b / SPLIT.
        s << "\nextern \"C\" __global__ void __launch_bounds__(THREADS) " << m_kernel
          << "_totals(const in_t* __restrict__ x, float* __restrict__ totals)\n{\n"
          << "    const long long row = blockIdx.x / SPLIT;\n"
          << "    const long long begin = (blockIdx.x % SPLIT) * SEG;\n"
          << "    const long long end = begin + SEG < N ? begin + SEG : N;\n"
          << "    const float total = kfScanRange<false>(x + row * N, nullptr, begin, end, IDENTITY, true);\n"
          << "    if (threadIdx.x == 0)\n        totals[blockIdx.x] = total;\n}\n"
          << "\nextern \"C\" __global__ void __launch_bounds__(THREADS) " << m_kernel
          << "(const in_t* __restrict__ x, const float* __restrict__ totals, out_t* __restrict__ y)\n{\n"
          << "    const long long row = blockIdx.x / SPLIT;\n"
          << "    const int segment = blockIdx.x % SPLIT;\n"
          << "    const long long begin = segment * SEG;\n"
          << "    const long long end = begin + SEG < N ? begin + SEG : N;\n"
          << "    float carry = IDENTITY; // the segments before this one, in order\n"
          << "    for (int k = 0; k < segment; ++k)\n        carry = kfOp(carry, totals[row * SPLIT + k]);\n"
          << "    kfScanRange<true>(x + row * N, y + row * N, begin, end, carry, true);\n}\n";
        const std::int64_t blocks = m_outer * split;
        candidate.launchPlan = {
            {"launches",
             nlohmann::json::array(
                 {launchJson(m_kernel + "_totals", blocks, threads, {"ptr:self", "ptr:scratch.totals"}),
                  launchJson(m_kernel, blocks, threads, {"ptr:self", "ptr:scratch.totals", "ptr:out0"})})},
            {"scratch", nlohmann::json::array({{{"name", "totals"}, {"bytes", blocks * 4}, {"zero", false}}})}};
    }
    candidate.source = s.str();
    return candidate;
}

Candidate ScanFamily::columnsCandidate(const nlohmann::json& params) const
{
    const int threads = params["threads"].get<int>();
    const int v = params["vector_width"].get<int>();
    const std::int64_t columnThreads = m_outer * (m_inner / v);
    std::ostringstream s;
    s << prelude(params) << "constexpr long long N = " << m_length << "LL;\n"
      << "constexpr long long INNER = " << m_inner << "LL;\n"
      << "constexpr long long GROUPS = INNER / V; // V adjacent columns per thread\n"
      << "constexpr long long COLUMN_THREADS = " << columnThreads << "LL;\n"
      << "constexpr int UNROLL = " << params["unroll"].get<int>() << ";\n"
      << "\nextern \"C\" __global__ void __launch_bounds__(THREADS) " << m_kernel
      << "(const in_t* __restrict__ x, out_t* __restrict__ y)\n{\n"
      << R"(    const long long t = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;
    if (t >= COLUMN_THREADS)
        return;
    const long long offset = (t / GROUPS) * N * INNER + (t % GROUPS) * V;
    float acc[V];
#pragma unroll
    for (int e = 0; e < V; ++e)
        acc[e] = IDENTITY;
    for (long long j0 = 0; j0 < N; j0 += UNROLL) {
        // The loads of UNROLL steps first: independent of the carry, they are in flight together.
        InVec in[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
            if (j0 + u < N)
                in[u] = *reinterpret_cast<const InVec*>(x + offset + (j0 + u) * INNER);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            if (j0 + u < N) {
                OutVec o;
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    acc[e] = kfOp(acc[e], kfLoad(in[u].v[e]));
                    o.v[e] = kfStore(acc[e]);
                }
                *reinterpret_cast<OutVec*>(y + offset + (j0 + u) * INNER) = o;
            }
        }
    }
}
)";
    Candidate candidate;
    candidate.source = s.str();
    candidate.launchPlan = {{"launches",
                             nlohmann::json::array({launchJson(m_kernel, (columnThreads + threads - 1) / threads,
                                                               threads, {"ptr:self", "ptr:out0"})})}};
    return candidate;
}

Result<Candidate> ScanFamily::generate(const nlohmann::json& params) const
{
    if (auto r = check(params); !r)
        return r.error();
    return scansRows() ? rowsCandidate(params) : columnsCandidate(params);
}

} // namespace kforge::core
