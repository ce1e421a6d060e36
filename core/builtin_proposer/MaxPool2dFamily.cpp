#include "builtin_proposer/MaxPool2dFamily.h"

#include <sstream>

namespace kforge::core {

namespace {

const std::vector<Knob> kKnobs = {{"threads", "threads-per-block", "", ""},
                                  {"vector_width", "vector-width", "", ""},
                                  {"outputs_per_thread", "outputs-per-thread", "", ""}};

} // namespace

Result<std::unique_ptr<MaxPool2dFamily>> MaxPool2dFamily::create(const OperatorCard& card)
{
    if (!coversOp(card.qualifiedName()))
        return unsupportedCard(card, "op not covered by the built-in proposer yet");
    auto input = floatTensorInput(card, "self");
    if (!input)
        return input.error();
    const TensorSpec& in = *input.value();
    if (in.sizes.size() != 4 || in.numel() == 0)
        return unsupportedCard(card, "input " + in.toShortString() + ": expected a non-empty [N, C, H, W] tensor");
    std::unique_ptr<MaxPool2dFamily> f(new MaxPool2dFamily());
    f->m_channelsLast = !in.isContiguous() && isChannelsLast(in);
    if (!in.isContiguous() && !f->m_channelsLast)
        return unsupportedCard(card, "input layout " + in.toShortString() + " (NCHW contiguous or channels-last only)");
    const ArgSpec* ceil = card.findArg("ceil_mode");
    const auto kernel = poolingInts(card, "kernel_size", 2, {0, 0});
    const auto stride = kernel ? poolingInts(card, "stride", 2, *kernel) : std::nullopt;
    const auto padding = poolingInts(card, "padding", 2, {0, 0});
    const auto dilation = poolingInts(card, "dilation", 2, {1, 1});
    if (!kernel || !stride || !padding || !dilation || !ceil || ceil->kind != ArgKind::Value ||
        !ceil->value.is_boolean())
        return unsupportedCard(card, "expected int[2] kernel_size, stride, padding, dilation and a bool ceil_mode");
    for (int i = 0; i < 2; ++i) {
        f->m_kernel[i] = (*kernel)[i];
        f->m_stride[i] = (*stride)[i];
        f->m_padding[i] = (*padding)[i];
        f->m_dilation[i] = (*dilation)[i];
    }
    for (int i = 0; i < 2; ++i)
        if (f->m_kernel[i] < 1 || f->m_stride[i] < 1 || f->m_padding[i] < 0 || f->m_dilation[i] < 1 ||
            f->m_padding[i] * 2 > f->m_kernel[i] || f->m_kernel[i] * f->m_dilation[i] > 64)
            return unsupportedCard(card,
                                   "pooling window out of the covered range (kernel " + std::to_string(f->m_kernel[i]) +
                                       ", stride " + std::to_string(f->m_stride[i]) + ", padding " +
                                       std::to_string(f->m_padding[i]) + ")");
    f->m_dtype = in.dtype;
    f->m_batch = in.sizes[0];
    f->m_channels = in.sizes[1];
    f->m_height = in.sizes[2];
    f->m_width = in.sizes[3];
    const bool ceilMode = ceil->value.get<bool>();
    f->m_outHeight =
        pooledSize(f->m_height, f->m_kernel[0], f->m_stride[0], f->m_padding[0], f->m_dilation[0], ceilMode);
    f->m_outWidth = pooledSize(f->m_width, f->m_kernel[1], f->m_stride[1], f->m_padding[1], f->m_dilation[1], ceilMode);
    if (card.outputs.size() != 1)
        return unsupportedCard(card, "expected one output");
    const TensorSpec& out = card.outputs[0];
    if (out.dtype != in.dtype ||
        out.sizes != std::vector<std::int64_t>{f->m_batch, f->m_channels, f->m_outHeight, f->m_outWidth})
        return unsupportedCard(card, "output " + out.toShortString() + " is not the pooled size of the input");
    if (f->m_channelsLast ? !isChannelsLast(out) : !out.isContiguous())
        return unsupportedCard(card, "output layout " + out.toShortString() + " differs from the input's");
    if (in.numel() > (1LL << 40) || out.numel() > (1LL << 31) * 256)
        return unsupportedCard(card, "tensor too large for one grid");
    return f;
}

Result<void> MaxPool2dFamily::check(const nlohmann::json& p) const
{
    const std::string context = "max_pool2d template parameters";
    if (auto r = checkKnobsAndThreads(p, kKnobs, context); !r)
        return r;
    const int v = p["vector_width"].get<int>();
    const int opt = p["outputs_per_thread"].get<int>();
    if (m_channelsLast ? opt != 1 : v != 1)
        return makeError(ErrorCode::InvalidArgument,
                         m_channelsLast ? "outputs_per_thread must be 1 for a channels-last input"
                                        : "vector_width must be 1 for an NCHW input",
                         context);
    if (v > 8 || v * dtypeBytes(m_dtype) > 16 || m_channels % v != 0)
        return makeError(ErrorCode::InvalidArgument,
                         "vector_width " + std::to_string(v) + " must divide the channel count " +
                             std::to_string(m_channels) + " (at most 16 bytes)",
                         context);
    if (opt > 8 || opt > m_outWidth * 2)
        return makeError(ErrorCode::InvalidArgument, "outputs_per_thread must be at most 8 and cover the row", context);
    return {};
}

nlohmann::json MaxPool2dFamily::rootParams() const
{
    const int v = m_channelsLast ? widestVectorWidth(m_channels, m_dtype, m_dtype) : 1;
    return {{"threads", 256}, {"vector_width", v}, {"outputs_per_thread", 1}};
}

std::vector<Knob> MaxPool2dFamily::knobs() const
{
    return kKnobs;
}

std::string MaxPool2dFamily::windowSource() const
{
    std::ostringstream s;
    s << "constexpr long long N = " << m_batch << "LL, C = " << m_channels << "LL;\n"
      << "constexpr int H = " << m_height << ", W = " << m_width << ", OH = " << m_outHeight << ", OW = " << m_outWidth
      << ";\n"
      << "constexpr int KH = " << m_kernel[0] << ", KW = " << m_kernel[1] << ", SH = " << m_stride[0]
      << ", SW = " << m_stride[1] << ";\n"
      << "constexpr int PH = " << m_padding[0] << ", PW = " << m_padding[1] << ", DH = " << m_dilation[0]
      << ", DW = " << m_dilation[1]
      << ";\n"
      // NaN propagates as in eager (a NaN in the window wins); padding never takes part.
      << "__device__ __forceinline__ void kfMax(float& m, float v) { if (v > m || v != v) m = v; }\n";
    return s.str();
}

Result<Candidate> MaxPool2dFamily::generate(const nlohmann::json& params) const
{
    if (auto r = check(params); !r)
        return r.error();
    const int threads = params["threads"].get<int>();
    const int v = params["vector_width"].get<int>();
    const int opt = params["outputs_per_thread"].get<int>();
    std::ostringstream s;
    s << "// Built-in max_pool2d of " << (m_channelsLast ? "a channels-last " : "an NCHW ") << "[" << m_batch << ", "
      << m_channels << ", " << m_height << ", " << m_width << "] " << m_dtype << " tensor to " << m_outHeight << "x"
      << m_outWidth << ", values only (no indices).\n"
      << "// Template parameters: " << params.dump() << "\n"
      << dtypePrelude(m_dtype, m_dtype) << windowSource() << "constexpr int THREADS = " << threads << ";\n";
    std::int64_t items = 0;
    if (m_channelsLast) {
        items = m_batch * m_outHeight * m_outWidth * (m_channels / v);
        s << "constexpr int V = " << v << ";\n"
          << "constexpr long long CVEC = C / V;\n"
          << "constexpr long long ITEMS = N * OH * OW * CVEC;\n"
          << "struct alignas(V * sizeof(in_t)) InVec { in_t v[V]; };\n"
          << "struct alignas(V * sizeof(out_t)) OutVec { out_t v[V]; };\n"
          << "\n// One thread: V consecutive channels of one output position (consecutive threads, consecutive\n"
          << "// channels: every load of a warp is one contiguous run).\n"
          << "extern \"C\" __global__ void __launch_bounds__(THREADS) kf_max_pool2d(const in_t* __restrict__ x, "
             "out_t* __restrict__ y)\n{\n"
          << "    const long long i = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;\n"
          << "    if (i >= ITEMS)\n        return;\n"
          << "    const long long cv = i % CVEC;\n    const long long pos = i / CVEC; // (n * OH + oh) * OW + ow\n"
          << "    const int ow = static_cast<int>(pos % OW);\n    const int oh = static_cast<int>(pos / OW % OH);\n"
          << "    const long long n = pos / (static_cast<long long>(OW) * OH);\n"
          << "    const in_t* xn = x + n * H * W * C + cv * V;\n"
          << "    float m[V];\n#pragma unroll\n    for (int e = 0; e < V; ++e)\n        m[e] = "
             "__int_as_float(0xff800000); // -inf\n"
          << "    for (int kh = 0; kh < KH; ++kh) {\n        const int h = oh * SH - PH + kh * DH;\n"
          << "        if (h < 0 || h >= H)\n            continue;\n"
          << "        for (int kw = 0; kw < KW; ++kw) {\n            const int w = ow * SW - PW + kw * DW;\n"
          << "            if (w < 0 || w >= W)\n                continue;\n"
          << "            const InVec t = *reinterpret_cast<const InVec*>(xn + (static_cast<long long>(h) * W + w) * "
             "C);\n"
          << "#pragma unroll\n            for (int e = 0; e < V; ++e)\n                kfMax(m[e], kfLoad(t.v[e]));\n"
          << "        }\n    }\n"
          << "    OutVec o;\n#pragma unroll\n    for (int e = 0; e < V; ++e)\n        o.v[e] = kfStore(m[e]);\n"
          << "    *reinterpret_cast<OutVec*>(y + pos * C + cv * V) = o;\n}\n";
    } else {
        const std::int64_t groups = (m_outWidth + opt - 1) / opt;
        items = m_batch * m_channels * m_outHeight * groups;
        s << "constexpr int OPT = " << opt << "; // consecutive outputs of a row per thread\n"
          << "constexpr long long GROUPS = (OW + OPT - 1) / OPT;\n"
          << "constexpr long long ITEMS = N * C * OH * GROUPS;\n"
          << "\nextern \"C\" __global__ void __launch_bounds__(THREADS) kf_max_pool2d(const in_t* __restrict__ x, "
             "out_t* __restrict__ y)\n{\n"
          << "    const long long i = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;\n"
          << "    if (i >= ITEMS)\n        return;\n"
          << "    const long long row = i / GROUPS; // (n * C + c) * OH + oh\n"
          << "    const int ow0 = static_cast<int>(i % GROUPS) * OPT;\n"
          << "    const int oh = static_cast<int>(row % OH);\n"
          << "    const in_t* xp = x + row / OH * H * W;\n"
          << "    float m[OPT];\n#pragma unroll\n    for (int o = 0; o < OPT; ++o)\n        m[o] = "
             "__int_as_float(0xff800000); // -inf\n"
          << "    for (int kh = 0; kh < KH; ++kh) {\n        const int h = oh * SH - PH + kh * DH;\n"
          << "        if (h < 0 || h >= H)\n            continue;\n"
          << "        for (int kw = 0; kw < KW; ++kw) {\n#pragma unroll\n"
          << "            for (int o = 0; o < OPT; ++o) {\n"
          << "                const int w = (ow0 + o) * SW - PW + kw * DW;\n"
          << "                if (ow0 + o < OW && w >= 0 && w < W)\n"
          << "                    kfMax(m[o], kfLoad(xp[static_cast<long long>(h) * W + w]));\n"
          << "            }\n        }\n    }\n"
          << "#pragma unroll\n    for (int o = 0; o < OPT; ++o)\n"
          << "        if (ow0 + o < OW)\n            y[row * OW + ow0 + o] = kfStore(m[o]);\n}\n";
    }
    Candidate candidate;
    candidate.source = s.str();
    candidate.launchPlan = {{"launches",
                             nlohmann::json::array({launchJson("kf_max_pool2d", (items + threads - 1) / threads,
                                                               threads, {"ptr:self", "ptr:out0"})})}};
    return candidate;
}

} // namespace kforge::core
