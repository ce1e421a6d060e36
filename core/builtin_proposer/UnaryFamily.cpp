#include "builtin_proposer/UnaryFamily.h"

#include "pointwise/PointwiseOpTable.h"

#include <algorithm>
#include <numeric>
#include <sstream>

namespace kforge::core {

namespace {

// Exact-form GELU through erfc, with the rational Chebyshev fit of Numerical Recipes (erfc with
// fractional error below 1.2e-7 for every z >= 0) and the SFU's exp and reciprocal: for x < 0,
// gelu = 0.5 x erfc(|x| / sqrt 2), relative accuracy kept in the tail; for x >= 0, x - that.
// One exp and one reciprocal against erff's two polynomial branches.
const char* const kGeluErfcSource = R"(__device__ __forceinline__ float kfGeluErfc(float x)
{
    const float z = fabsf(x) * 0.7071067811865476f;
    const float t = __fdividef(1.0f, 1.0f + 0.5f * z);
    float p = 0.17087277f;
    p = fmaf(p, t, -0.82215223f);
    p = fmaf(p, t, 1.48851587f);
    p = fmaf(p, t, -1.13520398f);
    p = fmaf(p, t, 0.27886807f);
    p = fmaf(p, t, -0.18628806f);
    p = fmaf(p, t, 0.09678418f);
    p = fmaf(p, t, 0.37409196f);
    p = fmaf(p, t, 1.00002368f);
    p = fmaf(p, t, -1.26551223f);
    const float erfc = t * __expf(fmaf(-z, z, p));
    // +inf: erfc is 0 and inf * 0 would be NaN where eager gives inf; -inf stays NaN as in eager.
    const float half = (erfc == 0.0f && x > 0.0f) ? 0.0f : 0.5f * x * erfc;
    return x < 0.0f ? half : x - half;
}
)";

// Exact-form GELU for float16 / bfloat16 outputs through the shorter erfc fit of Abramowitz &
// Stegun 7.1.26 (|erf error| <= 1.5e-7): five coefficients against ten, which takes the kernel off
// the instruction-issue limit (gelu bf16 [8192,8192]: about 90% -> 96% of a copy's bandwidth on
// the H200). Checked exhaustively against eager F.gelu on every finite float16 and bfloat16 input
// (fp32 arithmetic, rounded to the dtype): all within the elementwise tolerance, largest absolute
// difference 3.8e-6 (bfloat16) and 7.6e-6 (float16), where those formats hold 1e-3 and 1e-4 of
// tolerance. Not used for float32 outputs: its tail error there is above float32's tolerance.
const char* const kGeluShortErfcSource = R"(__device__ __forceinline__ float kfGeluShortErfc(float x)
{
    const float z = fabsf(x) * 0.7071067811865476f;
    const float t = __fdividef(1.0f, fmaf(0.3275911f, z, 1.0f));
    float p = 1.061405429f;
    p = fmaf(p, t, -1.453152027f);
    p = fmaf(p, t, 1.421413741f);
    p = fmaf(p, t, -0.284496736f);
    p = fmaf(p, t, 0.254829592f);
    const float erfc = t * p * __expf(-z * z);
    // +inf: erfc is 0 and inf * 0 would be NaN where eager gives inf; -inf stays NaN as in eager.
    const float half = (erfc == 0.0f && x > 0.0f) ? 0.0f : 0.5f * x * erfc;
    return x < 0.0f ? half : x - half;
}
)";

bool isHalfWidth(const std::string& dtype)
{
    return dtype == "float16" || dtype == "bfloat16";
}

// Two-element conversions (one cvt for a pair; the same round-to-nearest-even result as the
// one-element forms) for float16 / bfloat16.
std::string pairConversions(const std::string& dtype)
{
    const std::string pair = dtype == "bfloat16" ? "__nv_bfloat162" : "__half2";
    const std::string toFloat = dtype == "bfloat16" ? "__bfloat1622float2" : "__half22float2";
    const std::string fromFloat = dtype == "bfloat16" ? "__float22bfloat162_rn" : "__float22half2_rn";
    return "__device__ __forceinline__ float2 kfLoad2(const in_t* p) { return " + toFloat +
        "(*reinterpret_cast<const " + pair +
        "*>(p)); }\n"
        "__device__ __forceinline__ void kfStore2(out_t* p, float2 v) { *reinterpret_cast<" +
        pair + "*>(p) = " + fromFloat + "(v); }\n";
}

