#include "OpHooks.h"

#include <ATen/ops/_log_softmax_cuda_dispatch.h>
#include <ATen/ops/_softmax_cuda_dispatch.h>
#include <ATen/ops/add_cuda_dispatch.h>
#include <ATen/ops/div_cuda_dispatch.h>
#include <ATen/ops/gelu_cuda_dispatch.h>
#include <ATen/ops/mean_cuda_dispatch.h>
#include <ATen/ops/mul_cuda_dispatch.h>
#include <ATen/ops/relu_cuda_dispatch.h>
#include <ATen/ops/sigmoid_cuda_dispatch.h>
#include <ATen/ops/silu_cuda_dispatch.h>
#include <ATen/ops/sub_cuda_dispatch.h>
#include <ATen/ops/sum_cuda_dispatch.h>
#include <ATen/ops/tanh_cuda_dispatch.h>

#include <atomic>
#include <map>
#include <mutex>
#include <optional>

namespace kforge::runtime {

namespace {

struct Entry {
    std::string hook; // "aten::add.Tensor"
    std::unique_ptr<PackagedKernel> kernel;
};

struct Registry {
    std::map<std::string, std::vector<std::shared_ptr<Entry>>> byHook;
};

// Replaced whole on load and unload; hooks take a snapshot (shared ownership) per call.
std::atomic<std::shared_ptr<const Registry>> g_registry{std::make_shared<const Registry>()};
Registry g_building; // filled by addToRegistry under the load lock, published by registerHooks

std::mutex g_reasonsMutex;
std::map<std::string, std::string> g_lastReason; // kernel id -> why the last fallback happened

std::string hookKey(const core::RuntimeHook& hook)
{
    return hook.op + (hook.overload.empty() ? "" : "." + hook.overload);
}

// The packaged kernel's outputs for `call`, or nullopt: run the original.
std::optional<std::vector<at::Tensor>> serve(const char* hook, const HookCall& call)
{
    const std::shared_ptr<const Registry> registry = g_registry.load();
    auto found = registry->byHook.find(hook);
    if (found == registry->byHook.end())
        return std::nullopt;
    std::string reason;
    for (const std::shared_ptr<Entry>& entry : found->second) {
        const std::string mismatch = entry->kernel->mismatch(call);
        if (!mismatch.empty()) {
            reason = mismatch;
            continue;
        }
        auto outputs = entry->kernel->launch(call);
        if (outputs) {
            entry->kernel->hits.fetch_add(1, std::memory_order_relaxed);
            return std::move(outputs.value());
        }
        reason = "launch refused: " + outputs.error().message;
    }
    std::lock_guard lock(g_reasonsMutex);
    for (const std::shared_ptr<Entry>& entry : found->second) {
        entry->kernel->fallbacks.fetch_add(1, std::memory_order_relaxed);
        g_lastReason[entry->kernel->id()] = reason;
    }
    return std::nullopt;
}

HookCall selfOnly(const at::Tensor& self)
{
    return HookCall{{{"self", &self}}, {}};
}

at::Tensor softmaxHook(const at::Tensor& self, int64_t dim, bool halfToFloat)
{
    HookCall call{{{"self", &self}}, {{"dim", dim}, {"half_to_float", halfToFloat}}};
    if (auto out = serve("aten::_softmax", call))
        return out->front();
    return at::cuda::_softmax(self, dim, halfToFloat);
}

at::Tensor logSoftmaxHook(const at::Tensor& self, int64_t dim, bool halfToFloat)
{
    HookCall call{{{"self", &self}}, {{"dim", dim}, {"half_to_float", halfToFloat}}};
    if (auto out = serve("aten::_log_softmax", call))
        return out->front();
    return at::cuda::_log_softmax(self, dim, halfToFloat);
}

at::Tensor reluHook(const at::Tensor& self)
{
    if (auto out = serve("aten::relu", selfOnly(self)))
        return out->front();
    return at::cuda::relu(self);
}

at::Tensor geluHook(const at::Tensor& self, c10::string_view approximate)
{
    HookCall call{{{"self", &self}}, {{"approximate", std::string(approximate)}}};
    if (auto out = serve("aten::gelu", call))
        return out->front();
    return at::cuda::gelu(self, approximate);
}

at::Tensor siluHook(const at::Tensor& self)
{
    if (auto out = serve("aten::silu", selfOnly(self)))
        return out->front();
    return at::cuda::silu(self);
}

at::Tensor sigmoidHook(const at::Tensor& self)
{
    if (auto out = serve("aten::sigmoid", selfOnly(self)))
        return out->front();
    return at::cuda::sigmoid(self);
}

at::Tensor tanhHook(const at::Tensor& self)
{
    if (auto out = serve("aten::tanh", selfOnly(self)))
        return out->front();
    return at::cuda::tanh(self);
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
    if (auto out = serve("aten::add.Tensor", binaryCall(self, other, &alpha)))
        return out->front();
    return at::cuda::add(self, other, alpha);
}

at::Tensor subHook(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha)
{
    if (auto out = serve("aten::sub.Tensor", binaryCall(self, other, &alpha)))
        return out->front();
    return at::cuda::sub(self, other, alpha);
}

at::Tensor mulHook(const at::Tensor& self, const at::Tensor& other)
{
    if (auto out = serve("aten::mul.Tensor", binaryCall(self, other, nullptr)))
        return out->front();
    return at::cuda::mul(self, other);
}

at::Tensor divHook(const at::Tensor& self, const at::Tensor& other)
{
    if (auto out = serve("aten::div.Tensor", binaryCall(self, other, nullptr)))
        return out->front();
    return at::cuda::div(self, other);
}

// In place: the kernel writes through `self` (output 0 is self); the hook returns self.
at::Tensor& addInPlaceHook(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha)
{
    if (serve("aten::add_.Tensor", binaryCall(self, other, &alpha)))
        return self;
    return at::cuda::add_(self, other, alpha);
}

at::Tensor& subInPlaceHook(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha)
{
    if (serve("aten::sub_.Tensor", binaryCall(self, other, &alpha)))
        return self;
    return at::cuda::sub_(self, other, alpha);
}

at::Tensor& mulInPlaceHook(at::Tensor& self, const at::Tensor& other)
{
    if (serve("aten::mul_.Tensor", binaryCall(self, other, nullptr)))
        return self;
    return at::cuda::mul_(self, other);
}

at::Tensor& divInPlaceHook(at::Tensor& self, const at::Tensor& other)
{
    if (serve("aten::div_.Tensor", binaryCall(self, other, nullptr)))
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
    if (auto out = serve("aten::mean.dim", reductionCall(self, dim, keepdim, dtype)))
        return out->front();
    return at::cuda::mean(self, dim, keepdim, dtype);
}

at::Tensor sumHook(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<at::ScalarType> dtype)
{
    if (auto out = serve("aten::sum.dim_IntList", reductionCall(self, dim, keepdim, dtype)))
        return out->front();
    return at::cuda::sum(self, dim, keepdim, dtype);
}

// Registers the hook of `key` ("aten::add.Tensor") on `library` (namespace aten, CUDA key).
bool registerOne(torch::Library& library, const std::string& key)
{
    const std::string name = key.substr(6); // after "aten::"
    if (key == "aten::_softmax") library.impl(name.c_str(), TORCH_FN(softmaxHook));
    else if (key == "aten::_log_softmax") library.impl(name.c_str(), TORCH_FN(logSoftmaxHook));
    else if (key == "aten::relu") library.impl(name.c_str(), TORCH_FN(reluHook));
    else if (key == "aten::gelu") library.impl(name.c_str(), TORCH_FN(geluHook));
    else if (key == "aten::silu") library.impl(name.c_str(), TORCH_FN(siluHook));
    else if (key == "aten::sigmoid") library.impl(name.c_str(), TORCH_FN(sigmoidHook));
    else if (key == "aten::tanh") library.impl(name.c_str(), TORCH_FN(tanhHook));
    else if (key == "aten::add.Tensor") library.impl(name.c_str(), TORCH_FN(addHook));
    else if (key == "aten::sub.Tensor") library.impl(name.c_str(), TORCH_FN(subHook));
    else if (key == "aten::mul.Tensor") library.impl(name.c_str(), TORCH_FN(mulHook));
    else if (key == "aten::div.Tensor") library.impl(name.c_str(), TORCH_FN(divHook));
    else if (key == "aten::add_.Tensor") library.impl(name.c_str(), TORCH_FN(addInPlaceHook));
    else if (key == "aten::sub_.Tensor") library.impl(name.c_str(), TORCH_FN(subInPlaceHook));
    else if (key == "aten::mul_.Tensor") library.impl(name.c_str(), TORCH_FN(mulInPlaceHook));
    else if (key == "aten::div_.Tensor") library.impl(name.c_str(), TORCH_FN(divInPlaceHook));
    else if (key == "aten::mean.dim") library.impl(name.c_str(), TORCH_FN(meanHook));
    else if (key == "aten::sum.dim_IntList") library.impl(name.c_str(), TORCH_FN(sumHook));
    else return false;
    return true;
}

const char* const kHooked[] = {"aten::_softmax",    "aten::_log_softmax", "aten::relu",        "aten::gelu",
                               "aten::silu",        "aten::sigmoid",      "aten::tanh",        "aten::add.Tensor",
                               "aten::sub.Tensor",  "aten::mul.Tensor",   "aten::div.Tensor",  "aten::add_.Tensor",
                               "aten::sub_.Tensor", "aten::mul_.Tensor",  "aten::div_.Tensor", "aten::mean.dim",
                               "aten::sum.dim_IntList"};

} // namespace

bool hookSupported(const core::RuntimeHook& hook)
{
    const std::string key = hookKey(hook);
    for (const char* name : kHooked)
        if (key == name)
            return true;
    return false;
}

void addToRegistry(const core::RuntimeHook& hook, std::unique_ptr<PackagedKernel> kernel)
{
    const std::string key = hookKey(hook);
    g_building.byHook[key].push_back(std::make_shared<Entry>(Entry{key, std::move(kernel)}));
}

std::vector<std::unique_ptr<torch::Library>> registerHooks()
{
    auto library = std::make_unique<torch::Library>(torch::Library::IMPL, "aten",
                                                    std::make_optional(c10::DispatchKey::CUDA), __FILE__, __LINE__);
    for (const auto& [key, entries] : g_building.byHook)
        if (!entries.empty())
            registerOne(*library, key);
    g_registry.store(std::make_shared<const Registry>(std::move(g_building)));
    g_building = Registry{};
    std::vector<std::unique_ptr<torch::Library>> libraries;
    libraries.push_back(std::move(library));
    return libraries;
}

void clearRegistry()
{
    g_building = Registry{};
    g_registry.store(std::make_shared<const Registry>());
    std::lock_guard lock(g_reasonsMutex);
    g_lastReason.clear();
}

nlohmann::json registryStats()
{
    const std::shared_ptr<const Registry> registry = g_registry.load();
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& [key, entries] : registry->byHook)
        for (const std::shared_ptr<Entry>& entry : entries)
            kernels.push_back({{"id", entry->kernel->id()},
                               {"card", entry->kernel->card().id},
                               {"op", entry->kernel->card().qualifiedName()},
                               {"hook", key},
                               {"hits", entry->kernel->hits.load()},
                               {"fallbacks", entry->kernel->fallbacks.load()}});
    nlohmann::json reasons = nlohmann::json::object();
    std::lock_guard lock(g_reasonsMutex);
    for (const auto& [id, reason] : g_lastReason)
        reasons[id] = reason;
    return {{"kernels", kernels}, {"fallback_reasons", reasons}};
}

} // namespace kforge::runtime
