#include "builtin_proposer/ReduceFamily.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace kforge::core {

namespace {

const std::vector<Knob> kKnobs = {{"threads", "threads-per-block", "", ""},
                                  {"warp_per_row", "", "warp-per-row", "block-per-row"},
                                  {"lanes_per_row", "lanes-per-row", "", ""},
                                  {"vector_width", "vector-width", "", ""}};

// Lanes per row for the warp mode's root: about four vectors per lane, so short rows (a 7x7 pool
// window is 49 values) still get several independent loads in flight per thread.
int rootLanesPerRow(std::int64_t vectors)
{
    int lanes = 1;
    while (lanes < 32 && lanes * 4 < vectors)
        lanes *= 2;
    return lanes;
}

} // namespace

bool ReduceFamily::coversOp(const std::string& op)
{
    return op == "aten::adaptive_avg_pool2d" || op == "aten::mean.dim" || op == "aten::sum.dim_IntList";
}

Result<std::string> ReduceFamily::reductionName(const OperatorCard& card)
{
    const std::string op = card.qualifiedName();
    if (!coversOp(op))
        return unsupportedCard(card, "op not covered by the built-in proposer yet");
    if (op == "aten::adaptive_avg_pool2d") {
        const ArgSpec* size = card.findArg("output_size");
        if (!size || size->kind != ArgKind::Value || size->value != nlohmann::json::array({1, 1}))
            return unsupportedCard(card,
                                   "adaptive_avg_pool2d output_size " + (size ? size->value.dump() : std::string("?")) +
                                       ": only [1, 1] is covered");
        return std::string("adaptive_avg_pool2d");
    }
    if (const ArgSpec* dtype = card.findArg("dtype"); dtype && dtype->kind != ArgKind::None)
        return unsupportedCard(card, "dtype argument " + dtype->value.dump() + ": only dtype=None is covered");
    return std::string(op == "aten::mean.dim" ? "mean" : "sum");
}

Result<std::unique_ptr<ReduceFamily>> ReduceFamily::create(const OperatorCard& card)
{
    auto name = reductionName(card);
    if (!name)
        return name.error();
    auto input = contiguousFloatInput(card, "self");
    if (!input)
        return input.error();
    const TensorSpec& in = *input.value();
    const auto rank = static_cast<std::int64_t>(in.sizes.size());
    std::unique_ptr<ReduceFamily> f(new ReduceFamily());
    f->m_inDtype = in.dtype;
    f->m_op = name.value();
    std::int64_t reduced = 0; // trailing dims reduced
    if (f->m_op == "adaptive_avg_pool2d") {
        if (rank != 3 && rank != 4)
            return unsupportedCard(card, "adaptive_avg_pool2d input " + in.toShortString() + ": expected rank 3 or 4");
        reduced = 2;
    } else {
        const ArgSpec* dim = card.findArg("dim");
        std::set<std::int64_t> dims;
        if (dim && dim->kind == ArgKind::Value && dim->value.is_array()) {
            for (const auto& d : dim->value) {
                if (!d.is_number_integer())
                    return unsupportedCard(card, "dim is not a list of ints");
                std::int64_t x = d.get<std::int64_t>();
                if (rank == 0 ? (x != 0 && x != -1) : (x < -rank || x >= rank))
                    return unsupportedCard(card, "dim " + std::to_string(x) + " out of range");
                dims.insert(rank == 0 ? 0 : (x < 0 ? x + rank : x));
            }
        } else if (dim && dim->kind != ArgKind::None) {
            return unsupportedCard(card, "dim is not a list of ints or None");
        }
        if (dims.empty() || rank == 0)
            reduced = rank; // dim=None or []: every dim
        else {
            reduced = static_cast<std::int64_t>(dims.size());
            if (*dims.begin() != rank - reduced) // a set: contiguous trailing iff the smallest is rank - k
                return unsupportedCard(
                    card, "reduction over dims " + dim->value.dump() + ": only the trailing dims are covered");
        }
    }
    f->m_rowLength = 1;
    for (std::int64_t d = rank - reduced; d < rank; ++d)
        f->m_rowLength *= in.sizes[static_cast<std::size_t>(d)];
    f->m_rows = in.numel() / f->m_rowLength;
    if (f->m_rowLength > (1LL << 31) - 1 || f->m_rows > 2147483647LL)
        return unsupportedCard(card, "input too large for one grid");
    if (card.outputs.size() != 1 || !isBuiltinFloatDtype(card.outputs[0].dtype) || !card.outputs[0].isContiguous() ||
        card.outputs[0].numel() != f->m_rows)
        return unsupportedCard(card, "expected one contiguous float output with one element per reduced row");
    f->m_outDtype = card.outputs[0].dtype;
    return f;
}