// PyTorch's channels-last contiguity of a 4-D tensor (size-1 dims take any stride).
bool channelsLastContiguous(const TensorSpec& t)
{
    if (t.sizes.size() != 4 || t.strides.size() != 4)
        return false;
    std::int64_t expected = 1;
    for (const std::size_t d : {1, 3, 2, 0}) {
        if (t.sizes[d] == 1)
            continue;
        if (t.strides[d] != expected)
            return false;
        expected *= t.sizes[d];
    }
    return true;
}

// Whether reshape(t, newSizes) can view t (PyTorch then returns an alias, no copy). t's dims of more
// than one element fall into chunks that step through memory as one (mergeDims in t's own order);
// a view exists exactly when the new sizes, size-1 dims aside, group into consecutive runs whose
// products are those chunks' element counts, in order.
bool reshapeCanView(const TensorSpec& t, const std::vector<std::int64_t>& newSizes)
{
    std::vector<std::size_t> order(t.sizes.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    const std::vector<std::int64_t> chunks = mergeDims(order, t.sizes, {t.strides}).sizes; // outermost first
    std::size_t chunk = 0;
    std::int64_t run = 1;
    for (const std::int64_t size : newSizes) {
        if (size == 1)
            continue;
        if (chunk == chunks.size())
            return false;
        run *= size;
        if (run == chunks[chunk]) {
            ++chunk;
            run = 1;
        } else if (chunks[chunk] % run != 0) {
            return false;
        }
    }
    return chunk == chunks.size() && run == 1;
}

std::vector<std::int64_t> contiguousStrides(const std::vector<std::int64_t>& sizes)
{
    std::vector<std::int64_t> strides(sizes.size(), 1);
    std::int64_t stride = 1;
    for (std::size_t d = sizes.size(); d-- > 0;) {
        strides[d] = stride;
        stride *= sizes[d];
    }
    return strides;
}

} // namespace

bool UnaryFamily::coversOp(const std::string& qualifiedOp)
{
    return qualifiedOp == "aten::relu" || qualifiedOp == "aten::gelu" || qualifiedOp == "aten::silu" ||
        qualifiedOp == "aten::sigmoid" || qualifiedOp == "aten::tanh" || qualifiedOp == "aten::to.dtype" ||
        qualifiedOp == "aten::neg" || qualifiedOp == "aten::rsqrt" || qualifiedOp == "aten::cos" ||
        qualifiedOp == "aten::sin" || qualifiedOp == "aten::pow.Tensor_Scalar" || qualifiedOp == "aten::relu_" ||
        qualifiedOp == "aten::silu_" || qualifiedOp == "aten::type_as" || qualifiedOp == "aten::contiguous" ||
        qualifiedOp == "aten::reshape" || qualifiedOp == "aten::flatten.using_ints";
}

