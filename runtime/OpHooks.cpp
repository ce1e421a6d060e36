#include "runtime/OpHooks.h"

#include "runtime/HookRegistry.h"

#include <ATen/ops/_log_softmax_cuda_dispatch.h>
#include <ATen/ops/_softmax_cuda_dispatch.h>
#include <ATen/ops/add_cuda_dispatch.h>
#include <ATen/ops/avg_pool2d_cuda_dispatch.h>
#include <ATen/ops/avg_pool3d_cuda_dispatch.h>
#include <ATen/ops/cat_cuda_dispatch.h>
#include <ATen/ops/cos_cuda_dispatch.h>
#include <ATen/ops/cumprod_cuda_dispatch.h>
#include <ATen/ops/cumsum_cuda_dispatch.h>
#include <ATen/ops/div_cuda_dispatch.h>
#include <ATen/ops/gelu_cuda_dispatch.h>
#include <ATen/ops/mean_cuda_dispatch.h>
#include <ATen/ops/mul_cuda_dispatch.h>
#include <ATen/ops/neg_cuda_dispatch.h>
#include <ATen/ops/pow_cuda_dispatch.h>
#include <ATen/ops/relu_cuda_dispatch.h>
#include <ATen/ops/rsqrt_cuda_dispatch.h>
#include <ATen/ops/sigmoid_cuda_dispatch.h>
#include <ATen/ops/silu_cuda_dispatch.h>
#include <ATen/ops/sin_cuda_dispatch.h>
#include <ATen/ops/sub_cuda_dispatch.h>
#include <ATen/ops/sum_cuda_dispatch.h>
#include <ATen/ops/tanh_cuda_dispatch.h>

