#include "builtin_proposer/EmbeddingFamily.h"

#include <sstream>

namespace kforge::core {

namespace {

const std::vector<Knob> kKnobs = {{"threads", "threads-per-block", "", ""},
                                  {"rows_per_block", "rows-per-block", "", ""},
                                  {"vector_width", "vector-width", "", ""}};

} // namespace

Result<std::unique_ptr<EmbeddingFamily>> EmbeddingFamily::create(const OperatorCard& card)
{
    if (!coversOp(card.qualifiedName()))
        return unsupportedCard(card, "op not covered by the built-in proposer yet");
    const ArgSpec* weight = card.findArg("weight");
    if (!weight || weight->kind != ArgKind::Tensor || weight->tensors.size() != 1)
        return unsupportedCard(card, "the card has no tensor argument 'weight'");
    const TensorSpec& w = weight->tensors[0];
    if (!isBuiltinFloatDtype(w.dtype))
        return unsupportedCard(card, "weight dtype " + w.dtype + " not covered (float32, float16, bfloat16)");
    if (w.sizes.size() != 2 || !w.isContiguous() || w.numel() == 0)
        return unsupportedCard(card, "weight " + w.toShortString() + ": expected a non-empty contiguous [V, D] tensor");
    const ArgSpec* indices = card.findArg("indices");
    if (!indices || indices->kind != ArgKind::Tensor || indices->tensors.size() != 1)
        return unsupportedCard(card, "the card has no tensor argument 'indices'");
    const TensorSpec& idx = indices->tensors[0];
    if (idx.dtype != "int64" && idx.dtype != "int32")
        return unsupportedCard(card, "indices dtype " + idx.dtype + " not covered (int64, int32)");
    if (!idx.isContiguous())
        return unsupportedCard(card, "non-contiguous indices " + idx.toShortString());
    if (idx.numel() == 0)
        return unsupportedCard(card, "empty indices");
    std::vector<std::int64_t> outSizes = idx.sizes;
    outSizes.push_back(w.sizes[1]);
    if (card.outputs.size() != 1 || card.outputs[0].dtype != w.dtype || card.outputs[0].sizes != outSizes ||
        !card.outputs[0].isContiguous())
        return unsupportedCard(card, "expected one contiguous output [*indices.shape, D] of the weight's dtype");
    std::unique_ptr<EmbeddingFamily> f(new EmbeddingFamily());
    f->m_dtype = w.dtype;
    f->m_indexDtype = idx.dtype;
    f->m_vocab = w.sizes[0];
    f->m_dim = w.sizes[1];
    f->m_indices = idx.numel();
    if (f->m_indices > 2147483647LL)
        return unsupportedCard(card, "too many indices for one grid");
    return f;
}

Result<void> EmbeddingFamily::check(const nlohmann::json& p) const
{
    const std::string context = "embedding template parameters";
    if (auto r = checkKnobsAndThreads(p, kKnobs, context, 32); !r)
        return r;
    const int threads = p["threads"].get<int>();
    const int rows = p["rows_per_block"].get<int>();
    const int v = p["vector_width"].get<int>();
    if (rows > threads || rows > 256)
        return makeError(ErrorCode::InvalidArgument, "rows_per_block must be at most threads and 256", context);
    if (v > 8 || v * dtypeBytes(m_dtype) > 16 || m_dim % v != 0)
        return makeError(ErrorCode::InvalidArgument,
                         "vector_width " + std::to_string(v) + " must divide D = " + std::to_string(m_dim) +
                             " (at most 16 bytes)",
                         context);
    return {};
}

nlohmann::json EmbeddingFamily::rootParams() const
{
    const int v = widestVectorWidth(m_dim, m_dtype, m_dtype);
    int perRow = 1; // threads per row: enough for one vector each, at most a warp
    while (perRow < 32 && perRow < m_dim / v)
        perRow *= 2;
    return {{"threads", 256}, {"rows_per_block", 256 / perRow}, {"vector_width", v}};
}

std::vector<Knob> EmbeddingFamily::knobs() const
{
    return kKnobs;
}

Result<Candidate> EmbeddingFamily::generate(const nlohmann::json& params) const
{
    if (auto r = check(params); !r)
        return r.error();
    const int threads = params["threads"].get<int>();
    const int rows = params["rows_per_block"].get<int>();
    const int v = params["vector_width"].get<int>();

    std::ostringstream s;
    s << "// Built-in embedding: " << m_indices << " " << m_indexDtype << " indices into a " << m_dtype << " ["
      << m_vocab << ", " << m_dim << "] weight. An index outside [0, V) is undefined for this candidate: its row\n"
      << "// is skipped (nothing written, nothing read outside the weight).\n"
      << "// Template parameters: " << params.dump() << "\n"
      << dtypePrelude(m_dtype, m_dtype) << "typedef " << (m_indexDtype == "int64" ? "long long" : "int")
      << " index_t;\n"
      << "constexpr long long NIDX = " << m_indices << "LL;\n"
      << "constexpr long long VOCAB = " << m_vocab << "LL;\n"
      << "constexpr long long D = " << m_dim << "LL;\n"
      << "constexpr int V = " << v << ";\n"
      << "constexpr long long DV = D / V;\n"
      << "constexpr int THREADS = " << threads << ";\n"
      << "constexpr int RPB = " << rows << "; // rows per block\n"
      << "constexpr int TPR = THREADS / RPB; // threads per row\n"
      << "struct alignas(V * sizeof(in_t)) Vec { in_t v[V]; };\n"
      << "\nextern \"C\" __global__ void __launch_bounds__(THREADS) kf_embedding(const in_t* __restrict__ w, "
         "const index_t* __restrict__ indices, out_t* __restrict__ y)\n{\n"
      << "    const long long row = static_cast<long long>(blockIdx.x) * RPB + threadIdx.x / TPR;\n"
      << "    if (row >= NIDX)\n        return; // no block barriers below\n"
      << "    const long long id = static_cast<long long>(indices[row]);\n"
      << "    if (id < 0 || id >= VOCAB)\n        return; // undefined for the candidate: never read outside the "
         "weight\n"
      << "    const Vec* src = reinterpret_cast<const Vec*>(w + id * D);\n"
      << "    Vec* dst = reinterpret_cast<Vec*>(y + row * D);\n"
      << "    for (long long j = threadIdx.x % TPR; j < DV; j += TPR)\n        dst[j] = src[j];\n}\n";
    Candidate candidate;
    candidate.source = s.str();
    candidate.launchPlan = {{"launches",
                             nlohmann::json::array({launchJson("kf_embedding", (m_indices + rows - 1) / rows, threads,
                                                               {"ptr:weight", "ptr:indices", "ptr:out0"})})}};
    return candidate;
}

} // namespace kforge::core