Result<std::unique_ptr<UnaryFamily>> UnaryFamily::create(const OperatorCard& card)
{
    const std::string op = card.qualifiedName();
    if (!coversOp(op))
        return unsupportedCard(card, "op not covered by the built-in proposer yet");
    auto input = floatTensorInput(card, "self");
    if (!input)
        return input.error();
    const TensorSpec& in = *input.value();
    if (in.numel() == 0)
        return unsupportedCard(card, "empty input");
    if (card.outputs.size() != 1)
        return unsupportedCard(card, "expected one output");
    // reshape() of a tensor it cannot view (repeat_kv's expanded keys and values into [B, H, S, D]):
    // eager copies it into a new contiguous tensor of the new sizes, whose bytes are those of a
    // contiguous tensor of the input's sizes; the kernel is contiguous()'s gather into that.
    // flatten(start_dim, end_dim) is a reshape into the flattened sizes (the card's output's).
    const bool reshape = op == "aten::reshape" || op == "aten::flatten.using_ints";
    const std::string reshapeName = op == "aten::reshape" ? "reshape" : "flatten";
    TensorSpec reshapedOutput;
    if (reshape) {
        const TensorSpec& result = card.outputs[0];
        if (result.numel() != in.numel())
            return unsupportedCard(
                card, reshapeName + " into " + result.toShortString() + ": expected an output of as many elements");
        // A copying reshape returns a new contiguous tensor: any other output layout is a view.
        if (!result.isContiguous())
            return unsupportedCard(card,
                                   reshapeName + " into " + result.toShortString() +
                                       " returns a view of its input (no kernel to run)");
        if (reshapeCanView(in, result.sizes))
            return unsupportedCard(card, reshapeName + " of a tensor it can view returns a view (no copy to run)");
        reshapedOutput = TensorSpec{result.dtype, in.sizes, contiguousStrides(in.sizes), result.device};
    } else if (card.outputs[0].sizes != in.sizes) {
        return unsupportedCard(card, "expected one output of the input's sizes");
    }
    // The output is dense. Laid out as the input (strides equal wherever a dim has more than one
    // element), the kernel runs over storage order and element k of the output is element k of the
    // input; otherwise it gathers the input through its strides.
    const TensorSpec& dense = reshape ? reshapedOutput : card.outputs[0];
    const auto storageOrder = denseStorageOrder(dense);
    if (!storageOrder)
        return unsupportedCard(card, "output layout " + dense.toShortString() + " (dense layouts only)");
    bool sameLayout = in.strides.size() == in.sizes.size();
    for (std::size_t d = 0; sameLayout && d < in.sizes.size(); ++d)
        sameLayout = in.sizes[d] == 1 || in.strides[d] == dense.strides[d];
    const bool channelsLast = sameLayout && !in.isContiguous() && isChannelsLast(in);
    // type_as(self, other) is self.to(other's dtype and device) (a decoder's RMSNorm ends with
    // `output.type_as(x)`): the same conversion as to.dtype when `other` is on self's device.
    const bool typeAs = op == "aten::type_as";
    const bool cast = op == "aten::to.dtype" || typeAs;
    const TensorSpec& out = dense;
    if (!cast && out.dtype != in.dtype)
        return unsupportedCard(card, "expected an output of the input's dtype");
    // contiguous() of a tensor not already contiguous: eager clones it into a contiguous tensor; here
    // the same gather with the identity as the op.
    const bool copy = op == "aten::contiguous";
    if (copy) {
        // The layout asked for; a tensor already in it comes back itself (an alias, never a copy).
        const ArgSpec* format = card.findArg("memory_format");
        int asked = kContiguousFormat;
        if (format && format->kind != ArgKind::None) {
            if (format->kind != ArgKind::Value || !format->value.is_number_integer())
                return unsupportedCard(card, "contiguous() with memory_format " + format->value.dump());
            asked = format->value.get<int>();
        }
        if (asked != kContiguousFormat && asked != kChannelsLastFormat)
            return unsupportedCard(card,
                                   "contiguous() with memory_format " + std::to_string(asked) +
                                       ": only contiguous_format and channels_last are covered");
        const auto inLayout = [&](const TensorSpec& t) {
            return asked == kContiguousFormat ? t.isContiguous() : channelsLastContiguous(t);
        };
        if (inLayout(in))
            return unsupportedCard(card, "contiguous() of a tensor already in that layout returns the tensor itself");
        if (!inLayout(out))
            return unsupportedCard(card, "contiguous() into " + out.toShortString() + ": not the layout asked for");
    }
    if (typeAs) {
        const ArgSpec* other = card.findArg("other");
        if (!other || other->kind != ArgKind::Tensor || other->tensors.size() != 1)
            return unsupportedCard(card, "the card has no tensor argument 'other'");
        if (other->tensors[0].device != in.device)
            return unsupportedCard(card, "type_as onto another device (" + other->tensors[0].device + ")");
        if (other->tensors[0].dtype != out.dtype)
            return unsupportedCard(card,
                                   "type_as output " + out.dtype + " is not other's dtype " + other->tensors[0].dtype);
    }
    if (cast) {
        // to(dtype) of a contiguous tensor into another floating dtype: a new contiguous tensor.
        // To its own dtype it returns self (no kernel to run); any other memory_format than
        // None / preserve / contiguous could ask for another layout.
        if (out.dtype == in.dtype)
            return unsupportedCard(card, "to() of a tensor into its own dtype returns the tensor itself");
        if (!isBuiltinFloatDtype(out.dtype))
            return unsupportedCard(card, "to() into " + out.dtype + ": only float32, float16, bfloat16 are covered");
        const ArgSpec* format = card.findArg("memory_format");
        if (format && format->kind != ArgKind::None &&
            !(format->kind == ArgKind::Value && format->value.is_number_integer() &&
              (format->value.get<int>() == kPreserveFormat || format->value.get<int>() == kContiguousFormat)))
            return unsupportedCard(card,
                                   "to() with memory_format " + format->value.dump() +
                                       ": only None, preserve and contiguous are covered");
    }

    std::unique_ptr<UnaryFamily> family(new UnaryFamily());
    family->m_op = cast ? "to" : (copy || reshape) ? "copy" : card.op.substr(6); // after "aten::"
    if (family->m_op.ends_with("_")) {
        family->m_op.pop_back();
        family->m_inPlace = true;
    }
    family->m_channelsLast = channelsLast;
    family->m_dense = sameLayout && !channelsLast && !in.isContiguous();
    family->m_gather = !sameLayout;
    if (family->m_gather) {
        if (family->m_inPlace) // the output is self: always laid out as it
            return unsupportedCard(card, "in-place op whose output is laid out unlike self");
        for (std::size_t d = 0; d < in.sizes.size(); ++d)
            if (in.sizes[d] != 1 && in.strides[d] < 0)
                return unsupportedCard(card, "input " + in.toShortString() + " has a negative stride");
        // Output dims in storage order; the output, contiguous in this order, steps through any
        // two as one, so the input's strides alone decide what merges.
        MergedDims merged = mergeDims(*storageOrder, in.sizes, {in.strides});
        family->m_dims = std::move(merged.sizes);
        family->m_inStrides = std::move(merged.strides[0]);
    }
    if (family->m_op == "pow") {
        // Eager's CUDA pow computes exponent 2 as base * base (PowKernel.cu); other exponents go
        // through other special cases or powf and are not covered.
        const ArgSpec* exponent = card.findArg("exponent");
        if (!exponent || exponent->kind != ArgKind::Value || !exponent->value.is_number() ||
            exponent->value.get<double>() != 2.0)
            return unsupportedCard(
                card, "pow exponent " + (exponent ? exponent->value.dump() : std::string("?")) + ": only 2 is covered");
    }
    if (family->m_op == "gelu") {
        const ArgSpec* approximate = card.findArg("approximate");
        std::string mode = "none";
        if (approximate && approximate->kind == ArgKind::Value) {
            if (!approximate->value.is_string())
                return unsupportedCard(card, "gelu approximate is not a string");
            mode = approximate->value.get<std::string>();
        }
        if (mode != "none" && mode != "tanh")
            return unsupportedCard(card, "gelu approximate='" + mode + "' (only 'none' and 'tanh')");
        family->m_tanhGelu = mode == "tanh";
    }
    if (family->m_op != "to" && family->m_op != "copy") {
        // The op's formula is the pointwise table's (pointwise/PointwiseOpTable.h), applied to x
        // with the card's Python-scalar arguments (pow's exponent) as constants.
        auto row = findPointwiseOp(card.op, card.overload, card.args);
        if (!row)
            return unsupportedCard(card, row.error().message);
        std::vector<FormulaOperand> operands;
        for (const PointwiseOperand& operand : row.value()->operands) {
            const ArgSpec* arg = card.findArg(std::string(operand.name));
            if (operand.name == "self")
                operands.push_back({"x", std::nullopt});
            else if (arg && arg->kind == ArgKind::Value && arg->value.is_number())
                operands.push_back({floatLiteral(arg->value.get<double>()), arg->value.get<double>()});
            else
                operands.push_back({});
        }
        family->m_expression = row.value()->formula(operands);
    }
    family->m_inDtype = in.dtype;
    family->m_outDtype = out.dtype;
    family->m_numel = in.numel();
    return family;
}

