#include "runtime/CompositeHooks.h"

#include "runtime/CompositeServe.h"
#include "runtime/HookRegistry.h"

#include <ATen/ops/adaptive_avg_pool2d_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/avg_pool1d_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/batch_norm_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/contiguous_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/embedding_compositeexplicitautograd_dispatch.h>
#include <ATen/ops/flatten_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/group_norm_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/layer_norm_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/log_softmax_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/max_pool1d_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/max_pool2d_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/max_pool3d_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/reshape_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/rms_norm_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/softmax_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/to_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/type_as_compositeimplicitautograd_dispatch.h>

#include <initializer_list>

namespace kforge::runtime {

namespace {

c10::IValue intList(at::IntArrayRef values)
{
    return c10::IValue(values.vec());
}

c10::IValue intList(c10::SymIntArrayRef values)
{
    return intList(C10_AS_INTARRAYREF_SLOW(values));
}

template <bool AtAutograd>
at::Tensor layerNormHook(const at::Tensor& input, c10::SymIntArrayRef normalizedShape, const OptionalTensor& weight,
                         const OptionalTensor& bias, double eps, bool cudnnEnable)
{
    HookCall call{{{"input", &input}},
                  {{"normalized_shape", intList(normalizedShape)}, {"eps", eps}, {"cudnn_enable", cudnnEnable}}};
    addOptional(call, "weight", weight);
    addOptional(call, "bias", bias);
    if (auto out = serveComposite<AtAutograd>("aten::layer_norm", call, {&input, present(weight), present(bias)}))
        return *out;
    return at::compositeimplicitautograd::layer_norm_symint(input, normalizedShape, weight, bias, eps, cudnnEnable);
}

template <bool AtAutograd>
at::Tensor groupNormHook(const at::Tensor& input, int64_t numGroups, const OptionalTensor& weight,
                         const OptionalTensor& bias, double eps, bool cudnnEnabled)
{
    HookCall call{{{"input", &input}}, {{"num_groups", numGroups}, {"eps", eps}, {"cudnn_enabled", cudnnEnabled}}};
    addOptional(call, "weight", weight);
    addOptional(call, "bias", bias);
    if (auto out = serveComposite<AtAutograd>("aten::group_norm", call, {&input, present(weight), present(bias)}))
        return *out;
    return at::compositeimplicitautograd::group_norm(input, numGroups, weight, bias, eps, cudnnEnabled);
}

template <bool AtAutograd>
at::Tensor batchNormHook(const at::Tensor& input, const OptionalTensor& weight, const OptionalTensor& bias,
                         const OptionalTensor& runningMean, const OptionalTensor& runningVar, bool training,
                         double momentum, double eps, bool cudnnEnabled)
{
    HookCall call{{{"input", &input}},
                  {{"training", training}, {"momentum", momentum}, {"eps", eps}, {"cudnn_enabled", cudnnEnabled}}};
    addOptional(call, "weight", weight);
    addOptional(call, "bias", bias);
    addOptional(call, "running_mean", runningMean);
    addOptional(call, "running_var", runningVar);
    if (auto out = serveComposite<AtAutograd>("aten::batch_norm", call, {&input, present(weight), present(bias)}))
        return *out;
    return at::compositeimplicitautograd::batch_norm(input, weight, bias, runningMean, runningVar, training, momentum,
                                                     eps, cudnnEnabled);
}

template <bool AtAutograd>
at::Tensor rmsNormHook(const at::Tensor& input, c10::SymIntArrayRef normalizedShape, const OptionalTensor& weight,
                       std::optional<double> eps)
{
    HookCall call{{{"input", &input}},
                  {{"normalized_shape", intList(normalizedShape)}, {"eps", eps ? c10::IValue(*eps) : c10::IValue()}}};
    addOptional(call, "weight", weight);
    if (auto out = serveComposite<AtAutograd>("aten::rms_norm", call, {&input, present(weight)}))
        return *out;
    return at::compositeimplicitautograd::rms_norm_symint(input, normalizedShape, weight, eps);
}

template <bool AtAutograd>
at::Tensor adaptiveAvgPool2dHook(const at::Tensor& self, c10::SymIntArrayRef outputSize)
{
    HookCall call{{{"self", &self}}, {{"output_size", intList(outputSize)}}};
    if (auto out = serveComposite<AtAutograd>("aten::adaptive_avg_pool2d", call, {&self}))
        return *out;
    return at::compositeimplicitautograd::adaptive_avg_pool2d_symint(self, outputSize);
}

HookCall maxPoolCall(const at::Tensor& self, at::IntArrayRef kernelSize, at::IntArrayRef stride,
                     at::IntArrayRef padding, at::IntArrayRef dilation, bool ceilMode)
{
    return HookCall{{{"self", &self}},
                    {{"kernel_size", intList(kernelSize)},
                     {"stride", intList(stride)},
                     {"padding", intList(padding)},
                     {"dilation", intList(dilation)},
                     {"ceil_mode", ceilMode}}};
}

// max_pool1d / 2d / 3d as a whole: eager computes max_poolNd_with_indices and drops the indices.
template <bool AtAutograd>
at::Tensor maxPool1dHook(const at::Tensor& self, at::IntArrayRef kernelSize, at::IntArrayRef stride,
                         at::IntArrayRef padding, at::IntArrayRef dilation, bool ceilMode)
{
    if (auto out = serveComposite<AtAutograd>(
            "aten::max_pool1d", maxPoolCall(self, kernelSize, stride, padding, dilation, ceilMode), {&self}))
        return *out;
    return at::compositeimplicitautograd::max_pool1d(self, kernelSize, stride, padding, dilation, ceilMode);
}

template <bool AtAutograd>
at::Tensor maxPool2dHook(const at::Tensor& self, at::IntArrayRef kernelSize, at::IntArrayRef stride,
                         at::IntArrayRef padding, at::IntArrayRef dilation, bool ceilMode)
{
    if (auto out = serveComposite<AtAutograd>(
            "aten::max_pool2d", maxPoolCall(self, kernelSize, stride, padding, dilation, ceilMode), {&self}))
        return *out;
    return at::compositeimplicitautograd::max_pool2d(self, kernelSize, stride, padding, dilation, ceilMode);
}

template <bool AtAutograd>
at::Tensor maxPool3dHook(const at::Tensor& self, at::IntArrayRef kernelSize, at::IntArrayRef stride,
                         at::IntArrayRef padding, at::IntArrayRef dilation, bool ceilMode)
{
    if (auto out = serveComposite<AtAutograd>(
            "aten::max_pool3d", maxPoolCall(self, kernelSize, stride, padding, dilation, ceilMode), {&self}))
        return *out;
    return at::compositeimplicitautograd::max_pool3d(self, kernelSize, stride, padding, dilation, ceilMode);
}

// avg_pool1d: eager runs avg_pool2d on the input unsqueezed to a height of one.
template <bool AtAutograd>
at::Tensor avgPool1dHook(const at::Tensor& self, at::IntArrayRef kernelSize, at::IntArrayRef stride,
                         at::IntArrayRef padding, bool ceilMode, bool countIncludePad)
{
    HookCall call{{{"self", &self}},
                  {{"kernel_size", intList(kernelSize)},
                   {"stride", intList(stride)},
                   {"padding", intList(padding)},
                   {"ceil_mode", ceilMode},
                   {"count_include_pad", countIncludePad}}};
    if (auto out = serveComposite<AtAutograd>("aten::avg_pool1d", call, {&self}))
        return *out;
    return at::compositeimplicitautograd::avg_pool1d(self, kernelSize, stride, padding, ceilMode, countIncludePad);
}

// to(dtype): a packaged kernel converts in one pass where eager's copy goes through its generic
// casting loop. Calls into the tensor's own dtype (which return the tensor) never match a guard.
template <bool AtAutograd>
at::Tensor toDtypeHook(const at::Tensor& self, at::ScalarType dtype, bool nonBlocking, bool copy,
                       std::optional<at::MemoryFormat> memoryFormat)
{
    HookCall call{{{"self", &self}},
                  {{"dtype", static_cast<int64_t>(dtype)},
                   {"non_blocking", nonBlocking},
                   {"copy", copy},
                   {"memory_format", memoryFormat ? c10::IValue(static_cast<int64_t>(*memoryFormat)) : c10::IValue()}}};
    if (auto out = serveComposite<AtAutograd>("aten::to.dtype", call, {&self}))
        return *out;
    return at::compositeimplicitautograd::to(self, dtype, nonBlocking, copy, memoryFormat);
}

// type_as(other): self.to(other's dtype and device). `other` is guarded as the card recorded it
// (its dtype decides the output's); only self is an input of the kernel and of autograd.
template <bool AtAutograd>
at::Tensor typeAsHook(const at::Tensor& self, const at::Tensor& other)
{
    HookCall call{{{"self", &self}, {"other", &other}}, {}};
    if (auto out = serveComposite<AtAutograd>("aten::type_as", call, {&self}))
        return *out;
    return at::compositeimplicitautograd::type_as(self, other);
}

// Reshape and contiguous of a tensor already contiguous: a view or the tensor itself, which no
// guard can match (the built-in proposer refuses such cards: no copy to run). Counted as a fallback
// without building the call or running the guards, the host cost of nearly every reshape in a model.
const std::string kAlreadyContiguous = "the input is already contiguous (a view or the tensor itself)";

// contiguous(): a packaged kernel copies a strided tensor into a contiguous one (eager clones it).
// A tensor already in the layout asked for comes back itself.
template <bool AtAutograd>
at::Tensor contiguousHook(const at::Tensor& self, at::MemoryFormat memoryFormat)
{
    if (self.is_contiguous(memoryFormat)) {
        countFallback("aten::contiguous", kAlreadyContiguous);
        return at::compositeimplicitautograd::contiguous(self, memoryFormat); // self itself
    }
    HookCall call{{{"self", &self}}, {{"memory_format", static_cast<int64_t>(memoryFormat)}}};
    if (auto out = serveComposite<AtAutograd>("aten::contiguous", call, {&self}))
        return *out;
    return at::compositeimplicitautograd::contiguous(self, memoryFormat);
}

// reshape(): a packaged kernel copies a tensor reshape cannot view (repeat_kv's expanded keys and
// values into [B, H, S, D]); a call that can view its input never matches a guard (such a card is
// refused: no copy to run) and gets eager's view.
template <bool AtAutograd>
at::Tensor reshapeHook(const at::Tensor& self, c10::SymIntArrayRef shape)
{
    if (self.is_contiguous()) {
        countFallback("aten::reshape", kAlreadyContiguous);
        return at::compositeimplicitautograd::reshape_symint(self, shape);
    }
    if (const auto sizes = c10::asIntArrayRefSlowOpt(shape)) {
        HookCall call{{{"self", &self}}, {{"shape", intList(*sizes)}}};
        if (auto out = serveComposite<AtAutograd>("aten::reshape", call, {&self}))
            return *out;
    }
    return at::compositeimplicitautograd::reshape_symint(self, shape);
}

// flatten(start_dim, end_dim): a reshape into the flattened sizes, hooked the same way (a
// transposed input copies; a contiguous one is a view, never served).
template <bool AtAutograd>
at::Tensor flattenHook(const at::Tensor& self, int64_t startDim, int64_t endDim)
{
    if (self.is_contiguous()) {
        countFallback("aten::flatten.using_ints", kAlreadyContiguous);
        return at::compositeimplicitautograd::flatten(self, startDim, endDim);
    }
    HookCall call{{{"self", &self}}, {{"start_dim", startDim}, {"end_dim", endDim}}};
    if (auto out = serveComposite<AtAutograd>("aten::flatten.using_ints", call, {&self}))
        return *out;
    return at::compositeimplicitautograd::flatten(self, startDim, endDim);
}

// softmax.int / log_softmax.int as a whole: with dtype=float32 on a 16-bit input eager converts
// the input in a kernel of its own before _softmax; a packaged kernel reads the 16-bit input and
// writes float32 in one pass.
HookCall softmaxCall(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype)
{
    return HookCall{{{"self", &self}},
                    {{"dim", dim}, {"dtype", dtype ? c10::IValue(static_cast<int64_t>(*dtype)) : c10::IValue()}}};
}

template <bool AtAutograd>
at::Tensor softmaxIntHook(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype)
{
    if (auto out = serveComposite<AtAutograd>("aten::softmax.int", softmaxCall(self, dim, dtype), {&self}))
        return *out;
    return at::compositeimplicitautograd::softmax(self, dim, dtype);
}

template <bool AtAutograd>
at::Tensor logSoftmaxIntHook(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype)
{
    if (auto out = serveComposite<AtAutograd>("aten::log_softmax.int", softmaxCall(self, dim, dtype), {&self}))
        return *out;
    return at::compositeimplicitautograd::log_softmax(self, dim, dtype);
}

// CUDA key only: embedding's autograd formula runs above it.
at::Tensor embeddingHook(const at::Tensor& weight, const at::Tensor& indices, c10::SymInt paddingIdx,
                         bool scaleGradByFreq, bool sparse)
{
    HookCall call{{{"weight", &weight}, {"indices", &indices}},
                  {{"padding_idx", paddingIdx.guard_int(__FILE__, __LINE__)},
                   {"scale_grad_by_freq", scaleGradByFreq},
                   {"sparse", sparse}}};
    if (auto out = serveCall("aten::embedding", call))
        return out->front();
    return at::compositeexplicitautograd::embedding_symint(weight, indices, std::move(paddingIdx), scaleGradByFreq,
                                                           sparse);
}

const char* const kComposite[] = {"aten::layer_norm",
                                  "aten::group_norm",
                                  "aten::batch_norm",
                                  "aten::rms_norm",
                                  "aten::adaptive_avg_pool2d",
                                  "aten::embedding",
                                  "aten::softmax.int",
                                  "aten::log_softmax.int",
                                  "aten::max_pool2d",
                                  "aten::to.dtype",
                                  "aten::type_as",
                                  "aten::contiguous",
                                  "aten::reshape",
                                  "aten::max_pool1d",
                                  "aten::max_pool3d",
                                  "aten::avg_pool1d",
                                  "aten::flatten.using_ints"};

} // namespace

bool compositeHookKnown(const std::string& key)
{
    for (const char* name : kComposite)
        if (key == name)
            return true;
    return false;
}

bool registerComposite(torch::Library& cuda, torch::Library& autogradCuda, const std::string& key)
{
    if (key == "aten::layer_norm")
        registerBoth(cuda, autogradCuda, "layer_norm", TORCH_FN(layerNormHook<false>), TORCH_FN(layerNormHook<true>));
    else if (key == "aten::group_norm")
        registerBoth(cuda, autogradCuda, "group_norm", TORCH_FN(groupNormHook<false>), TORCH_FN(groupNormHook<true>));
    else if (key == "aten::batch_norm")
        registerBoth(cuda, autogradCuda, "batch_norm", TORCH_FN(batchNormHook<false>), TORCH_FN(batchNormHook<true>));
    else if (key == "aten::rms_norm")
        registerBoth(cuda, autogradCuda, "rms_norm", TORCH_FN(rmsNormHook<false>), TORCH_FN(rmsNormHook<true>));
    else if (key == "aten::adaptive_avg_pool2d")
        registerBoth(cuda, autogradCuda, "adaptive_avg_pool2d", TORCH_FN(adaptiveAvgPool2dHook<false>),
                     TORCH_FN(adaptiveAvgPool2dHook<true>));
    else if (key == "aten::softmax.int")
        registerBoth(cuda, autogradCuda, "softmax.int", TORCH_FN(softmaxIntHook<false>),
                     TORCH_FN(softmaxIntHook<true>));
    else if (key == "aten::log_softmax.int")
        registerBoth(cuda, autogradCuda, "log_softmax.int", TORCH_FN(logSoftmaxIntHook<false>),
                     TORCH_FN(logSoftmaxIntHook<true>));
    else if (key == "aten::max_pool2d")
        registerBoth(cuda, autogradCuda, "max_pool2d", TORCH_FN(maxPool2dHook<false>), TORCH_FN(maxPool2dHook<true>));
    else if (key == "aten::max_pool1d")
        registerBoth(cuda, autogradCuda, "max_pool1d", TORCH_FN(maxPool1dHook<false>), TORCH_FN(maxPool1dHook<true>));
    else if (key == "aten::max_pool3d")
        registerBoth(cuda, autogradCuda, "max_pool3d", TORCH_FN(maxPool3dHook<false>), TORCH_FN(maxPool3dHook<true>));
    else if (key == "aten::avg_pool1d")
        registerBoth(cuda, autogradCuda, "avg_pool1d", TORCH_FN(avgPool1dHook<false>), TORCH_FN(avgPool1dHook<true>));
    else if (key == "aten::to.dtype")
        registerBoth(cuda, autogradCuda, "to.dtype", TORCH_FN(toDtypeHook<false>), TORCH_FN(toDtypeHook<true>));
    else if (key == "aten::type_as")
        registerBoth(cuda, autogradCuda, "type_as", TORCH_FN(typeAsHook<false>), TORCH_FN(typeAsHook<true>));
    else if (key == "aten::contiguous")
        registerBoth(cuda, autogradCuda, "contiguous", TORCH_FN(contiguousHook<false>), TORCH_FN(contiguousHook<true>));
    else if (key == "aten::reshape")
        registerBoth(cuda, autogradCuda, "reshape", TORCH_FN(reshapeHook<false>), TORCH_FN(reshapeHook<true>));
    else if (key == "aten::flatten.using_ints")
        registerBoth(cuda, autogradCuda, "flatten.using_ints", TORCH_FN(flattenHook<false>),
                     TORCH_FN(flattenHook<true>));
    else if (key == "aten::embedding")
        cuda.impl("embedding", TORCH_FN(embeddingHook));
    else
        return false;
    return true;
}

} // namespace kforge::runtime
