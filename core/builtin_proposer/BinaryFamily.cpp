#include "builtin_proposer/BinaryFamily.h"

#include "pointwise/PointwiseOpTable.h"

#include <sstream>

namespace kforge::core {

namespace {

const std::vector<Knob> kKnobs = {{"threads", "threads-per-block", "", ""},
                                  {"vector_width", "vector-width", "", ""},
                                  {"items_per_thread", "items-per-thread", "", ""}};
// Only where an operand is transposed (m_tileDim >= 0).
const Knob kTileKnob{"transpose_tile", "", "tile-transpose", "untile-transpose"};

} // namespace

bool BinaryFamily::coversOp(const std::string& op)
{
    return op == "aten::add.Tensor" || op == "aten::sub.Tensor" || op == "aten::mul.Tensor" ||
        op == "aten::div.Tensor" || op == "aten::div.Tensor_mode" || op == "aten::add_.Tensor" ||
        op == "aten::sub_.Tensor" || op == "aten::mul_.Tensor" || op == "aten::div_.Tensor";
}

Result<std::unique_ptr<BinaryFamily>> BinaryFamily::create(const OperatorCard& card)
{
    const std::string op = card.qualifiedName();
    if (!coversOp(op))
        return unsupportedCard(card, "op not covered by the built-in proposer yet");
    std::unique_ptr<BinaryFamily> f(new BinaryFamily());
    f->m_op = card.op.substr(6); // after "aten::"
    if (f->m_op.ends_with("_")) {
        f->m_op.pop_back();
        f->m_inPlace = true;
    }
    const TensorSpec* operands[2] = {nullptr, nullptr};
    const char* names[2] = {"self", "other"};
    // A card of a CPU capture (its output on the CPU: a compile-only search on a machine without a
    // GPU) has every operand there; its kernels read them all from memory, as on the GPU.
    const bool cpuCapture = !card.outputs.empty() && card.outputs[0].device.rfind("cuda", 0) != 0;
    for (int k = 0; k < 2; ++k) {
        const ArgSpec* arg = card.findArg(names[k]);
        if (!arg || arg->kind != ArgKind::Tensor || arg->tensors.size() != 1)
            return unsupportedCard(card, std::string("the card has no tensor argument '") + names[k] + "'");
        const TensorSpec& t = arg->tensors[0];
        // On the GPU, a Python number arrives as a 0-dim CPU (float64/int64) "wrapped number"
        // tensor: the kernel takes its value, read at each launch (a host number).
        if (card.isHostNumberArg(*arg)) {
            if (f->m_hostNumber)
                return unsupportedCard(card, "both operands are numbers on the host");
            f->m_hostNumber = true;
            f->m_scalarOperand = k;
            f->m_scalarDtype = t.dtype;
        } else if (!cpuCapture && t.device.rfind("cuda", 0) != 0) {
            return unsupportedCard(card,
                                   std::string("operand '") + names[k] + "' " + t.toShortString() + " on " + t.device +
                                       ": only a 0-dim tensor may be on the host");
        }
        operands[k] = &t;
    }
    if (op == "aten::div.Tensor_mode") {
        const ArgSpec* mode = card.findArg("rounding_mode");
        if (mode && mode->kind != ArgKind::None)
            return unsupportedCard(card, "div rounding_mode " + mode->value.dump() + ": only None is covered");
    }
    FormulaOperand alphaOperand; // absent: 1
    if (f->m_op == "add" || f->m_op == "sub") {
        const ArgSpec* alpha = card.findArg("alpha");
        if (alpha && alpha->kind != ArgKind::None) {
            if (alpha->kind != ArgKind::Value || !alpha->value.is_number())
                return unsupportedCard(card, "alpha " + alpha->value.dump() + " is not a number");
            const double value = alpha->value.get<double>();
            alphaOperand = {floatLiteral(value), value};
        }
    }
    // The op's fp32 expression of the loaded operands a and b: the pointwise table's formula.
    auto row = findPointwiseOp(card.op, card.overload, card.args);
    if (!row)
        return unsupportedCard(card, row.error().message);
    f->m_expression = row.value()->formula({{"a", std::nullopt}, {"b", std::nullopt}, alphaOperand});
    // Eager's CUDA true division by a CPU scalar multiplies by its reciprocal, taken in fp32
    // (kfScalarOperand returns the reciprocal).
    if (f->m_op == "div" && f->m_hostNumber && f->m_scalarOperand == 1)
        f->m_expression = "(a * b)";
    const TensorSpec& a = *operands[0];
    const TensorSpec& b = *operands[1];
    if (card.outputs.size() != 1)
        return unsupportedCard(card, "expected exactly one output");
    const TensorSpec& out = card.outputs[0];
    // A 0-dim operand of another dtype (a Python number the trace turned into a float64 constant that
    // moved to the GPU with the model: an attention scale, an RMSNorm eps; an int64 one of a CPU
    // capture, `x + 1`) takes no part in type promotion against a floating tensor. Eager's CUDA kernel
    // reads it through a dynamic cast to the output's dtype and computes in fp32; the kernel does the
    // same, reading the value at every launch.
    for (int k = 0; k < 2 && !f->m_hostNumber; ++k) {
        const TensorSpec& t = *operands[k];
        const TensorSpec& dense = *operands[1 - k];
        if (t.sizes.empty() && t.dtype != out.dtype && dense.dtype == out.dtype &&
            (t.dtype == "float64" || isBuiltinFloatDtype(t.dtype) || isBuiltinIntegerDtype(t.dtype) ||
             t.dtype == "bool")) {
            f->m_scalarOperand = k;
            f->m_scalarDtype = t.dtype;
        }
    }
    for (int k = 0; k < 2; ++k)
        if (k != f->m_scalarOperand && operands[k]->dtype != out.dtype)
            return unsupportedCard(card,
                                   "mixed dtypes " + a.dtype + ", " + b.dtype + " -> " + out.dtype +
                                       ": an operand of another dtype than the output's must be 0-dim");
    if (!isBuiltinFloatDtype(out.dtype))
        return unsupportedCard(card, "dtype " + out.dtype + " not covered (float32, float16, bfloat16)");
    // A channels-last output whose operands are all laid out as it runs flat over storage order.
    auto laidOutAsOutput = [&](int k) {
        return k == f->m_scalarOperand || (operands[k]->sizes == out.sizes && operands[k]->strides == out.strides);
    };
    const bool channelsLast = !out.isContiguous() && isChannelsLast(out) && laidOutAsOutput(0) && laidOutAsOutput(1);
    // Any other dense output (eager's result of a transposed operand, as the rotary embedding's
    // `q.transpose(1, 2) * cos`; a channels-last output with an NCHW or broadcast operand) is walked
    // in its own storage order: its dims permuted outermost to innermost, it is contiguous, and the
    // operands' strides follow the same permutation.
    const auto storageOrder = denseStorageOrder(out);
    if (!out.isContiguous() && !channelsLast && !storageOrder)
        return unsupportedCard(card, "output layout " + out.toShortString() + " (dense layouts only)");
    if (out.numel() == 0)
        return unsupportedCard(card, "empty output");
    if (f->m_inPlace && (a.sizes != out.sizes || a.strides != out.strides))
        return unsupportedCard(card,
                               "in-place " + f->m_op + "_ whose output " + out.toShortString() +
                                   " is not laid out as self " + a.toShortString());
    const std::size_t rank = out.sizes.size();
    if (a.sizes.size() > rank || b.sizes.size() > rank)
        return unsupportedCard(card, "operand rank above the output's");
    // Broadcast strides per output dim (stride 0 where the operand has size 1 or lacks the dim).
    std::vector<std::int64_t> bstr[2];
    for (int k = 0; k < 2; ++k) {
        const TensorSpec& t = *operands[k];
        bstr[k].assign(rank, 0);
        const std::size_t lead = rank - t.sizes.size();
        for (std::size_t d = 0; d < t.sizes.size(); ++d) {
            const std::int64_t size = t.sizes[d];
            if (size != 1 && size != out.sizes[lead + d])
                return unsupportedCard(card,
                                       std::string("operand '") + names[k] + "' " + t.toShortString() +
                                           " does not broadcast to the output " + out.toShortString());
            if (t.strides.size() != t.sizes.size() || (size != 1 && t.strides[d] < 0))
                return unsupportedCard(card, std::string("operand '") + names[k] + "' has negative or missing strides");
            bstr[k][lead + d] = size == 1 ? 0 : t.strides[d];
        }
    }
    f->m_dtype = out.dtype;
    f->m_numel = out.numel();
    // An operand laid out exactly as the output: element k of storage is the same logical element
    // in both. Channels-last: every operand is (checked above).
    auto flatOperand = [&](int k) {
        if (k == f->m_scalarOperand)
            return true;
        const TensorSpec& t = *operands[k];
        return t.sizes == out.sizes && (out.isContiguous() ? t.isContiguous() : t.strides == out.strides);
    };
    f->m_channelsLast = channelsLast;
    f->m_storageOrdered = !out.isContiguous() && !channelsLast;
    f->m_flat = channelsLast || (flatOperand(0) && flatOperand(1));
    // Output dims in storage order (row-major for a contiguous output). Drop size-1 dims, then merge
    // dim d into the one after it when every operand steps through them as one.
    std::vector<std::size_t> dimOrder(rank);
    for (std::size_t d = 0; d < rank; ++d)
        dimOrder[d] = d;
    if (f->m_storageOrdered)
        dimOrder = *storageOrder;
    MergedDims merged = mergeDims(dimOrder, out.sizes, {bstr[0], bstr[1]});
    f->m_dims = std::move(merged.sizes);
    f->m_strides[0] = std::move(merged.strides[0]);
    f->m_strides[1] = std::move(merged.strides[1]);
    if (f->m_dims.empty()) {
        f->m_dims = {1};
        f->m_strides[0] = {0};
        f->m_strides[1] = {0};
    }
    // A transposed operand: unit stride on an outer merged dim, neither 0 nor 1 on the innermost.
    const std::size_t inner = f->m_dims.size() - 1;
    for (int k = 0; k < 2 && !f->m_flat; ++k) {
        const std::vector<std::int64_t>& st = f->m_strides[k];
        if (k == f->m_scalarOperand || st[inner] == 0 || st[inner] == 1)
            continue;
        for (std::size_t d = 0; d < inner; ++d)
            if (st[d] == 1 && (f->m_tileDim < 0 || f->m_tileDim == static_cast<int>(d))) {
                f->m_tileDim = static_cast<int>(d);
                f->m_tiled[k] = true;
            }
    }
    return f;
}

bool BinaryFamily::vectorWidthAllowed(int width) const
{
    if (width != 1 && width != 2 && width != 4 && width != 8)
        return false;
    if (width * dtypeBytes(m_dtype) > 16)
        return false;
    if (m_flat)
        return width == 1 || width <= m_numel; // numel % width elements go through the scalar tail
    return m_dims.back() % width == 0;         // a vector of outputs stays in one innermost row
}

bool BinaryFamily::operandVectorLoads(int k, int width) const
{
    if (k == m_scalarOperand)
        return false;
    // Whole-vector loads need the operand's innermost stride 1 and every vector start a multiple of
    // the width (base pointer 16-byte aligned, docs/builtin-proposer.md).
    return width != 1 && stridesAllowVectors(m_strides[k], width);
}

Result<void> BinaryFamily::check(const nlohmann::json& p) const
{
    const std::string context = "binary template parameters";
    if (auto r = checkKnobsAndThreads(p, knobs(), context); !r)
        return r;
    const int v = p["vector_width"].get<int>();
    if (!vectorWidthAllowed(v))
        return makeError(ErrorCode::InvalidArgument,
                         "vector_width " + std::to_string(v) + " not allowed for " + m_dtype + " and the output shape",
                         context);
    if (p["items_per_thread"].get<int>() > 8)
        return makeError(ErrorCode::InvalidArgument, "items_per_thread must be 1, 2, 4 or 8", context);
    // The tiled path moves one element per thread and step: the other knobs would only repeat it.
    if (m_tileDim >= 0 && p["transpose_tile"].get<bool>() && (v != 1 || p["items_per_thread"].get<int>() != 1))
        return makeError(ErrorCode::InvalidArgument, "transpose_tile needs vector_width 1 and items_per_thread 1",
                         context);
    return {};
}

nlohmann::json BinaryFamily::rootParams() const
{
    if (m_tileDim >= 0) // coalesced reads of the transposed operand first; the search may untile
        return {{"threads", 256}, {"vector_width", 1}, {"items_per_thread", 1}, {"transpose_tile", true}};
    const int v = widestAllowedWidth([this](int w) { return vectorWidthAllowed(w); });
    return {{"threads", 256}, {"vector_width", v}, {"items_per_thread", m_numel >= (1 << 22) ? 2 : 1}};
}

std::vector<Knob> BinaryFamily::knobs() const
{
    std::vector<Knob> knobs = kKnobs;
    if (m_tileDim >= 0)
        knobs.push_back(kTileKnob);
    return knobs;
}

std::string BinaryFamily::scalarOperandComment() const
{
    if (m_scalarOperand < 0)
        return {};
    const std::string name = m_scalarOperand == 0 ? "self" : "other";
    if (m_hostNumber)
        return "// '" + name + "' is a " + m_scalarDtype +
            " number on the host: the launch passes its value, which the kernel reads straight into fp32 as eager "
            "reads a CPU scalar" +
            (m_op == "div" && m_scalarOperand == 1 ? " (and divides by multiplying with its fp32 reciprocal)" : "") +
            ".\n";
    return "// '" + name + "' is a 0-dim " + m_scalarDtype +
        " tensor: its value, cast to the output's dtype as eager's CUDA kernel casts it, is read once per thread.\n";
}

std::string BinaryFamily::kernelSignature(const std::string& kernel) const
{
    // In place, y is x (and z may be x): no __restrict__ promises. Each element is read and
    // written by the same thread, so aliasing is safe.
    const std::string restrictQualifier = m_inPlace ? "" : " __restrict__";
    auto operand = [&](int k, const char* name) {
        if (k == m_scalarOperand && m_hostNumber)
            return std::string("const double ") + name; // the value itself
        return std::string("const ") + (k == m_scalarOperand ? "scalar_operand_t" : "in_t") + "*" + restrictQualifier +
            " " + name;
    };
    return "extern \"C\" __global__ void __launch_bounds__(THREADS) " + kernel + "(" + operand(0, "x") + ", " +
        operand(1, "z") + ", out_t*" + restrictQualifier + " y)";
}

std::string BinaryFamily::kernelPrelude(const std::string& expr, const std::string& constants) const
{
    std::ostringstream s;
    s << dtypePrelude(m_dtype, m_dtype) << constants
      << "__device__ __forceinline__ float kfOp(float a, float b) { return " << expr << "; }\n";
    if (m_hostNumber) {
        const bool reciprocal = m_op == "div" && m_scalarOperand == 1;
        s << "// The host number as eager's CUDA kernel reads a CPU scalar: its value straight into fp32"
          << (reciprocal ? ",\n// and, as a divisor, its reciprocal taken in fp32.\n" : ".\n")
          << "__device__ __forceinline__ float kfScalarOperand(double v) { return "
          << (reciprocal ? "1.0f / static_cast<float>(v)" : "static_cast<float>(v)") << "; }\n";
    } else if (m_scalarOperand >= 0) {
        s << dtypeLoader("kfLoadScalarOperand", m_scalarDtype) // its header first: the typedef needs the type
          << "typedef " << dtypeCType(m_scalarDtype) << " scalar_operand_t;\n"
          << "// The 0-dim operand as eager's CUDA kernel sees it: converted to the output's dtype (through\n"
          << "// float, as c10's conversions go), then widened to fp32 for the math.\n"
          << "__device__ __forceinline__ float kfScalarOperand(const scalar_operand_t* p) { return "
             "kfLoad(kfStore(kfLoadScalarOperand(*p))); }\n";
    }
    return s.str();
}

Result<Candidate> BinaryFamily::generate(const nlohmann::json& params) const
{
    if (auto r = check(params); !r)
        return r.error();
    const int threads = params["threads"].get<int>();
    const int v = params["vector_width"].get<int>();
    const int items = params["items_per_thread"].get<int>();
    const std::string kernel = "kf_" + m_op + (m_inPlace ? "_" : "");
    const std::string& expr = m_expression;

    if (m_tileDim >= 0 && params["transpose_tile"].get<bool>())
        return generateTiled(params, kernel,
                             kernelPrelude(expr, "constexpr int THREADS = " + std::to_string(threads) + ";\n"));

    std::ostringstream s;
    s << "// Built-in elementwise " << m_op << (m_inPlace ? "_ (in place)" : "") << " over " << m_numel << " "
      << m_dtype << " outputs, "
      << (m_channelsLast                   ? "channels-last, both operands laid out alike (flat over storage order)"
              : m_flat && m_storageOrdered ? "both operands laid out as the output (flat over storage order)"
              : m_flat                     ? "both operands contiguous and same-shaped"
              : m_storageOrdered
              ? "over the output's storage order (its dims permuted by stride), operand strides baked in"
              : "broadcast strides baked in")
      << ", fp32 math.\n"
      << scalarOperandComment() << "// Template parameters: " << params.dump() << "\n"
      << kernelPrelude(expr,
                       "constexpr long long NUMEL = " + std::to_string(m_numel) +
                           "LL;\n"
                           "constexpr int V = " +
                           std::to_string(v) +
                           ";\n"
                           "constexpr int THREADS = " +
                           std::to_string(threads) +
                           ";\n"
                           "constexpr int ITEMS = " +
                           std::to_string(items) +
                           ";\n"
                           "constexpr long long NVEC = NUMEL / V;\n"
                           "struct alignas(V * sizeof(in_t)) InVec { in_t v[V]; };\n"
                           "struct alignas(V * sizeof(out_t)) OutVec { out_t v[V]; };\n");
    if (!m_flat) {
        // Output element i -> operand offsets; V divides the innermost merged dim, so the V outputs
        // of a vector share every outer index and step by the innermost stride.
        s << "// Merged output dims and operand strides (elements):";
        for (std::size_t d = 0; d < m_dims.size(); ++d)
            s << " [" << m_dims[d] << ": " << m_strides[0][d] << ", " << m_strides[1][d] << "]";
        s << "\n__device__ __forceinline__ void kfOffsets(long long i, long long& oa, long long& ob)\n{\n"
          << "    oa = 0;\n    ob = 0;\n";
        for (std::size_t d = m_dims.size(); d-- > 0;) {
            if (m_strides[0][d] != 0 || m_strides[1][d] != 0) {
                if (d == 0) // i < NUMEL: the outermost index needs no modulo
                    s << "    {\n        const long long q = i;\n";
                else
                    s << "    {\n        const long long q = i % " << m_dims[d] << "LL;\n";
                if (m_strides[0][d] != 0)
                    s << "        oa += q * " << m_strides[0][d] << "LL;\n";
                if (m_strides[1][d] != 0)
                    s << "        ob += q * " << m_strides[1][d] << "LL;\n";
                s << "    }\n";
            }
            if (d > 0)
                s << "    i /= " << m_dims[d] << "LL;\n";
        }
        s << "}\n";
    }
    s << "\n"
      << kernelSignature(kernel) << "\n{\n"
      << "    OutVec* yv = reinterpret_cast<OutVec*>(y);\n";
    if (m_scalarOperand >= 0)
        s << "    const float sv = kfScalarOperand(" << (m_scalarOperand == 0 ? "x" : "z") << ");\n";
    s << "    const long long stride = static_cast<long long>(gridDim.x) * THREADS * ITEMS;\n"
      << "    for (long long base = static_cast<long long>(blockIdx.x) * THREADS * ITEMS + threadIdx.x; base < NVEC;\n"
      << "         base += stride) {\n"
      << "        float fa[ITEMS][V], fb[ITEMS][V];\n"
      << "#pragma unroll\n        for (int k = 0; k < ITEMS; ++k) {\n"
      << "            const long long j = base + static_cast<long long>(k) * THREADS;\n"
      << "            if (j >= NVEC)\n                continue;\n";
    auto load = [&](int k, const char* ptr, const char* dst, const std::string& off) {
        if (k == m_scalarOperand)
            s << "#pragma unroll\n            for (int e = 0; e < V; ++e)\n                " << dst << "[k][e] = sv;\n";
        else if (m_flat || operandVectorLoads(k, v))
            s << "            {\n                const InVec t = reinterpret_cast<const InVec*>(" << ptr << ")[(" << off
              << ") / V];\n#pragma unroll\n                for (int e = 0; e < V; ++e)\n                    " << dst
              << "[k][e] = kfLoad(t.v[e]);\n            }\n";
        else if (m_strides[k].back() == 0)
            s << "            {\n                const float t = kfLoad(" << ptr << "[" << off
              << "]);\n#pragma unroll\n                for (int e = 0; e < V; ++e)\n                    " << dst
              << "[k][e] = t;\n            }\n";
        else
            s << "#pragma unroll\n            for (int e = 0; e < V; ++e)\n                " << dst
              << "[k][e] = kfLoad(" << ptr << "[" << off << " + e * " << m_strides[k].back() << "LL]);\n";
    };
    if (m_flat) {
        load(0, "x", "fa", "j * V");
        load(1, "z", "fb", "j * V");
    } else {
        s << "            long long oa, ob;\n            kfOffsets(j * V, oa, ob);\n";
        load(0, "x", "fa", "oa");
        load(1, "z", "fb", "ob");
    }
    s << "        }\n"
      << "#pragma unroll\n        for (int k = 0; k < ITEMS; ++k) {\n"
      << "            const long long j = base + static_cast<long long>(k) * THREADS;\n"
      << "            if (j < NVEC) {\n                OutVec o;\n"
      << "#pragma unroll\n                for (int e = 0; e < V; ++e)\n"
      << "                    o.v[e] = kfStore(kfOp(fa[k][e], fb[k][e]));\n"
      << "                yv[j] = o;\n            }\n        }\n    }\n";
    if (m_flat)
        s << "    constexpr long long TAIL = NUMEL - NVEC * V; // elements after the last whole vector\n"
          << "    if constexpr (TAIL > 0) {\n"
          << "        const long long g = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;\n"
          << "        if (g < TAIL)\n"
          << "            y[NVEC * V + g] = kfStore(kfOp(" << (m_scalarOperand == 0 ? "sv" : "kfLoad(x[NVEC * V + g])")
          << ", " << (m_scalarOperand == 1 ? "sv" : "kfLoad(z[NVEC * V + g])") << "));\n"
          << "    }\n";
    s << "}\n";

    const std::int64_t perBlock = static_cast<std::int64_t>(threads) * items;
    std::int64_t grid = (m_numel / v + perBlock - 1) / perBlock;
    if (grid < 1)
        grid = 1; // the tail alone
    return oneLaunch(s.str(), kernel, grid, threads);
}

Candidate BinaryFamily::oneLaunch(const std::string& source, const std::string& kernel, std::int64_t grid,
                                  int threads) const
{
    if (grid > 2147483647LL)
        grid = 2147483647LL; // the kernel's grid-stride (or block) loop covers the rest
    Candidate candidate;
    candidate.source = source;
    candidate.launchPlan = {{"launches",
                             nlohmann::json::array({launchJson(
                                 kernel, grid, threads,
                                 {m_hostNumber && m_scalarOperand == 0 ? "f64:self" : "ptr:self",
                                  m_hostNumber && m_scalarOperand == 1 ? "f64:other" : "ptr:other", "ptr:out0"})})}};
    return candidate;
}

} // namespace kforge::core
