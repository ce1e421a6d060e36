#include "builtin_proposer/ChannelsLastPoolFamily.h"

#include "builtin_proposer/ReduceFamily.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace kforge::core {

namespace {

const std::vector<Knob> kKnobs = {{"vector_width", "vector-width", "", ""},
                                  {"channel_vectors", "channel-vectors", "", ""},
                                  {"hw_split", "hw-split", "", ""}};

std::int64_t nextPowerOfTwo(std::int64_t v)
{
    std::int64_t p = 1;
    while (p < v)
        p *= 2;
    return p;
}

const TensorSpec* selfTensor(const OperatorCard& card)
{
    const ArgSpec* self = card.findArg("self");
    return self && self->kind == ArgKind::Tensor && self->tensors.size() == 1 ? &self->tensors[0] : nullptr;
}

} // namespace

bool ChannelsLastPoolFamily::claims(const OperatorCard& card)
{
    const TensorSpec* in = selfTensor(card);
    return ReduceFamily::coversOp(card.qualifiedName()) && in && !in->isContiguous() && isChannelsLast(*in);
}

Result<std::unique_ptr<ChannelsLastPoolFamily>> ChannelsLastPoolFamily::create(const OperatorCard& card)
{
    if (!claims(card))
        return unsupportedCard(card, "expected a mean / sum / adaptive_avg_pool2d of a channels-last 4-D tensor");
    const TensorSpec& in = *selfTensor(card);
    if (!isBuiltinFloatDtype(in.dtype))
        return unsupportedCard(card, "input dtype " + in.dtype + " not covered (float32, float16, bfloat16)");
    if (in.numel() == 0)
        return unsupportedCard(card, "empty input");
    auto name = ReduceFamily::reductionName(card);
    if (!name)
        return name.error();
    std::unique_ptr<ChannelsLastPoolFamily> f(new ChannelsLastPoolFamily());
    f->m_op = name.value();
    if (f->m_op != "adaptive_avg_pool2d") {
        const ArgSpec* dim = card.findArg("dim");
        std::set<std::int64_t> dims;
        if (dim && dim->kind == ArgKind::Value && dim->value.is_array())
            for (const auto& d : dim->value)
                if (d.is_number_integer())
                    dims.insert((d.get<std::int64_t>() + 4) % 4);
        if (dims != std::set<std::int64_t>{2, 3})
            return unsupportedCard(card,
                                   "reduction over dims " + (dim ? dim->value.dump() : std::string("?")) +
                                       " of a channels-last tensor: only H and W ([2, 3]) are covered");
    }
    f->m_inDtype = in.dtype;
    f->m_batch = in.sizes[0];
    f->m_channels = in.sizes[1];
    f->m_spatial = in.sizes[2] * in.sizes[3];
    if (card.outputs.size() != 1 || !isBuiltinFloatDtype(card.outputs[0].dtype) || !card.outputs[0].isContiguous() ||
        card.outputs[0].numel() != f->m_batch * f->m_channels)
        return unsupportedCard(card, "expected one contiguous float output with one element per (n, c)");
    f->m_outDtype = card.outputs[0].dtype;
    if (in.numel() > (1LL << 40) || f->m_batch * f->m_channels > 2147483647LL)
        return unsupportedCard(card, "input too large for one grid");
    return f;
}

Result<void> ChannelsLastPoolFamily::check(const nlohmann::json& p) const
{
    const std::string context = "channels_last_pool template parameters";
    if (auto r = checkKnobs(p, kKnobs, context); !r)
        return r;
    const int v = p["vector_width"].get<int>();
    const int cv = p["channel_vectors"].get<int>();
    const int split = p["hw_split"].get<int>();
    if (v > 8 || v * dtypeBytes(m_inDtype) > 16 || v * dtypeBytes(m_outDtype) > 16 || m_channels % v != 0)
        return makeError(ErrorCode::InvalidArgument,
                         "vector_width " + std::to_string(v) + " must divide the channel count " +
                             std::to_string(m_channels) + " (at most 16 bytes)",
                         context);
    // More threads than channel vectors or positions only to fill the smallest block (one warp).
    if (cv > nextPowerOfTwo(m_channels / v) || (split > nextPowerOfTwo(m_spatial) && cv * split > 32))
        return makeError(ErrorCode::InvalidArgument, "channel_vectors or hw_split larger than the tensor needs",
                         context);
    if (cv * split < 32 || cv * split > 1024)
        return makeError(ErrorCode::InvalidArgument,
                         "channel_vectors x hw_split must be 32..1024 threads, got " + std::to_string(cv * split),
                         context);
    return {};
}

