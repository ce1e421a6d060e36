#include "builtin_proposer/PoolFamily.h"

#include <sstream>

namespace kforge::core {

namespace {

const std::vector<Knob> kKnobs = {{"threads", "threads-per-block", "", ""},
                                  {"outputs_per_thread", "outputs-per-thread", "", ""}};

// Windows up to this many elements (a 16x16 or 6x6x6 window): the loops are unrolled by the
// compiler over constant bounds, and a larger window is a reduction, not a stencil.
constexpr std::int64_t kMaxWindow = 256;

struct PoolOp {
    bool average;
    int dims;
};

std::optional<PoolOp> poolOp(const std::string& op)
{
    if (op == "aten::avg_pool1d")
        return PoolOp{true, 1};
    if (op == "aten::avg_pool2d")
        return PoolOp{true, 2};
    if (op == "aten::avg_pool3d")
        return PoolOp{true, 3};
    if (op == "aten::max_pool1d")
        return PoolOp{false, 1};
    if (op == "aten::max_pool3d")
        return PoolOp{false, 3};
    return std::nullopt;
}

std::string joined(const std::array<std::int64_t, 3>& v, int from)
{
    std::string s;
    for (int i = from; i < 3; ++i)
        s += (i > from ? "x" : "") + std::to_string(v[static_cast<std::size_t>(i)]);
    return s;
}

} // namespace

bool PoolFamily::coversOp(const std::string& op)
{
    return poolOp(op).has_value();
}

Result<std::unique_ptr<PoolFamily>> PoolFamily::create(const OperatorCard& card)
{
    const auto op = poolOp(card.qualifiedName());
    if (!op)
        return unsupportedCard(card, "op not covered by the built-in proposer yet");
    auto input = contiguousFloatInput(card, "self");
    if (!input)
        return input.error();
    const TensorSpec& in = *input.value();
    const auto k = static_cast<std::size_t>(op->dims);
    if (in.sizes.size() != k + 1 && in.sizes.size() != k + 2)
        return unsupportedCard(card,
                               "input " + in.toShortString() + ": expected " + std::to_string(k + 1) + " or " +
                                   std::to_string(k + 2) + " dims");
    const auto kernel = poolingInts(card, "kernel_size", k, {});
    const auto stride = kernel ? poolingInts(card, "stride", k, *kernel) : std::nullopt;
    const auto padding = poolingInts(card, "padding", k, std::vector<std::int64_t>(k, 0));
    const auto dilation = op->average ? std::optional(std::vector<std::int64_t>(k, 1))
                                      : poolingInts(card, "dilation", k, std::vector<std::int64_t>(k, 1));
    const ArgSpec* ceil = card.findArg("ceil_mode");
    if (!kernel || kernel->size() != k || !stride || !padding || !dilation || !ceil || ceil->kind != ArgKind::Value ||
        !ceil->value.is_boolean())
        return unsupportedCard(card,
                               "expected int[" + std::to_string(k) +
                                   "] kernel_size, stride, padding (and dilation) and a bool ceil_mode");

    std::unique_ptr<PoolFamily> f(new PoolFamily());
    f->m_average = op->average;
    f->m_pooledDims = op->dims;
    f->m_dtype = in.dtype;
    if (op->average) {
        const ArgSpec* include = card.findArg("count_include_pad");
        if (include && include->kind == ArgKind::Value && include->value.is_boolean())
            f->m_countIncludePad = include->value.get<bool>();
        else if (include)
            return unsupportedCard(card, "count_include_pad is not a bool");
        const ArgSpec* divisor = card.findArg("divisor_override");
        if (divisor && divisor->kind == ArgKind::Value) {
            if (!divisor->value.is_number_integer() || divisor->value.get<std::int64_t>() == 0)
                return unsupportedCard(card, "divisor_override " + divisor->value.dump() + " is not a non-zero int");
            f->m_divisorOverride = divisor->value.get<std::int64_t>();
        }
    }
    const bool ceilMode = ceil->value.get<bool>();
    const std::size_t leading = in.sizes.size() - k;
    f->m_planes = 1;
    for (std::size_t d = 0; d < leading; ++d)
        f->m_planes *= in.sizes[d];
    std::int64_t window = 1;
    std::vector<std::int64_t> outSizes(in.sizes.begin(), in.sizes.begin() + static_cast<std::ptrdiff_t>(leading));
    for (std::size_t i = 0; i < 3; ++i) {
        if (i < 3 - k) { // a pooled dim this op does not have: size 1, a window of one
            f->m_in[i] = f->m_out[i] = f->m_kernel[i] = f->m_stride[i] = f->m_dilation[i] = 1;
            f->m_padding[i] = 0;
            continue;
        }
        const std::size_t a = i - (3 - k);
        f->m_in[i] = in.sizes[leading + a];
        f->m_kernel[i] = (*kernel)[a];
        f->m_stride[i] = (*stride)[a];
        f->m_padding[i] = (*padding)[a];
        f->m_dilation[i] = (*dilation)[a];
        const std::int64_t span = f->m_dilation[i] * (f->m_kernel[i] - 1) + 1;
        if (f->m_kernel[i] < 1 || f->m_stride[i] < 1 || f->m_dilation[i] < 1 || f->m_padding[i] < 0 ||
            f->m_padding[i] * 2 > (op->average ? f->m_kernel[i] : span))
            return unsupportedCard(card,
                                   "pooling window out of range (kernel " + std::to_string(f->m_kernel[i]) +
                                       ", stride " + std::to_string(f->m_stride[i]) + ", padding " +
                                       std::to_string(f->m_padding[i]) + ")");
        f->m_out[i] =
            pooledSize(f->m_in[i], f->m_kernel[i], f->m_stride[i], f->m_padding[i], f->m_dilation[i], ceilMode);
        if (f->m_out[i] < 1)
            return unsupportedCard(card, "the pooled output is empty");
        window *= f->m_kernel[i];
        outSizes.push_back(f->m_out[i]);
    }
    if (window > kMaxWindow)
        return unsupportedCard(card,
                               "a window of " + std::to_string(window) + " elements (at most " +
                                   std::to_string(kMaxWindow) + " are covered)");
    if (card.outputs.size() != 1 || card.outputs[0].dtype != in.dtype || card.outputs[0].sizes != outSizes ||
        !card.outputs[0].isContiguous())
        return unsupportedCard(card, "expected one contiguous output of the pooled size, in the input's dtype");
    if (in.numel() > (1LL << 40) || card.outputs[0].numel() > (1LL << 31) * 256)
        return unsupportedCard(card, "tensor too large for one grid");
    return f;
}

std::vector<Knob> PoolFamily::knobs() const
{
    return kKnobs;
}

Result<void> PoolFamily::check(const nlohmann::json& p) const
{
    const std::string context = "pool template parameters";
    if (auto r = checkKnobsAndThreads(p, kKnobs, context); !r)
        return r;
    const int opt = p["outputs_per_thread"].get<int>();
    if (opt > 8 || opt > m_out[2] * 2)
        return makeError(ErrorCode::InvalidArgument, "outputs_per_thread must be at most 8 and cover the row", context);
    return {};
}

nlohmann::json PoolFamily::rootParams() const
{
    return {{"threads", 256}, {"outputs_per_thread", 1}};
}

std::string PoolFamily::windowSource() const
{
    std::ostringstream s;
    s << "    for (int kd = 0; kd < KD; ++kd) {\n"
      << "        const int d = od * SD - PD + kd * DD;\n"
      << "        if (d < 0 || d >= ID)\n            continue;\n"
      << "        for (int kh = 0; kh < KH; ++kh) {\n"
      << "            const int h = oh * SH - PH + kh * DH;\n"
      << "            if (h < 0 || h >= IH)\n                continue;\n"
      << "            const in_t* xr = xp + (static_cast<long long>(d) * IH + h) * IW;\n"
      << "            for (int kw = 0; kw < KW; ++kw) {\n"
      << "#pragma unroll\n"
      << "                for (int o = 0; o < OPT; ++o) {\n"
      << "                    const int w = (ow0 + o) * SW - PW + kw * DW;\n"
      << "                    if (ow0 + o < OW && w >= 0 && w < IW)\n"
      << "                        " << (m_average ? "m[o] += kfLoad(xr[w]);" : "kfMax(m[o], kfLoad(xr[w]));") << "\n"
      << "                }\n            }\n        }\n    }\n";
    return s.str();
}

Result<Candidate> PoolFamily::generate(const nlohmann::json& params) const
{
    if (auto r = check(params); !r)
        return r.error();
    const int threads = params["threads"].get<int>();
    const int opt = params["outputs_per_thread"].get<int>();
    const int first = 3 - m_pooledDims;
    const std::string op = std::string(m_average ? "avg" : "max") + "_pool" + std::to_string(m_pooledDims) + "d";
    const std::string kernel = "kf_" + op;
    std::ostringstream s;
    s << "// Built-in " << op << " of " << m_planes << " planes of " << joined(m_in, first) << " " << m_dtype << " to "
      << joined(m_out, first) << ", window " << joined(m_kernel, first) << ", stride " << joined(m_stride, first)
      << ", padding " << joined(m_padding, first);
    if (!m_average)
        s << ", dilation " << joined(m_dilation, first) << ", values only (no indices)";
    else
        s << (m_divisorOverride       ? ", divisor " + std::to_string(m_divisorOverride)
                  : m_countIncludePad ? ", padding counted"
                                      : ", padding not counted");
    s << ".\n// Template parameters: " << params.dump() << "\n"
      << dtypePrelude(m_dtype, m_dtype) << "constexpr long long PLANES = " << m_planes << "LL;\n"
      << "constexpr int ID = " << m_in[0] << ", IH = " << m_in[1] << ", IW = " << m_in[2] << ";\n"
      << "constexpr int OD = " << m_out[0] << ", OH = " << m_out[1] << ", OW = " << m_out[2] << ";\n"
      << "constexpr int KD = " << m_kernel[0] << ", KH = " << m_kernel[1] << ", KW = " << m_kernel[2] << ";\n"
      << "constexpr int SD = " << m_stride[0] << ", SH = " << m_stride[1] << ", SW = " << m_stride[2] << ";\n"
      << "constexpr int PD = " << m_padding[0] << ", PH = " << m_padding[1] << ", PW = " << m_padding[2] << ";\n"
      << "constexpr int DD = " << m_dilation[0] << ", DH = " << m_dilation[1] << ", DW = " << m_dilation[2] << ";\n"
      << "constexpr int THREADS = " << threads << ";\n"
      << "constexpr int OPT = " << opt << "; // consecutive outputs of a row per thread\n"
      << "constexpr long long GROUPS = (OW + OPT - 1) / OPT;\n"
      << "constexpr long long ITEMS = PLANES * OD * OH * GROUPS;\n";
    if (!m_average)
        // NaN propagates as in eager (a NaN in the window wins); padding never takes part.
        s << "__device__ __forceinline__ void kfMax(float& m, float v) { if (v > m || v != v) m = v; }\n";
    else if (!m_divisorOverride)
        // Eager's divisor: with count_include_pad the window clipped to the padded input, else to
        // the input itself.
        s << "__device__ __forceinline__ int kfCount(int o, int s, int p, int k, int in)\n{\n"
          << "    int start = o * s - p;\n    int end = start + k < in + p ? start + k : in + p;\n"
          << (m_countIncludePad ? "    return end - start;\n"
                                : "    start = start > 0 ? start : 0;\n    end = end < in ? end : in;\n"
                                  "    return end - start;\n")
          << "}\n";
    s << "\nextern \"C\" __global__ void __launch_bounds__(THREADS) " << kernel
      << "(const in_t* __restrict__ x, out_t* __restrict__ y)\n{\n"
      << "    const long long i = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;\n"
      << "    if (i >= ITEMS)\n        return;\n"
      << "    const long long row = i / GROUPS; // (plane * OD + od) * OH + oh\n"
      << "    const int ow0 = static_cast<int>(i % GROUPS) * OPT;\n"
      << "    const int oh = static_cast<int>(row % OH);\n"
      << "    const int od = static_cast<int>(row / OH % OD);\n"
      << "    const in_t* xp = x + row / (static_cast<long long>(OH) * OD) * ID * IH * IW;\n"
      << "    float m[OPT];\n#pragma unroll\n    for (int o = 0; o < OPT; ++o)\n"
      << "        m[o] = " << (m_average ? "0.0f;\n" : "__int_as_float(0xff800000); // -inf\n") << windowSource()
      << "#pragma unroll\n    for (int o = 0; o < OPT; ++o) {\n"
      << "        if (ow0 + o >= OW)\n            continue;\n";
    if (!m_average)
        s << "        y[row * OW + ow0 + o] = kfStore(m[o]);\n";
    else if (m_divisorOverride)
        s << "        y[row * OW + ow0 + o] = kfStore(m[o] / " << floatLiteral(static_cast<double>(m_divisorOverride))
          << ");\n";
    else
        s << "        const int count = kfCount(od, SD, PD, KD, ID) * kfCount(oh, SH, PH, KH, IH) *\n"
          << "                          kfCount(ow0 + o, SW, PW, KW, IW);\n"
          << "        // A window wholly in the padding (ceil_mode) is 0, as eager writes it.\n"
          << "        y[row * OW + ow0 + o] = kfStore(count > 0 ? m[o] / static_cast<float>(count) : 0.0f);\n";
    s << "    }\n}\n";
    const std::int64_t items = m_planes * m_out[0] * m_out[1] * ((m_out[2] + opt - 1) / opt);
    Candidate candidate;
    candidate.source = s.str();
    candidate.launchPlan = {{"launches",
                             nlohmann::json::array({launchJson(kernel, (items + threads - 1) / threads, threads,
                                                               {"ptr:self", "ptr:out0"})})}};
    return candidate;
}

} // namespace kforge::core