bool UnaryFamily::vectorWidthAllowed(int width) const
{
    // Vector accesses start at the (16-byte aligned, see docs/builtin-proposer.md) base pointer and
    // step by whole vectors; elements past the last whole vector go through the scalar tail. Widths
    // above the element count would leave only the tail, so they are not offered.
    if (width != 1 && width != 2 && width != 4 && width != 8)
        return false;
    if (width * std::max(dtypeBytes(m_inDtype), dtypeBytes(m_outDtype)) > 16)
        return false;
    if (m_gather) // a vector of outputs stays in one innermost row of the gather
        return m_dims.back() % width == 0;
    return width == 1 || width <= m_numel;
}

bool UnaryFamily::gatherVectorLoads(int width) const
{
    return width != 1 && stridesAllowVectors(m_inStrides, width);
}

nlohmann::json UnaryFamily::toJson(const Params& p)
{
    return {{"threads", p.threads},
            {"vector_width", p.vectorWidth},
            {"items_per_thread", p.itemsPerThread},
            {"fast_math", p.fastMath}};
}

Result<UnaryFamily::Params> UnaryFamily::parse(const nlohmann::json& j) const
{
    const std::string context = "unary template parameters";
    if (!j.is_object())
        return makeError(ErrorCode::InvalidArgument, "not a JSON object", context);
    Params p;
    try {
        p.threads = j.at("threads").get<int>();
        p.vectorWidth = j.at("vector_width").get<int>();
        p.itemsPerThread = j.at("items_per_thread").get<int>();
        p.fastMath = j.value("fast_math", false); // absent in trees written before the knob existed
    } catch (const nlohmann::json::exception& e) {
        return makeError(ErrorCode::InvalidArgument, std::string("missing or mistyped parameter: ") + e.what(),
                         context);
    }
    if (!isPowerOfTwo(p.threads) || p.threads < 64 || p.threads > 1024)
        return makeError(ErrorCode::InvalidArgument, "threads must be a power of two in 64..1024", context);
    if (!vectorWidthAllowed(p.vectorWidth))
        return makeError(ErrorCode::InvalidArgument,
                         "vector_width " + std::to_string(p.vectorWidth) + " not allowed for " + m_inDtype + " -> " +
                             m_outDtype,
                         context);
    if (!isPowerOfTwo(p.itemsPerThread) || p.itemsPerThread > 8)
        return makeError(ErrorCode::InvalidArgument, "items_per_thread must be 1, 2, 4 or 8", context);
    if (p.fastMath && !hasFastMath())
        return makeError(ErrorCode::InvalidArgument, "fast_math: " + m_op + " has no transcendental to approximate",
                         context);
    return p;
}