nlohmann::json ChannelsLastPoolFamily::rootParams() const
{
    const int v = widestVectorWidth(m_channels, m_inDtype, m_outDtype);
    // Up to 32 channel vectors per block (a warp's loads are one contiguous run of channels), and
    // about 256 threads: the rest walk the spatial positions.
    const std::int64_t cv = std::min<std::int64_t>(32, nextPowerOfTwo(m_channels / v));
    std::int64_t split = 1;
    while (cv * split < 256 && split < nextPowerOfTwo(m_spatial))
        split *= 2;
    while (cv * split < 32) // tiny tensors: pad the block to a warp
        split *= 2;
    return {{"vector_width", v}, {"channel_vectors", cv}, {"hw_split", split}};
}

std::vector<Knob> ChannelsLastPoolFamily::knobs() const
{
    return kKnobs;
}

Result<Candidate> ChannelsLastPoolFamily::generate(const nlohmann::json& params) const
{
    if (auto r = check(params); !r)
        return r.error();
    const int v = params["vector_width"].get<int>();
    const int cv = params["channel_vectors"].get<int>();
    const int split = params["hw_split"].get<int>();
    const std::int64_t channelVectors = m_channels / v;
    const std::int64_t tiles = (channelVectors + cv - 1) / cv;
    const std::string kernel = "kf_cl_" + m_op;
    const bool mean = m_op != "sum";

    std::ostringstream s;
    s << "// Built-in " << m_op << " over H*W = " << m_spatial << " of a channels-last [" << m_batch << ", "
      << m_channels << ", H, W] tensor, " << m_inDtype << " -> " << m_outDtype << ", fp32 accumulation.\n"
      << "// Template parameters: " << params.dump() << "\n"
      << dtypePrelude(m_inDtype, m_outDtype) << "constexpr long long C = " << m_channels << "LL;\n"
      << "constexpr int HW = " << m_spatial << ";\n"
      << "constexpr int V = " << v << ";\n"
      << "constexpr int CVEC = " << channelVectors << "; // vectors of V channels per position\n"
      << "constexpr int CV = " << cv << "; // channel vectors per block\n"
      << "constexpr int S = " << split << "; // threads along H*W per channel vector\n"
      << "constexpr int TILES = " << tiles << "; // blocks per image\n"
      << "struct alignas(V * sizeof(in_t)) InVec { in_t v[V]; };\n"
      << "struct alignas(V * sizeof(out_t)) OutVec { out_t v[V]; };\n"
      << "\nextern \"C\" __global__ void __launch_bounds__(CV * S) " << kernel
      << "(const in_t* __restrict__ x, out_t* __restrict__ y)\n{\n"
      << "    const long long n = blockIdx.x / TILES;\n"
      << "    const int lane = threadIdx.x % CV;\n"
      << "    const int c = (blockIdx.x % TILES) * CV + lane; // this thread's channel vector\n"
      << "    const int h = threadIdx.x / CV;                 // its first spatial position\n"
      << "    float acc[V];\n"
      << "#pragma unroll\n    for (int e = 0; e < V; ++e)\n        acc[e] = 0.0f;\n"
      << "    if (c < CVEC) {\n"
      << "        const in_t* xn = x + n * HW * C + static_cast<long long>(c) * V;\n"
      << "#pragma unroll 4\n"
      << "        for (int p = h; p < HW; p += S) {\n"
      << "            const InVec t = *reinterpret_cast<const InVec*>(xn + p * C);\n"
      << "#pragma unroll\n            for (int e = 0; e < V; ++e)\n                acc[e] += kfLoad(t.v[e]);\n"
      << "        }\n    }\n";
    if (split > 1)
        s << "    // The S partial sums of each channel, added in the fixed order h = 0, 1, ..., S - 1.\n"
          << "    __shared__ float part[S * V * CV]; // [h][e][lane]: consecutive lanes, consecutive banks\n"
          << "#pragma unroll\n    for (int e = 0; e < V; ++e)\n        part[(h * V + e) * CV + lane] = acc[e];\n"
          << "    __syncthreads();\n"
          << "    if (h != 0)\n        return;\n"
          << "#pragma unroll\n    for (int e = 0; e < V; ++e) {\n        float sum = 0.0f;\n"
          << "        for (int k = 0; k < S; ++k)\n            sum += part[(k * V + e) * CV + lane];\n"
          << "        acc[e] = sum;\n    }\n";
    s << "    if (c >= CVEC)\n        return;\n"
      << "    OutVec o;\n"
      << "#pragma unroll\n    for (int e = 0; e < V; ++e)\n"
      << "        o.v[e] = kfStore(" << (mean ? "acc[e] / static_cast<float>(HW)" : "acc[e]") << ");\n"
      << "    *reinterpret_cast<OutVec*>(y + n * C + static_cast<long long>(c) * V) = o;\n}\n";
    Candidate candidate;
    candidate.source = s.str();
    candidate.launchPlan = {
        {"launches",
         nlohmann::json::array({launchJson(kernel, m_batch * tiles, cv * split, {"ptr:self", "ptr:out0"})})}};
    return candidate;
}

} // namespace kforge::core
