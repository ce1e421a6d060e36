#include "builtin_proposer/CatFamily.h"

#include <sstream>

namespace kforge::core {

namespace {

const std::vector<Knob> kKnobs = {{"threads", "threads-per-block", "", ""}, {"vector_width", "vector-width", "", ""}};

constexpr std::size_t kMaxInputs = 8;

} // namespace

Result<std::unique_ptr<CatFamily>> CatFamily::create(const OperatorCard& card)
{
    if (!coversOp(card.qualifiedName()))
        return unsupportedCard(card, "op not covered by the built-in proposer yet");
    const ArgSpec* tensors = card.findArg("tensors");
    if (!tensors || tensors->kind != ArgKind::TensorList)
        return unsupportedCard(card, "the card has no tensor list 'tensors'");
    if (tensors->tensors.size() < 2 || tensors->tensors.size() > kMaxInputs)
        return unsupportedCard(card, std::to_string(tensors->tensors.size()) + " tensors: 2 to 8 are covered");
    if (card.outputs.size() != 1)
        return unsupportedCard(card, "expected one output");
    const TensorSpec& out = card.outputs[0];
    if (!isBuiltinFloatDtype(out.dtype))
        return unsupportedCard(card, "output dtype " + out.dtype + " not covered (float32, float16, bfloat16)");
    const auto order = denseStorageOrder(out);
    if (!order)
        return unsupportedCard(card, "output layout " + out.toShortString() + " (dense layouts only)");
    const std::int64_t rank = static_cast<std::int64_t>(out.sizes.size());
    const ArgSpec* dimArg = card.findArg("dim");
    std::int64_t dim = 0;
    if (dimArg && dimArg->kind == ArgKind::Value) {
        if (!dimArg->value.is_number_integer())
            return unsupportedCard(card, "dim " + dimArg->value.dump() + " is not an integer");
        dim = dimArg->value.get<std::int64_t>();
    }
    if (dim < 0)
        dim += rank;
    if (rank == 0 || dim < 0 || dim >= rank)
        return unsupportedCard(card, "dim out of range for a " + std::to_string(rank) + "-d output");

    std::unique_ptr<CatFamily> f(new CatFamily());
    f->m_dtype = out.dtype;
    f->m_dim = static_cast<int>(dim);
    std::int64_t offset = 0; // along dim
    for (const TensorSpec& in : tensors->tensors) {
        if (in.dtype != out.dtype)
            return unsupportedCard(card, "input " + in.toShortString() + " of another dtype than the output's");
        if (in.sizes.size() != out.sizes.size() || in.strides.size() != in.sizes.size())
            return unsupportedCard(card, "input " + in.toShortString() + " of another rank than the output's");
        for (std::int64_t d = 0; d < rank; ++d) {
            if (d != dim && in.sizes[d] != out.sizes[d])
                return unsupportedCard(
                    card, "input " + in.toShortString() + " does not match the output off dim " + std::to_string(dim));
            if (in.sizes[d] != 1 && in.strides[d] < 0)
                return unsupportedCard(card, "input " + in.toShortString() + " has a negative stride");
        }
        if (in.numel() == 0)
            return unsupportedCard(card, "an empty input (eager skips it)");
        Piece piece;
        piece.numel = in.numel();
        piece.outBase = offset * out.strides[dim];
        // The input's elements over the output's storage order; the slab has the output's strides.
        MergedDims merged = mergeDims(*order, in.sizes, {in.strides, out.strides});
        piece.sizes = std::move(merged.sizes);
        piece.inStrides = std::move(merged.strides[0]);
        piece.outStrides = std::move(merged.strides[1]);
        if (piece.sizes.empty()) { // one element
            piece.sizes = {1};
            piece.inStrides = {1};
            piece.outStrides = {1};
        }
        f->m_pieces.push_back(std::move(piece));
        offset += in.sizes[dim];
    }
    if (offset != out.sizes[dim])
        return unsupportedCard(card,
                               "the inputs' sizes along dim " + std::to_string(dim) + " do not add up to the output's");
    if (out.numel() > 2147483647LL * 8)
        return unsupportedCard(card, "too many elements for one grid");
    return f;
}

bool CatFamily::vectorWidthFits(int width) const
{
    if (width == 1)
        return true;
    if (width * dtypeBytes(m_dtype) > 16)
        return false;
    for (const Piece& p : m_pieces) {
        // A vector stays in one innermost row of both sides, which step by 1 there, and starts on a
        // multiple of the width everywhere (base pointers are 16-byte aligned: the runtime's guard).
        if (p.sizes.back() % width != 0 || p.outBase % width != 0 || !stridesAllowVectors(p.inStrides, width) ||
            !stridesAllowVectors(p.outStrides, width))
            return false;
    }
    return true;
}

Result<void> CatFamily::check(const nlohmann::json& p) const
{
    const std::string context = "cat template parameters";
    if (auto r = checkKnobsAndThreads(p, kKnobs, context); !r)
        return r;
    const int v = p["vector_width"].get<int>();
    if (v > 8 || !vectorWidthFits(v))
        return makeError(ErrorCode::InvalidArgument,
                         "vector_width " + std::to_string(v) +
                             " must divide every input's innermost run, with unit strides there (at most 16 bytes)",
                         context);
    return {};
}

nlohmann::json CatFamily::rootParams() const
{
    int v = 8;
    while (v > 1 && !vectorWidthFits(v))
        v /= 2;
    return {{"threads", 256}, {"vector_width", v}};
}

std::vector<Knob> CatFamily::knobs() const
{
    return kKnobs;
}

Result<Candidate> CatFamily::generate(const nlohmann::json& params) const
{
    if (auto r = check(params); !r)
        return r.error();
    const int threads = params["threads"].get<int>();
    const int v = params["vector_width"].get<int>();

    // One launch for every input (eager's cat is one batched launch too; one launch per input cost a
    // launch's host time per extra input, dispatch_overhead 2026-12-02): input k owns a range of the
    // grid's blocks, in proportion to its size, and grid-strides over its own vectors within it.
    std::vector<std::int64_t> blocks;
    for (const Piece& p : m_pieces) {
        const std::int64_t vectors = p.numel / v;
        blocks.push_back(
            std::max<std::int64_t>(1, std::min<std::int64_t>((vectors + threads - 1) / threads, 65535LL * 8)));
    }
    std::ostringstream s;
    s << "// Built-in cat of " << m_pieces.size() << " " << m_dtype << " tensors along dim " << m_dim
      << ": one launch, each input copied into its slab of the output by its own range of blocks,\n"
      << "// walking the output's storage order (dims merged where both sides step through them as one).\n"
      << "// Template parameters: " << params.dump() << "\n"
      << dtypePrelude(m_dtype, m_dtype) << "constexpr int V = " << v << ";\n"
      << "constexpr int THREADS = " << threads << ";\n"
      << "struct alignas(V * sizeof(in_t)) Vec { in_t v[V]; };\n";
    for (std::size_t k = 0; k < m_pieces.size(); ++k) {
        const Piece& p = m_pieces[k];
        const std::size_t rank = p.sizes.size();
        s << "\n// Input " << k << ": " << p.numel << " elements, slab at output element " << p.outBase << ", "
          << blocks[k] << " block(s); merged dims [size: input stride, output stride]:";
        for (std::size_t d = 0; d < rank; ++d)
            s << " [" << p.sizes[d] << ": " << p.inStrides[d] << ", " << p.outStrides[d] << "]";
        s << "\n__device__ __forceinline__ void kfCopy" << k
          << "(const in_t* __restrict__ x, out_t* __restrict__ y, long long block)\n{\n"
          << "    for (long long i = block * THREADS + threadIdx.x; i < " << p.numel / v << "LL; i += " << blocks[k]
          << "LL * THREADS) {\n"
          << "        long long e = i * V;\n"
          << "        long long from = 0, to = " << p.outBase << "LL;\n";
        for (std::size_t d = rank; d-- > 0;) {
            if (d == 0) { // e < numel: the outermost index needs no modulo
                s << "        from += e * " << p.inStrides[d] << "LL;\n        to += e * " << p.outStrides[d]
                  << "LL;\n";
            } else {
                s << "        {\n            const long long c = e % " << p.sizes[d]
                  << "LL;\n            e /= " << p.sizes[d] << "LL;\n            from += c * " << p.inStrides[d]
                  << "LL;\n            to += c * " << p.outStrides[d] << "LL;\n        }\n";
            }
        }
        if (v == 1)
            s << "        y[to] = x[from];\n";
        else
            s << "        *reinterpret_cast<Vec*>(y + to) = *reinterpret_cast<const Vec*>(x + from);\n";
        s << "    }\n}\n";
    }
    s << "\nextern \"C\" __global__ void __launch_bounds__(THREADS) kf_cat(";
    std::vector<std::string> args;
    for (std::size_t k = 0; k < m_pieces.size(); ++k) {
        s << "const in_t* __restrict__ x" << k << ", ";
        args.push_back("ptr:tensors." + std::to_string(k));
    }
    args.push_back("ptr:out0");
    s << "out_t* __restrict__ y)\n{\n    const long long b = blockIdx.x;\n";
    std::int64_t first = 0;
    for (std::size_t k = 0; k < m_pieces.size(); ++k) {
        s << "    if (b < " << first + blocks[k] << "LL) {\n        kfCopy" << k << "(x" << k << ", y, b - " << first
          << "LL);\n        return;\n    }\n";
        first += blocks[k];
    }
    s << "}\n";
    nlohmann::json launches = nlohmann::json::array({launchJson("kf_cat", first, threads, args)});
    Candidate candidate;
    candidate.source = s.str();
    candidate.launchPlan = {{"launches", launches}};
    return candidate;
}

} // namespace kforge::core