nlohmann::json UnaryFamily::rootParams() const
{
    Params p;
    p.vectorWidth = widestAllowedWidth([this](int w) { return vectorWidthAllowed(w); });
    p.threads = 256;
    p.itemsPerThread = m_numel >= (1 << 22) ? 2 : 1;
    return toJson(p);
}

std::vector<Transformation> UnaryFamily::transformations(const nlohmann::json& params) const
{
    std::vector<Transformation> out;
    auto parsed = parse(params);
    if (!parsed)
        return out;
    const Params p = parsed.value();
    auto add = [&](std::string name, const Params& q) {
        const nlohmann::json j = toJson(q);
        if (j != params && parse(j).ok())
            out.push_back({std::move(name), j});
    };
    for (int t : {p.threads * 2, p.threads / 2}) {
        Params q = p;
        q.threads = t;
        add("threads-per-block " + std::to_string(p.threads) + "->" + std::to_string(t), q);
    }
    for (int w : {p.vectorWidth * 2, p.vectorWidth / 2}) {
        Params q = p;
        q.vectorWidth = w;
        add("vector-width " + std::to_string(p.vectorWidth) + "->" + std::to_string(w), q);
    }
    for (int i : {p.itemsPerThread * 2, p.itemsPerThread / 2}) {
        Params q = p;
        q.itemsPerThread = i;
        add("items-per-thread " + std::to_string(p.itemsPerThread) + "->" + std::to_string(i), q);
    }
    Params f = p;
    f.fastMath = !p.fastMath;
    add(p.fastMath ? "accurate-math" : "fast-math", f);
    return out;
}

