#pragma once
// What a hook of a composite operator does before it offers a call (CompositeHooks.h,
// ReductionHooks.h): optional tensor arguments into the call, and the autograd rule of a hook at
// the AutogradCUDA key (a call whose inputs need a gradient runs the original, which records the
// graph of its pieces as eager does); and the registration of such a hook at both keys.

#include "runtime/HookRegistry.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>
#include <torch/library.h>

#include <initializer_list>
#include <optional>
#include <vector>

namespace kforge::runtime {

using OptionalTensor = std::optional<at::Tensor>;

/// Whether autograd must see this call: grad mode on and an input that requires a gradient (or
/// carries a forward-mode tangent).
inline bool needsAutograd(std::initializer_list<const at::Tensor*> tensors)
{
    if (!at::GradMode::is_enabled())
        return false;
    for (const at::Tensor* t : tensors)
        if (t && t->defined() && (t->requires_grad() || t->_fw_grad(/*level=*/0).defined()))
            return true;
    return false;
}

inline const at::Tensor* present(const OptionalTensor& t)
{
    return t && t->defined() ? &*t : nullptr;
}

/// An optional tensor argument: a tensor the guard checks, or None among the values.
inline void addOptional(HookCall& call, const char* name, const OptionalTensor& t)
{
    if (const at::Tensor* tensor = present(t))
        call.tensors.emplace_back(name, tensor);
    else
        call.values.emplace_back(name, c10::IValue());
}

/// Serves `call` through the packaged kernels unless autograd needs the original (AtAutograd hooks
/// only: at the CUDA key autograd is already behind us); every output of the kernel.
template <bool AtAutograd>
std::optional<std::vector<at::Tensor>> serveCompositeOutputs(const char* hook, const HookCall& call,
                                                             std::initializer_list<const at::Tensor*> inputs)
{
    if (AtAutograd && needsAutograd(inputs)) {
        countFallback(hook, "autograd: an input requires a gradient");
        return std::nullopt;
    }
    return serveCall(hook, call);
}

/// serveCompositeOutputs of an operator with one output.
template <bool AtAutograd>
std::optional<at::Tensor> serveComposite(const char* hook, const HookCall& call,
                                         std::initializer_list<const at::Tensor*> inputs)
{
    if (auto out = serveCompositeOutputs<AtAutograd>(hook, call, inputs))
        return out->front();
    return std::nullopt;
}

/// Registers a CompositeImplicitAutograd operator's hook at the CUDA key (calls under
/// inference_mode) and at AutogradCUDA (every other call).
template <class CudaHook, class AutogradHook>
void registerBoth(torch::Library& cuda, torch::Library& autogradCuda, const char* name, CudaHook atCuda,
                  AutogradHook atAutograd)
{
    cuda.impl(name, atCuda);
    autogradCuda.impl(name, atAutograd);
}

} // namespace kforge::runtime