Result<void> ReduceFamily::check(const nlohmann::json& p) const
{
    const std::string context = "reduce template parameters";
    if (auto r = checkKnobsAndThreads(p, kKnobs, context); !r)
        return r;
    const int v = p["vector_width"].get<int>();
    const int lanes = p["lanes_per_row"].get<int>();
    if (lanes > 32 || (!p["warp_per_row"].get<bool>() && lanes != 32))
        return makeError(ErrorCode::InvalidArgument,
                         "lanes_per_row must be 1..32 with warp_per_row, and 32 (unused) without", context);
    if (v > 8 || v * dtypeBytes(m_inDtype) > 16 || m_rowLength % v != 0)
        return makeError(ErrorCode::InvalidArgument,
                         "vector_width " + std::to_string(v) + " not allowed for row length " +
                             std::to_string(m_rowLength),
                         context);
    return {};
}

nlohmann::json ReduceFamily::rootParams() const
{
    const int v = widestVectorWidth(m_rowLength, m_inDtype, m_inDtype); // the output is one value per row
    const std::int64_t vectors = m_rowLength / v;
    if (vectors <= 32 * 8)
        return {
            {"threads", 256}, {"warp_per_row", true}, {"lanes_per_row", rootLanesPerRow(vectors)}, {"vector_width", v}};
    int threads = 64;
    while (threads < 1024 && threads * 4 < vectors)
        threads *= 2;
    return {{"threads", threads}, {"warp_per_row", false}, {"lanes_per_row", 32}, {"vector_width", v}};
}

std::vector<Knob> ReduceFamily::knobs() const
{
    return kKnobs;
}

Result<Candidate> ReduceFamily::generate(const nlohmann::json& params) const
{
    if (auto r = check(params); !r)
        return r.error();
    const int threads = params["threads"].get<int>();
    const bool warp = params["warp_per_row"].get<bool>();
    const int lanes = params["lanes_per_row"].get<int>();
    const int v = params["vector_width"].get<int>();
    const std::string kernel = "kf_" + m_op;
    const bool mean = m_op != "sum";
    const int tpr = warp ? lanes : threads; // threads per row
    const std::int64_t perThread = (m_rowLength / v + tpr - 1) / tpr;

    std::ostringstream s;
    s << "// Built-in " << m_op << " over rows of " << m_rowLength << " (" << m_rows << " rows), " << m_inDtype
      << " -> " << m_outDtype << ", fp32 accumulation.\n"
      << "// Template parameters: " << params.dump() << "\n"
      << dtypePrelude(m_inDtype, m_outDtype) << reductionHelpers()
      << (warp ? "constexpr long long ROWS = " + std::to_string(m_rows) + "LL;\n" : std::string())
      << "constexpr long long N = " << m_rowLength << "LL;\n"
      << "constexpr int V = " << v << ";\n"
      << "constexpr long long NV = N / V;\n"
      << "constexpr int THREADS = " << threads << ";\n"
      << "constexpr int TPR = " << tpr << "; // threads per row\n"
      << "constexpr int RPB = THREADS / TPR;\n"
      << "struct alignas(V * sizeof(in_t)) InVec { in_t v[V]; };\n"
      << "\nextern \"C\" __global__ void __launch_bounds__(THREADS) " << kernel
      << "(const in_t* __restrict__ x, out_t* __restrict__ y)\n{\n"
      << "    const int lane = threadIdx.x % TPR;\n"
      << "    const long long row = static_cast<long long>(blockIdx.x) * RPB + threadIdx.x / TPR;\n";
    if (warp)
        // No early return: the shuffles below name the whole warp, whose other rows may be valid.
        s << "    const bool active = row < ROWS;\n";
    else
        s << "    const bool active = true; // one row per block, the grid has exactly ROWS blocks\n";
    s << "    const InVec* xr = reinterpret_cast<const InVec*>(x + (active ? row : 0) * N);\n"
      << "    float acc = 0.0f;\n";
    if (perThread <= 16)
        s << "#pragma unroll\n"; // short rows: every load of the thread issued before the adds
    s << "    for (long long j = lane; j < NV; j += TPR) {\n"
      << "        if (active) {\n            const InVec t = xr[j];\n"
      << "#pragma unroll\n            for (int e = 0; e < V; ++e)\n                acc += kfLoad(t.v[e]);\n        }\n "
         "   }\n";
    if (warp)
        s << "    // Butterfly over the row's TPR lanes (an aligned group of the warp).\n"
          << "#pragma unroll\n    for (int o = TPR / 2; o > 0; o >>= 1)\n"
          << "        acc += __shfl_xor_sync(0xffffffffu, acc, o);\n";
    else
        s << "    acc = kfBlockSum<THREADS>(acc);\n";
    s << "    if (active && lane == 0)\n        y[row] = kfStore(" << (mean ? "acc / static_cast<float>(N)" : "acc")
      << ");\n}\n";
    const std::int64_t rpb = threads / tpr;
    Candidate candidate;
    candidate.source = s.str();
    candidate.launchPlan = {
        {"launches",
         nlohmann::json::array({launchJson(kernel, (m_rows + rpb - 1) / rpb, threads, {"ptr:self", "ptr:out0"})})}};
    return candidate;
}

} // namespace kforge::core
