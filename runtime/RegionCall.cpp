#include "runtime/RegionCall.h"

#include "runtime/HookRegistry.h"
#include "runtime/PackagedKernel.h"

#include <c10/core/GradMode.h>

#include <algorithm>

namespace kforge::runtime {

namespace {

// Region inputs a call may have: far more than a fusible chain reads (its members' operands).
constexpr std::size_t kMostRegionInputs = 64;

// "in0" ... "in63": the region card's argument names, which the guard and the plan use.
const std::vector<std::string>& inputNames()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (std::size_t i = 0; i < kMostRegionInputs; ++i)
            n.push_back("in" + std::to_string(i));
        return n;
    }();
    return names;
}

} // namespace

std::tuple<bool, std::vector<at::Tensor>> regionCall(std::vector<std::string> kernels, std::vector<at::Tensor> inputs)
{
    if (inputs.size() > kMostRegionInputs) {
        countRegionFallback(kernels, "more than " + std::to_string(kMostRegionInputs) + " region inputs");
        return {false, {}};
    }
    if (c10::GradMode::is_enabled() && std::any_of(inputs.begin(), inputs.end(), [](const at::Tensor& t) {
            return t.defined() && t.requires_grad();
        })) {
        countRegionFallback(kernels, "autograd: an input requires a gradient");
        return {false, {}};
    }
    HookCall call;
    for (std::size_t i = 0; i < inputs.size(); ++i)
        call.tensors.emplace_back(inputNames()[i].c_str(), &inputs[i]);
    auto outputs = serveRegionCall(kernels, call);
    if (!outputs)
        return {false, {}};
    return {true, std::move(*outputs)};
}

} // namespace kforge::runtime