bool UnaryFamily::hasFastMath() const
{
    return m_op == "gelu" || m_op == "silu" || m_op == "sigmoid" || m_op == "tanh";
}

std::string UnaryFamily::opExpression(bool fastMath) const
{
    if (fastMath) {
        // The SFU's ex2 / rcp (a few ulp in fp32); validation against the card's tolerance decides
        // whether that is close enough (it usually is for float16 / bfloat16 outputs).
        if (m_op == "gelu")
            return m_tanhGelu
                // 0.5 x (1 + tanh(u)) == x * sigmoid(2u): no cancellation for negative x.
                ? "__fdividef(x, 1.0f + __expf(-1.5957691216057308f * (x + 0.044715f * x * x * x)))"
                : (isHalfWidth(m_outDtype) ? "kfGeluShortErfc(x)" : "kfGeluErfc(x)");
        if (m_op == "silu")
            return "__fdividef(x, 1.0f + __expf(-x))";
        if (m_op == "sigmoid")
            return "__fdividef(1.0f, 1.0f + __expf(-x))";
        if (m_op == "tanh")
            return "copysignf(1.0f - __fdividef(2.0f, __expf(2.0f * fabsf(x)) + 1.0f), x)";
    }
    if (m_op == "to")
        return "x"; // widened exactly to fp32 by kfLoad, rounded to nearest even by kfStore, as c10 converts
    if (m_op == "copy")
        return "x"; // the same dtype in and out: widening and rounding back is exact
    return m_expression;
}

