#include "runtime/ReductionHooks.h"

#include "runtime/CompositeServe.h"
#include "runtime/HookRegistry.h"

#include <ATen/ops/amax_cuda_dispatch.h>
#include <ATen/ops/amin_cuda_dispatch.h>
#include <ATen/ops/argmax_cuda_dispatch.h>
#include <ATen/ops/argmin_cuda_dispatch.h>
#include <ATen/ops/instance_norm_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/linalg_vector_norm_cuda_dispatch.h>
#include <ATen/ops/logsumexp_compositeexplicitautograd_dispatch.h>
#include <ATen/ops/max_cuda_dispatch.h>
#include <ATen/ops/min_cuda_dispatch.h>
#include <ATen/ops/prod_cuda_dispatch.h>
#include <ATen/ops/std_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/std_cuda_dispatch.h>
#include <ATen/ops/std_mean_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/std_mean_cuda_dispatch.h>
#include <ATen/ops/var_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/var_cuda_dispatch.h>
#include <ATen/ops/var_mean_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/var_mean_cuda_dispatch.h>

#include <tuple>

namespace kforge::runtime {

namespace {

using TensorPair = std::tuple<at::Tensor, at::Tensor>;

c10::IValue optionalDims(at::OptionalIntArrayRef dim)
{
    return dim ? c10::IValue(dim->vec()) : c10::IValue();
}

c10::IValue optionalDtype(std::optional<at::ScalarType> dtype)
{
    return dtype ? c10::IValue(static_cast<int64_t>(*dtype)) : c10::IValue();
}

// A two-output kernel's outputs (var_mean: var, mean; max.dim: values, indices).
std::optional<TensorPair> pairOf(std::optional<std::vector<at::Tensor>> out)
{
    if (!out || out->size() != 2)
        return std::nullopt;
    return TensorPair{(*out)[0], (*out)[1]};
}

// var / std / var_mean / std_mean with `correction` (CUDA kernels).
HookCall correctionCall(const at::Tensor& self, at::OptionalIntArrayRef dim,
                        const std::optional<at::Scalar>& correction, bool keepdim)
{
    HookCall call{{{"self", &self}}, {}};
    call.values.emplace_back("dim", optionalDims(dim));
    call.values.emplace_back("correction", correction ? c10::IValue(*correction) : c10::IValue());
    call.values.emplace_back("keepdim", keepdim);
    return call;
}

at::Tensor varHook(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& correction,
                   bool keepdim)
{
    if (auto out = serveCall("aten::var.correction", correctionCall(self, dim, correction, keepdim)))
        return out->front();
    return at::cuda::var(self, dim, correction, keepdim);
}

at::Tensor stdHook(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& correction,
                   bool keepdim)
{
    if (auto out = serveCall("aten::std.correction", correctionCall(self, dim, correction, keepdim)))
        return out->front();
    return at::cuda::std(self, dim, correction, keepdim);
}

TensorPair varMeanHook(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& correction,
                       bool keepdim)
{
    if (auto out = pairOf(serveCall("aten::var_mean.correction", correctionCall(self, dim, correction, keepdim))))
        return *out;
    return at::cuda::var_mean(self, dim, correction, keepdim);
}

TensorPair stdMeanHook(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& correction,
                       bool keepdim)
{
    if (auto out = pairOf(serveCall("aten::std_mean.correction", correctionCall(self, dim, correction, keepdim))))
        return *out;
    return at::cuda::std_mean(self, dim, correction, keepdim);
}

// var / std / var_mean / std_mean with `unbiased` (CompositeImplicitAutograd: they call the
// correction overloads).
HookCall unbiasedCall(const at::Tensor& self, at::OptionalIntArrayRef dim, bool unbiased, bool keepdim)
{
    HookCall call{{{"self", &self}}, {}};
    call.values.emplace_back("dim", optionalDims(dim));
    call.values.emplace_back("unbiased", unbiased);
    call.values.emplace_back("keepdim", keepdim);
    return call;
}

template <bool AtAutograd>
at::Tensor varDimHook(const at::Tensor& self, at::OptionalIntArrayRef dim, bool unbiased, bool keepdim)
{
    if (auto out = serveComposite<AtAutograd>("aten::var.dim", unbiasedCall(self, dim, unbiased, keepdim), {&self}))
        return *out;
    return at::compositeimplicitautograd::var(self, dim, unbiased, keepdim);
}

template <bool AtAutograd>
at::Tensor stdDimHook(const at::Tensor& self, at::OptionalIntArrayRef dim, bool unbiased, bool keepdim)
{
    if (auto out = serveComposite<AtAutograd>("aten::std.dim", unbiasedCall(self, dim, unbiased, keepdim), {&self}))
        return *out;
    return at::compositeimplicitautograd::std(self, dim, unbiased, keepdim);
}

template <bool AtAutograd>
TensorPair varMeanDimHook(const at::Tensor& self, at::OptionalIntArrayRef dim, bool unbiased, bool keepdim)
{
    if (auto out = pairOf(serveCompositeOutputs<AtAutograd>("aten::var_mean.dim",
                                                            unbiasedCall(self, dim, unbiased, keepdim), {&self})))
        return *out;
    return at::compositeimplicitautograd::var_mean(self, dim, unbiased, keepdim);
}

template <bool AtAutograd>
TensorPair stdMeanDimHook(const at::Tensor& self, at::OptionalIntArrayRef dim, bool unbiased, bool keepdim)
{
    if (auto out = pairOf(serveCompositeOutputs<AtAutograd>("aten::std_mean.dim",
                                                            unbiasedCall(self, dim, unbiased, keepdim), {&self})))
        return *out;
    return at::compositeimplicitautograd::std_mean(self, dim, unbiased, keepdim);
}

at::Tensor logsumexpHook(const at::Tensor& self, at::IntArrayRef dim, bool keepdim)
{
    HookCall call{{{"self", &self}}, {{"dim", c10::IValue(dim.vec())}, {"keepdim", keepdim}}};
    if (auto out = serveCall("aten::logsumexp", call))
        return out->front();
    return at::compositeexplicitautograd::logsumexp(self, dim, keepdim);
}

HookCall indexCall(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim)
{
    return HookCall{{{"self", &self}}, {{"dim", dim ? c10::IValue(*dim) : c10::IValue()}, {"keepdim", keepdim}}};
}

at::Tensor argmaxHook(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim)
{
    if (auto out = serveCall("aten::argmax", indexCall(self, dim, keepdim)))
        return out->front();
    return at::cuda::argmax(self, dim, keepdim);
}

at::Tensor argminHook(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim)
{
    if (auto out = serveCall("aten::argmin", indexCall(self, dim, keepdim)))
        return out->front();
    return at::cuda::argmin(self, dim, keepdim);
}

TensorPair maxDimHook(const at::Tensor& self, int64_t dim, bool keepdim)
{
    if (auto out = pairOf(serveCall("aten::max.dim", indexCall(self, dim, keepdim))))
        return *out;
    return at::cuda::max(self, dim, keepdim);
}

TensorPair minDimHook(const at::Tensor& self, int64_t dim, bool keepdim)
{
    if (auto out = pairOf(serveCall("aten::min.dim", indexCall(self, dim, keepdim))))
        return *out;
    return at::cuda::min(self, dim, keepdim);
}

// max / min of every element.
at::Tensor maxHook(const at::Tensor& self)
{
    if (auto out = serveCall("aten::max", HookCall{{{"self", &self}}, {}}))
        return out->front();
    return at::cuda::max(self);
}

at::Tensor minHook(const at::Tensor& self)
{
    if (auto out = serveCall("aten::min", HookCall{{{"self", &self}}, {}}))
        return out->front();
    return at::cuda::min(self);
}

HookCall extremumCall(const at::Tensor& self, at::IntArrayRef dim, bool keepdim)
{
    return HookCall{{{"self", &self}}, {{"dim", c10::IValue(dim.vec())}, {"keepdim", keepdim}}};
}

at::Tensor amaxHook(const at::Tensor& self, at::IntArrayRef dim, bool keepdim)
{
    if (auto out = serveCall("aten::amax", extremumCall(self, dim, keepdim)))
        return out->front();
    return at::cuda::amax(self, dim, keepdim);
}

at::Tensor aminHook(const at::Tensor& self, at::IntArrayRef dim, bool keepdim)
{
    if (auto out = serveCall("aten::amin", extremumCall(self, dim, keepdim)))
        return out->front();
    return at::cuda::amin(self, dim, keepdim);
}

at::Tensor prodDimHook(const at::Tensor& self, int64_t dim, bool keepdim, std::optional<at::ScalarType> dtype)
{
    HookCall call{{{"self", &self}}, {{"dim", dim}, {"keepdim", keepdim}, {"dtype", optionalDtype(dtype)}}};
    if (auto out = serveCall("aten::prod.dim_int", call))
        return out->front();
    return at::cuda::prod(self, dim, keepdim, dtype);
}

at::Tensor vectorNormHook(const at::Tensor& self, const at::Scalar& ord, at::OptionalIntArrayRef dim, bool keepdim,
                          std::optional<at::ScalarType> dtype)
{
    HookCall call{
        {{"self", &self}},
        {{"ord", c10::IValue(ord)}, {"dim", optionalDims(dim)}, {"keepdim", keepdim}, {"dtype", optionalDtype(dtype)}}};
    if (auto out = serveCall("aten::linalg_vector_norm", call))
        return out->front();
    return at::cuda::linalg_vector_norm(self, ord, dim, keepdim, dtype);
}

template <bool AtAutograd>
at::Tensor instanceNormHook(const at::Tensor& input, const OptionalTensor& weight, const OptionalTensor& bias,
                            const OptionalTensor& runningMean, const OptionalTensor& runningVar, bool useInputStats,
                            double momentum, double eps, bool cudnnEnabled)
{
    HookCall call{
        {{"input", &input}},
        {{"use_input_stats", useInputStats}, {"momentum", momentum}, {"eps", eps}, {"cudnn_enabled", cudnnEnabled}}};
    addOptional(call, "weight", weight);
    addOptional(call, "bias", bias);
    addOptional(call, "running_mean", runningMean);
    addOptional(call, "running_var", runningVar);
    if (auto out = serveComposite<AtAutograd>("aten::instance_norm", call, {&input, present(weight), present(bias)}))
        return *out;
    return at::compositeimplicitautograd::instance_norm(input, weight, bias, runningMean, runningVar, useInputStats,
                                                        momentum, eps, cudnnEnabled);
}

const char* const kReductions[] = {"aten::var.correction",
                                   "aten::std.correction",
                                   "aten::var_mean.correction",
                                   "aten::std_mean.correction",
                                   "aten::var.dim",
                                   "aten::std.dim",
                                   "aten::var_mean.dim",
                                   "aten::std_mean.dim",
                                   "aten::logsumexp",
                                   "aten::argmax",
                                   "aten::argmin",
                                   "aten::max.dim",
                                   "aten::min.dim",
                                   "aten::max",
                                   "aten::min",
                                   "aten::amax",
                                   "aten::amin",
                                   "aten::prod.dim_int",
                                   "aten::linalg_vector_norm",
                                   "aten::instance_norm"};

} // namespace

bool reductionHookKnown(const std::string& key)
{
    for (const char* name : kReductions)
        if (key == name)
            return true;
    return false;
}

bool registerReductionHook(torch::Library& cuda, torch::Library& autogradCuda, const std::string& key)
{
    if (!reductionHookKnown(key))
        return false;
    const std::string name = key.substr(6); // after "aten::"
    if (key == "aten::var.correction")
        cuda.impl(name.c_str(), TORCH_FN(varHook));
    else if (key == "aten::std.correction")
        cuda.impl(name.c_str(), TORCH_FN(stdHook));
    else if (key == "aten::var_mean.correction")
        cuda.impl(name.c_str(), TORCH_FN(varMeanHook));
    else if (key == "aten::std_mean.correction")
        cuda.impl(name.c_str(), TORCH_FN(stdMeanHook));
    else if (key == "aten::var.dim")
        registerBoth(cuda, autogradCuda, name.c_str(), TORCH_FN(varDimHook<false>), TORCH_FN(varDimHook<true>));
    else if (key == "aten::std.dim")
        registerBoth(cuda, autogradCuda, name.c_str(), TORCH_FN(stdDimHook<false>), TORCH_FN(stdDimHook<true>));
    else if (key == "aten::var_mean.dim")
        registerBoth(cuda, autogradCuda, name.c_str(), TORCH_FN(varMeanDimHook<false>), TORCH_FN(varMeanDimHook<true>));
    else if (key == "aten::std_mean.dim")
        registerBoth(cuda, autogradCuda, name.c_str(), TORCH_FN(stdMeanDimHook<false>), TORCH_FN(stdMeanDimHook<true>));
    else if (key == "aten::logsumexp")
        cuda.impl(name.c_str(), TORCH_FN(logsumexpHook));
    else if (key == "aten::argmax")
        cuda.impl(name.c_str(), TORCH_FN(argmaxHook));
    else if (key == "aten::argmin")
        cuda.impl(name.c_str(), TORCH_FN(argminHook));
    else if (key == "aten::max.dim")
        cuda.impl(name.c_str(), TORCH_FN(maxDimHook));
    else if (key == "aten::min.dim")
        cuda.impl(name.c_str(), TORCH_FN(minDimHook));
    else if (key == "aten::max")
        cuda.impl(name.c_str(), TORCH_FN(maxHook));
    else if (key == "aten::min")
        cuda.impl(name.c_str(), TORCH_FN(minHook));
    else if (key == "aten::amax")
        cuda.impl(name.c_str(), TORCH_FN(amaxHook));
    else if (key == "aten::amin")
        cuda.impl(name.c_str(), TORCH_FN(aminHook));
    else if (key == "aten::prod.dim_int")
        cuda.impl(name.c_str(), TORCH_FN(prodDimHook));
    else if (key == "aten::linalg_vector_norm")
        cuda.impl(name.c_str(), TORCH_FN(vectorNormHook));
    else if (key == "aten::instance_norm")
        registerBoth(cuda, autogradCuda, name.c_str(), TORCH_FN(instanceNormHook<false>),
                     TORCH_FN(instanceNormHook<true>));
    return true;
}

} // namespace kforge::runtime