namespace kforge::runtime {

namespace {

// The hook of an op whose only argument is `self` (relu, silu, sigmoid, tanh, neg, rsqrt, cos, sin): the
// package's kernel for `Key` where a guard matches, else the original CUDA kernel.
template <const char* Key, at::Tensor (*Original)(const at::Tensor&)>
at::Tensor selfOnlyHook(const at::Tensor& self)
{
    if (auto out = serveCall(Key, HookCall{{{"self", &self}}, {}}))
        return out->front();
    return Original(self);
}

// The in-place form (relu_, silu_): the kernel writes through `self` (output 0 is self).
template <const char* Key, at::Tensor& (*Original)(at::Tensor&)>
at::Tensor& selfOnlyInPlaceHook(at::Tensor& self)
{
    if (serveCall(Key, HookCall{{{"self", &self}}, {}}))
        return self;
    return Original(self);
}

constexpr char kRelu[] = "aten::relu";
constexpr char kReluInPlace[] = "aten::relu_";
constexpr char kSiluInPlace[] = "aten::silu_";
constexpr char kSilu[] = "aten::silu";
constexpr char kSigmoid[] = "aten::sigmoid";
constexpr char kTanh[] = "aten::tanh";
constexpr char kNeg[] = "aten::neg";
constexpr char kRsqrt[] = "aten::rsqrt";
constexpr char kCos[] = "aten::cos";
constexpr char kSin[] = "aten::sin";
// Named instances: TORCH_FN takes a plain function (pointer) name.
constexpr auto reluHook = &selfOnlyHook<kRelu, &at::cuda::relu>;
constexpr auto siluHook = &selfOnlyHook<kSilu, &at::cuda::silu>;
constexpr auto sigmoidHook = &selfOnlyHook<kSigmoid, &at::cuda::sigmoid>;
constexpr auto tanhHook = &selfOnlyHook<kTanh, &at::cuda::tanh>;
constexpr auto negHook = &selfOnlyHook<kNeg, &at::cuda::neg>;
constexpr auto rsqrtHook = &selfOnlyHook<kRsqrt, &at::cuda::rsqrt>;
constexpr auto cosHook = &selfOnlyHook<kCos, &at::cuda::cos>;
constexpr auto sinHook = &selfOnlyHook<kSin, &at::cuda::sin>;
constexpr auto reluInPlaceHook = &selfOnlyInPlaceHook<kReluInPlace, &at::cuda::relu_>;
constexpr auto siluInPlaceHook = &selfOnlyInPlaceHook<kSiluInPlace, &at::cuda::silu_>;

at::Tensor softmaxHook(const at::Tensor& self, int64_t dim, bool halfToFloat)
{
    HookCall call{{{"self", &self}}, {{"dim", dim}, {"half_to_float", halfToFloat}}};
    if (auto out = serveCall("aten::_softmax", call))
        return out->front();
    return at::cuda::_softmax(self, dim, halfToFloat);
}

at::Tensor logSoftmaxHook(const at::Tensor& self, int64_t dim, bool halfToFloat)
{
    HookCall call{{{"self", &self}}, {{"dim", dim}, {"half_to_float", halfToFloat}}};
    if (auto out = serveCall("aten::_log_softmax", call))
        return out->front();
    return at::cuda::_log_softmax(self, dim, halfToFloat);
}

at::Tensor powScalarHook(const at::Tensor& self, const at::Scalar& exponent)
{
    HookCall call{{{"self", &self}}, {{"exponent", c10::IValue(exponent)}}};
    if (auto out = serveCall("aten::pow.Tensor_Scalar", call))
        return out->front();
    return at::cuda::pow(self, exponent);
}

at::Tensor geluHook(const at::Tensor& self, c10::string_view approximate)
{
    HookCall call{{{"self", &self}}, {{"approximate", std::string(approximate)}}};
    if (auto out = serveCall("aten::gelu", call))
        return out->front();
    return at::cuda::gelu(self, approximate);
}

// cat: a list's tensors go by the guard's names for them ("tensors[0]", ...: CastExport's
// guardForCard); lists longer than a packaged cat takes (8) go straight to the original.
at::Tensor catHook(const at::ITensorListRef& tensors, int64_t dim)
{
    static const char* const kNames[] = {"tensors[0]", "tensors[1]", "tensors[2]", "tensors[3]",
                                         "tensors[4]", "tensors[5]", "tensors[6]", "tensors[7]"};
    if (tensors.size() <= std::size(kNames)) {
        HookCall call; // the list's own tensors, by reference: nothing allocated for a short list
        std::size_t i = 0;
        for (const at::Tensor& tensor : tensors)
            call.tensors.emplace_back(kNames[i++], &tensor);
        call.values.emplace_back("dim", c10::IValue(dim));
        if (auto out = serveCall("aten::cat", call))
            return out->front();
    }
    return at::cuda::cat(tensors, dim);
}

HookCall binaryCall(const at::Tensor& self, const at::Tensor& other, const at::Scalar* alpha)
{
    HookCall call{{{"self", &self}, {"other", &other}}, {}};
    if (alpha)
        call.values.emplace_back("alpha", c10::IValue(*alpha));
    return call;
}

at::Tensor addHook(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha)
{
    if (auto out = serveCall("aten::add.Tensor", binaryCall(self, other, &alpha)))
        return out->front();
    return at::cuda::add(self, other, alpha);
}

at::Tensor subHook(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha)
{
    if (auto out = serveCall("aten::sub.Tensor", binaryCall(self, other, &alpha)))
        return out->front();
    return at::cuda::sub(self, other, alpha);
}

at::Tensor mulHook(const at::Tensor& self, const at::Tensor& other)
{
    if (auto out = serveCall("aten::mul.Tensor", binaryCall(self, other, nullptr)))
        return out->front();
    return at::cuda::mul(self, other);
}

at::Tensor divHook(const at::Tensor& self, const at::Tensor& other)
{
    if (auto out = serveCall("aten::div.Tensor", binaryCall(self, other, nullptr)))
        return out->front();
    return at::cuda::div(self, other);
}

// In place: the kernel writes through `self` (output 0 is self); the hook returns self.
at::Tensor& addInPlaceHook(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha)
{
    if (serveCall("aten::add_.Tensor", binaryCall(self, other, &alpha)))
        return self;
    return at::cuda::add_(self, other, alpha);
}

at::Tensor& subInPlaceHook(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha)
{
    if (serveCall("aten::sub_.Tensor", binaryCall(self, other, &alpha)))
        return self;
    return at::cuda::sub_(self, other, alpha);
}

at::Tensor& mulInPlaceHook(at::Tensor& self, const at::Tensor& other)
{
    if (serveCall("aten::mul_.Tensor", binaryCall(self, other, nullptr)))
        return self;
    return at::cuda::mul_(self, other);
}

at::Tensor& divInPlaceHook(at::Tensor& self, const at::Tensor& other)
{
    if (serveCall("aten::div_.Tensor", binaryCall(self, other, nullptr)))
        return self;
    return at::cuda::div_(self, other);
}

HookCall reductionCall(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype)
{
    HookCall call{{{"self", &self}}, {}};
    call.values.emplace_back("dim", dim ? c10::IValue(dim->vec()) : c10::IValue());
    call.values.emplace_back("keepdim", keepdim);
    call.values.emplace_back("dtype", dtype ? c10::IValue(static_cast<int64_t>(*dtype)) : c10::IValue());
    return call;
}

at::Tensor meanHook(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype)
{
    if (auto out = serveCall("aten::mean.dim", reductionCall(self, dim, keepdim, dtype)))
        return out->front();
    return at::cuda::mean(self, dim, keepdim, dtype);
}

at::Tensor sumHook(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<at::ScalarType> dtype)
{
    if (auto out = serveCall("aten::sum.dim_IntList", reductionCall(self, dim, keepdim, dtype)))
        return out->front();
    return at::cuda::sum(self, dim, keepdim, dtype);
}

// cumsum / cumprod: the arguments as the capture records them (dim an int, dtype a ScalarType code or None).
HookCall scanCall(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype)
{
    HookCall call{{{"self", &self}}, {}};
    call.values.emplace_back("dim", dim);
    call.values.emplace_back("dtype", dtype ? c10::IValue(static_cast<int64_t>(*dtype)) : c10::IValue());
    return call;
}

at::Tensor cumsumHook(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype)
{
    if (auto out = serveCall("aten::cumsum", scanCall(self, dim, dtype)))
        return out->front();
    return at::cuda::cumsum(self, dim, dtype);
}

at::Tensor cumprodHook(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype)
{
    if (auto out = serveCall("aten::cumprod", scanCall(self, dim, dtype)))
        return out->front();
    return at::cuda::cumprod(self, dim, dtype);
}

// avg_pool2d / avg_pool3d: the window arguments as lists (the capture records kernel_size 3 as [3, 3]).
HookCall averagePoolCall(const at::Tensor& self, at::IntArrayRef kernelSize, at::IntArrayRef stride,
                         at::IntArrayRef padding, bool ceilMode, bool countIncludePad,
                         std::optional<int64_t> divisorOverride)
{
    HookCall call{{{"self", &self}}, {}};
    call.values.emplace_back("kernel_size", c10::IValue(kernelSize.vec()));
    call.values.emplace_back("stride", c10::IValue(stride.vec()));
    call.values.emplace_back("padding", c10::IValue(padding.vec()));
    call.values.emplace_back("ceil_mode", ceilMode);
    call.values.emplace_back("count_include_pad", countIncludePad);
    call.values.emplace_back("divisor_override", divisorOverride ? c10::IValue(*divisorOverride) : c10::IValue());
    return call;
}

at::Tensor avgPool2dHook(const at::Tensor& self, at::IntArrayRef kernelSize, at::IntArrayRef stride,
                         at::IntArrayRef padding, bool ceilMode, bool countIncludePad,
                         std::optional<int64_t> divisorOverride)
{
    if (auto out =
            serveCall("aten::avg_pool2d",
                      averagePoolCall(self, kernelSize, stride, padding, ceilMode, countIncludePad, divisorOverride)))
        return out->front();
    return at::cuda::avg_pool2d(self, kernelSize, stride, padding, ceilMode, countIncludePad, divisorOverride);
}

at::Tensor avgPool3dHook(const at::Tensor& self, at::IntArrayRef kernelSize, at::IntArrayRef stride,
                         at::IntArrayRef padding, bool ceilMode, bool countIncludePad,
                         std::optional<int64_t> divisorOverride)
{
    if (auto out =
            serveCall("aten::avg_pool3d",
                      averagePoolCall(self, kernelSize, stride, padding, ceilMode, countIncludePad, divisorOverride)))
        return out->front();
    return at::cuda::avg_pool3d(self, kernelSize, stride, padding, ceilMode, countIncludePad, divisorOverride);
}

const char* const kHooked[] = {"aten::_softmax",
                               "aten::_log_softmax",
                               "aten::relu",
                               "aten::gelu",
                               "aten::silu",
                               "aten::sigmoid",
                               "aten::tanh",
                               "aten::add.Tensor",
                               "aten::sub.Tensor",
                               "aten::mul.Tensor",
                               "aten::div.Tensor",
                               "aten::add_.Tensor",
                               "aten::sub_.Tensor",
                               "aten::mul_.Tensor",
                               "aten::div_.Tensor",
                               "aten::mean.dim",
                               "aten::sum.dim_IntList",
                               "aten::neg",
                               "aten::rsqrt",
                               "aten::pow.Tensor_Scalar",
                               "aten::relu_",
                               "aten::silu_",
                               "aten::cat",
                               "aten::cos",
                               "aten::sin",
                               "aten::cumsum",
                               "aten::cumprod",
                               "aten::avg_pool2d",
                               "aten::avg_pool3d"};

} // namespace

// Registers the hook of `key` ("aten::add.Tensor") on `library` (namespace aten, CUDA key).
bool registerPlainHook(torch::Library& library, const std::string& key)
{
    const std::string name = key.substr(6); // after "aten::"
    if (key == "aten::_softmax")
        library.impl(name.c_str(), TORCH_FN(softmaxHook));
    else if (key == "aten::_log_softmax")
        library.impl(name.c_str(), TORCH_FN(logSoftmaxHook));
    else if (key == "aten::relu")
        library.impl(name.c_str(), TORCH_FN(reluHook));
    else if (key == "aten::relu_")
        library.impl(name.c_str(), TORCH_FN(reluInPlaceHook));
    else if (key == "aten::silu_")
        library.impl(name.c_str(), TORCH_FN(siluInPlaceHook));
    else if (key == "aten::gelu")
        library.impl(name.c_str(), TORCH_FN(geluHook));
    else if (key == "aten::silu")
        library.impl(name.c_str(), TORCH_FN(siluHook));
    else if (key == "aten::sigmoid")
        library.impl(name.c_str(), TORCH_FN(sigmoidHook));
    else if (key == "aten::tanh")
        library.impl(name.c_str(), TORCH_FN(tanhHook));
    else if (key == "aten::neg")
        library.impl(name.c_str(), TORCH_FN(negHook));
    else if (key == "aten::rsqrt")
        library.impl(name.c_str(), TORCH_FN(rsqrtHook));
    else if (key == "aten::cos")
        library.impl(name.c_str(), TORCH_FN(cosHook));
    else if (key == "aten::sin")
        library.impl(name.c_str(), TORCH_FN(sinHook));
    else if (key == "aten::pow.Tensor_Scalar")
        library.impl(name.c_str(), TORCH_FN(powScalarHook));
    else if (key == "aten::add.Tensor")
        library.impl(name.c_str(), TORCH_FN(addHook));
    else if (key == "aten::sub.Tensor")
        library.impl(name.c_str(), TORCH_FN(subHook));
    else if (key == "aten::mul.Tensor")
        library.impl(name.c_str(), TORCH_FN(mulHook));
    else if (key == "aten::div.Tensor")
        library.impl(name.c_str(), TORCH_FN(divHook));
    else if (key == "aten::add_.Tensor")
        library.impl(name.c_str(), TORCH_FN(addInPlaceHook));
    else if (key == "aten::sub_.Tensor")
        library.impl(name.c_str(), TORCH_FN(subInPlaceHook));
    else if (key == "aten::mul_.Tensor")
        library.impl(name.c_str(), TORCH_FN(mulInPlaceHook));
    else if (key == "aten::div_.Tensor")
        library.impl(name.c_str(), TORCH_FN(divInPlaceHook));
    else if (key == "aten::mean.dim")
        library.impl(name.c_str(), TORCH_FN(meanHook));
    else if (key == "aten::sum.dim_IntList")
        library.impl(name.c_str(), TORCH_FN(sumHook));
    else if (key == "aten::cat")
        library.impl(name.c_str(), TORCH_FN(catHook));
    else if (key == "aten::cumsum")
        library.impl(name.c_str(), TORCH_FN(cumsumHook));
    else if (key == "aten::cumprod")
        library.impl(name.c_str(), TORCH_FN(cumprodHook));
    else if (key == "aten::avg_pool2d")
        library.impl(name.c_str(), TORCH_FN(avgPool2dHook));
    else if (key == "aten::avg_pool3d")
        library.impl(name.c_str(), TORCH_FN(avgPool3dHook));
    else
        return false;
    return true;
}

bool plainHookKnown(const std::string& key)
{
    for (const char* name : kHooked)
        if (key == name)
            return true;
    return false;
}

} // namespace kforge::runtime