Result<Candidate> UnaryFamily::generate(const nlohmann::json& params) const
{
    auto parsed = parse(params);
    if (!parsed)
        return parsed.error();
    const Params p = parsed.value();
    const std::string kernel = "kf_" + m_op + (m_inPlace ? "_" : "");
    // In place, y is x: no __restrict__ promise. Each element is read and written by the same thread.
    const char* restrictQualifier = m_inPlace ? "" : " __restrict__";

    // Pairs of 16-bit values convert with one instruction; 32-bit indices when they cannot overflow
    // (base + stride < 2^31 while base < NVEC: NVEC < 2^30 is enough for any grid this plan makes).
    const bool pairs = isHalfWidth(m_inDtype) && m_inDtype == m_outDtype && p.vectorWidth % 2 == 0;
    const bool narrowIndex = m_numel / p.vectorWidth < (std::int64_t(1) << 30);
    const char* geluSource = "";
    if (p.fastMath && m_op == "gelu" && !m_tanhGelu)
        geluSource = isHalfWidth(m_outDtype) ? kGeluShortErfcSource : kGeluErfcSource;
    std::ostringstream s;
    if (m_gather) {
        s << gatherSource(p, kernel, geluSource);
        return Candidate{s.str(), launchPlan(kernel, p)};
    }
    s << "// Built-in elementwise " << m_op << (m_op == "gelu" ? (m_tanhGelu ? " (tanh)" : " (exact)") : "")
      << (m_inPlace ? "_ (in place)" : "") << " over " << m_numel
      << (m_channelsLast ? " channels-last (in storage order) "
              : m_dense  ? " dense (in storage order) "
                         : " contiguous ")
      << m_inDtype << " elements" << (m_inDtype != m_outDtype ? " into " + m_outDtype : std::string())
      << ", fp32 math.\n"
      << "// Template parameters: " << params.dump() << "\n"
      << dtypePrelude(m_inDtype, m_outDtype) << (pairs ? pairConversions(m_inDtype) : std::string()) << "typedef "
      << (narrowIndex ? "int" : "long long") << " idx_t;\n"
      << kernelConstants(p, "idx_t",
                         "constexpr long long TAIL = NUMEL - static_cast<long long>(NVEC) * V; // elements after the "
                         "last whole vector\n",
                         geluSource)
      << "\nextern \"C\" __global__ void __launch_bounds__(THREADS) " << kernel << "(const in_t*" << restrictQualifier
      << " x, out_t*" << restrictQualifier << " y)\n{\n"
      << R"(    const InVec* xv = reinterpret_cast<const InVec*>(x);
    OutVec* yv = reinterpret_cast<OutVec*>(y);
    const idx_t stride = static_cast<idx_t>(gridDim.x) * THREADS * ITEMS;
    for (idx_t base = static_cast<idx_t>(blockIdx.x) * THREADS * ITEMS + threadIdx.x; base < NVEC;
         base += stride) {
        InVec t[ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const idx_t j = base + k * THREADS;
            if (j < NVEC)
                t[k] = xv[j];
        }
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const idx_t j = base + k * THREADS;
            if (j < NVEC) {
                OutVec o;
)"
      << (pairs ? R"(#pragma unroll
                for (int e = 0; e < V; e += 2) {
                    const float2 in = kfLoad2(&t[k].v[e]);
                    kfStore2(&o.v[e], make_float2(kfOp(in.x), kfOp(in.y)));
                }
)"
                : R"(#pragma unroll
                for (int e = 0; e < V; ++e)
                    o.v[e] = kfStore(kfOp(kfLoad(t[k].v[e])));
)") << R"(                yv[j] = o;
            }
        }
    }
    if constexpr (TAIL > 0) {
        const long long g = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;
        if (g < TAIL)
            y[static_cast<long long>(NVEC) * V + g] = kfStore(kfOp(kfLoad(x[static_cast<long long>(NVEC) * V + g])));
    }
}
)";

    return Candidate{s.str(), launchPlan(kernel, p)};
}

nlohmann::json UnaryFamily::launchPlan(const std::string& kernel, const Params& p) const
{
    const std::int64_t perBlock = static_cast<std::int64_t>(p.threads) * p.itemsPerThread;
    const std::int64_t vectors = m_numel / p.vectorWidth;
    std::int64_t grid = (vectors + perBlock - 1) / perBlock;
    if (grid < 1)
        grid = 1; // the tail alone (TAIL < V <= 8 < THREADS: one block covers it)
    if (grid > 2147483647LL)
        grid = 2147483647LL; // the grid-stride loop covers the rest
    return {{"launches",
             nlohmann::json::array({{{"kernel", kernel},
                                     {"grid", nlohmann::json::array({grid})},
                                     {"block", nlohmann::json::array({p.threads})},
                                     {"shared_bytes", 0},
                                     {"args", {"ptr:self", "ptr:out0"}}}})}};
}

std::string UnaryFamily::kernelConstants(const Params& p, const char* nvecType, const std::string& afterNvec,
                                         const char* geluSource) const
{
    std::ostringstream s;
    s << "constexpr long long NUMEL = " << m_numel << "LL;\n"
      << "constexpr int V = " << p.vectorWidth << ";\n"
      << "constexpr int THREADS = " << p.threads << ";\n"
      << "constexpr int ITEMS = " << p.itemsPerThread << ";\n"
      << "constexpr " << nvecType << " NVEC = NUMEL / V;\n"
      << afterNvec << "struct alignas(V * sizeof(in_t)) InVec { in_t v[V]; };\n"
      << "struct alignas(V * sizeof(out_t)) OutVec { out_t v[V]; };\n"
      << geluSource << "__device__ __forceinline__ float kfOp(float x) { return " << opExpression(p.fastMath)
      << "; }\n";
    return s.str();
}

std::string UnaryFamily::gatherSource(const Params& p, const std::string& kernel, const char* geluSource) const
{
    // V divides the innermost merged dim (vectorWidthAllowed), so NUMEL is whole vectors and the V
    // outputs of a vector share every outer index: their input offsets step by the innermost stride.
    const bool vectorLoads = gatherVectorLoads(p.vectorWidth);
    std::ostringstream s;
    s << "// Built-in elementwise " << m_op << (m_op == "gelu" ? (m_tanhGelu ? " (tanh)" : " (exact)") : "") << " over "
      << m_numel << " " << m_inDtype << " elements" << (m_inDtype != m_outDtype ? " into " + m_outDtype : std::string())
      << ", gathered from a strided input into a dense output (its storage order), fp32 math.\n"
      << "// Template parameters: " << toJson(p).dump() << "\n"
      << "// Merged output dims (outermost first in storage) and input strides (elements):";
    for (std::size_t d = 0; d < m_dims.size(); ++d)
        s << " [" << m_dims[d] << ": " << m_inStrides[d] << "]";
    s << "\n"
      << dtypePrelude(m_inDtype, m_outDtype) << kernelConstants(p, "long long", "", geluSource)
      << "// The input offset of output element i (i in storage order).\n"
      << "__device__ __forceinline__ long long kfInOffset(long long i)\n{\n    long long o = 0;\n";
    for (std::size_t d = m_dims.size(); d-- > 0;) {
        if (d == 0) // i < NUMEL: the outermost index needs no modulo
            s << "    o += i * " << m_inStrides[d] << "LL;\n";
        else
            s << "    o += (i % " << m_dims[d] << "LL) * " << m_inStrides[d] << "LL;\n    i /= " << m_dims[d]
              << "LL;\n";
    }
    s << "    return o;\n}\n"
      << "\nextern \"C\" __global__ void __launch_bounds__(THREADS) " << kernel
      << "(const in_t* __restrict__ x, out_t* __restrict__ y)\n{\n"
      << "    OutVec* yv = reinterpret_cast<OutVec*>(y);\n"
      << "    const long long stride = static_cast<long long>(gridDim.x) * THREADS * ITEMS;\n"
      << "    for (long long base = static_cast<long long>(blockIdx.x) * THREADS * ITEMS + threadIdx.x; base < NVEC;\n"
      << "         base += stride) {\n"
      << "        float f[ITEMS][V];\n"
      << "#pragma unroll\n        for (int k = 0; k < ITEMS; ++k) {\n"
      << "            const long long j = base + static_cast<long long>(k) * THREADS;\n"
      << "            if (j >= NVEC)\n                continue;\n"
      << "            const long long o = kfInOffset(j * V);\n";
    if (vectorLoads)
        s << "            const InVec t = *reinterpret_cast<const InVec*>(x + o);\n"
          << "#pragma unroll\n            for (int e = 0; e < V; ++e)\n                f[k][e] = kfLoad(t.v[e]);\n";
    else
        s << "#pragma unroll\n            for (int e = 0; e < V; ++e)\n                f[k][e] = kfLoad(x[o + e * "
          << m_inStrides.back() << "LL]);\n";
    s << "        }\n"
      << "#pragma unroll\n        for (int k = 0; k < ITEMS; ++k) {\n"
      << "            const long long j = base + static_cast<long long>(k) * THREADS;\n"
      << "            if (j < NVEC) {\n                OutVec o;\n"
      << "#pragma unroll\n                for (int e = 0; e < V; ++e)\n"
      << "                    o.v[e] = kfStore(kfOp(f[k][e]));\n"
      << "                yv[j] = o;\n            }\n        }\n    }\n}\n";
    return s.str();
}

} // namespace kforge::core
