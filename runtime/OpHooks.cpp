#include "OpHooks.h"

#include "CompositeHooks.h"

#include <ATen/ops/_log_softmax_cuda_dispatch.h>
#include <ATen/ops/_softmax_cuda_dispatch.h>
#include <ATen/ops/add_cuda_dispatch.h>
#include <ATen/ops/cat_cuda_dispatch.h>
#include <ATen/ops/cos_cuda_dispatch.h>
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

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>

#include <c10/util/Exception.h>
#include <c10/util/bit_cast.h>

namespace kforge::runtime {

namespace {

struct Entry {
    std::string hook; // "aten::add.Tensor"
    std::unique_ptr<PackagedKernel> kernel;
    // The signature of the last fallback (0: none yet); its reason is in g_reasonBySignature.
    std::atomic<std::uint64_t> lastFallbackSignature{0};
};

struct Registry {
    std::map<std::string, std::vector<std::shared_ptr<Entry>>, std::less<>> byHook; // string_view lookup
};

// Replaced whole on load and unload; hooks take a snapshot (shared ownership) per call.
std::atomic<std::shared_ptr<const Registry>> g_registry{std::make_shared<const Registry>()};
Registry g_building; // filled by addToRegistry under the load lock, published by registerHooks

// Why a fallback happened, by its signature: each distinct signature's reason is formatted once.
// A model calls a hooked op with many shapes in turn (Gemma s512's add and mul: about 28 misses per
// forward), and even one shape's misses differ in their pointers' alignment (part of the
// signature): formatting a mismatch on every change cost microseconds of host time per call. Bounded: past
// kMostReasonsKept distinct signatures (a model with ever-changing shapes) the map starts again.
std::mutex g_reasonsMutex;
std::unordered_map<std::uint64_t, std::string> g_reasonBySignature;
constexpr std::size_t kMostReasonsKept = 4096;

std::string hookKey(const core::RuntimeHook& hook)
{
    return hook.op + (hook.overload.empty() ? "" : "." + hook.overload);
}

// What distinguishes one fallback from another: the call's tensor metadata and plain values, and
// the kind of fallback (`salt`). Never 0.
std::uint64_t fallbackSignature(const HookCall* call, std::uint64_t salt)
{
    std::uint64_t h = 1469598103934665603ull ^ salt;
    auto mix = [&h](std::uint64_t v) {
        h ^= v;
        h *= 1099511628211ull;
    };
    if (call) {
        for (const auto& [name, t] : call->tensors) {
            if (!t->defined()) {
                mix(0);
                continue;
            }
            mix(static_cast<std::uint64_t>(t->scalar_type()) + 1);
            mix(static_cast<std::uint64_t>(t->get_device()) + 2);
            for (std::int64_t size : t->sizes())
                mix(static_cast<std::uint64_t>(size));
            mix(~0ull);
            for (std::int64_t stride : t->strides())
                mix(static_cast<std::uint64_t>(stride));
            mix(reinterpret_cast<std::uintptr_t>(t->data_ptr()) & 4095);
        }
        for (const auto& [name, v] : call->values) {
            if (v.isInt())
                mix(static_cast<std::uint64_t>(v.toInt()));
            else if (v.isBool())
                mix(v.toBool() ? 3 : 5);
            else if (v.isDouble())
                mix(c10::bit_cast<std::uint64_t>(v.toDouble()));
            else if (v.isIntList())
                for (std::int64_t x : v.toIntList())
                    mix(static_cast<std::uint64_t>(x));
            else if (v.isString())
                mix(std::hash<std::string_view>{}(v.toStringRef()));
            else
                mix(static_cast<std::uint64_t>(v.isNone() ? 7 : 11));
        }
    }
    return h | 1;
}

// Counts a fallback for every kernel of the hook and marks `signature` as its last; `reason` is
// only called when no fallback with this signature was recorded before. The signature must
// determine the reason's text (the call's metadata and which kernel's mismatch is reported).
template <class Reason>
void recordFallbacks(const std::vector<std::shared_ptr<Entry>>& entries, std::uint64_t signature, Reason reason)
{
    for (const std::shared_ptr<Entry>& entry : entries) {
        entry->kernel->fallbacks.fetch_add(1, std::memory_order_relaxed);
        entry->lastFallbackSignature.store(signature, std::memory_order_relaxed);
    }
    {
        std::lock_guard lock(g_reasonsMutex);
        if (g_reasonBySignature.count(signature))
            return;
    }
    std::string text = reason();
    std::lock_guard lock(g_reasonsMutex);
    if (g_reasonBySignature.size() >= kMostReasonsKept)
        g_reasonBySignature.clear();
    g_reasonBySignature.emplace(signature, std::move(text));
}

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

// Registers the hook of `key` ("aten::add.Tensor") on `library` (namespace aten, CUDA key).
bool registerOne(torch::Library& library, const std::string& key)
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
    else
        return false;
    return true;
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
                               "aten::sin"};

} // namespace

std::optional<std::vector<at::Tensor>> serveCall(const char* hook, const HookCall& call)
{
    const std::shared_ptr<const Registry> registry = g_registry.load();
    auto found = registry->byHook.find(std::string_view(hook));
    if (found == registry->byHook.end())
        return std::nullopt;
    const PackagedKernel* firstMismatch = nullptr;
    std::string refused;
    for (const std::shared_ptr<Entry>& entry : found->second) {
        if (!entry->kernel->enabled.load(std::memory_order_relaxed))
            continue;
        if (!entry->kernel->matches(call)) {
            if (!firstMismatch)
                firstMismatch = entry->kernel.get();
            continue;
        }
        auto outputs = entry->kernel->launch(call);
        if (outputs) {
            entry->kernel->hits.fetch_add(1, std::memory_order_relaxed);
            return std::move(outputs.value());
        }
        refused = "launch refused: " + outputs.error().message;
    }
    // The salt names the reason's source: the refusal's text, the kernel whose mismatch is
    // reported, or none enabled.
    const std::uint64_t salt = !refused.empty() ? std::hash<std::string>{}(refused)
        : firstMismatch                         ? reinterpret_cast<std::uintptr_t>(firstMismatch)
                                                : 1;
    const std::uint64_t signature = fallbackSignature(&call, salt);
    recordFallbacks(found->second, signature, [&]() -> std::string {
        if (!refused.empty())
            return refused;
        return firstMismatch ? firstMismatch->mismatch(call) : std::string("disabled");
    });
    return std::nullopt;
}

void countFallback(const char* hook, const std::string& reason)
{
    const std::shared_ptr<const Registry> registry = g_registry.load();
    if (auto found = registry->byHook.find(std::string_view(hook)); found != registry->byHook.end())
        recordFallbacks(found->second, fallbackSignature(nullptr, std::hash<std::string>{}(reason)),
                        [&reason] { return reason; });
}

bool hookSupported(const core::RuntimeHook& hook)
{
    const std::string key = hookKey(hook);
    for (const char* name : kHooked)
        if (key == name)
            return true;
    return compositeHookKnown(key);
}

void addToRegistry(const core::RuntimeHook& hook, std::unique_ptr<PackagedKernel> kernel)
{
    const std::string key = hookKey(hook);
    auto entry = std::make_shared<Entry>();
    entry->hook = key;
    entry->kernel = std::move(kernel);
    g_building.byHook[key].push_back(std::move(entry));
}

namespace {

// The dispatcher warns, once per process, that a kernel overrides the one registered for the same
// operator and dispatch key: what every hook does by design (docs/runtime.md), so the warning only
// alarms the user. Every other warning goes on to the handler that was current before.
class OverrideWarningFilter final : public c10::WarningHandler {
public:
    explicit OverrideWarningFilter(c10::WarningHandler* next) : m_next(next) {}
    void process(const c10::Warning& warning) override
    {
        if (warning.msg().find("Overriding a previously registered kernel") != std::string::npos)
            return;
        if (m_next)
            m_next->process(warning);
        else
            c10::WarningHandler().process(warning);
    }

private:
    c10::WarningHandler* m_next;
};

} // namespace

std::vector<std::unique_ptr<torch::Library>> registerHooks()
{
    OverrideWarningFilter filter(c10::WarningUtils::get_warning_handler());
    const c10::WarningUtils::WarningHandlerGuard quietOverrides(&filter);
    auto library = std::make_unique<torch::Library>(torch::Library::IMPL, "aten",
                                                    std::make_optional(c10::DispatchKey::CUDA), __FILE__, __LINE__);
    auto autograd = std::make_unique<torch::Library>(
        torch::Library::IMPL, "aten", std::make_optional(c10::DispatchKey::AutogradCUDA), __FILE__, __LINE__);
    for (const auto& [key, entries] : g_building.byHook)
        if (!entries.empty() && !registerOne(*library, key))
            registerComposite(*library, *autograd, key);
    g_registry.store(std::make_shared<const Registry>(std::move(g_building)));
    g_building = Registry{};
    std::vector<std::unique_ptr<torch::Library>> libraries;
    libraries.push_back(std::move(library));
    libraries.push_back(std::move(autograd));
    return libraries;
}

bool setRegistryKernelEnabled(const std::string& id, bool enabled)
{
    const std::shared_ptr<const Registry> registry = g_registry.load();
    bool found = false;
    for (const auto& [key, entries] : registry->byHook)
        for (const std::shared_ptr<Entry>& entry : entries)
            if (id.empty() || entry->kernel->id() == id) {
                entry->kernel->enabled.store(enabled, std::memory_order_relaxed);
                found = true;
            }
    return found;
}

void clearRegistry()
{
    g_building = Registry{};
    g_registry.store(std::make_shared<const Registry>());
    std::lock_guard lock(g_reasonsMutex);
    g_reasonBySignature.clear();
}

nlohmann::json registryStats()
{
    const std::shared_ptr<const Registry> registry = g_registry.load();
    nlohmann::json kernels = nlohmann::json::array();
    nlohmann::json reasons = nlohmann::json::object();
    std::lock_guard lock(g_reasonsMutex);
    for (const auto& [key, entries] : registry->byHook)
        for (const std::shared_ptr<Entry>& entry : entries) {
            if (const std::uint64_t last = entry->lastFallbackSignature.load(); last != 0) {
                const auto found = g_reasonBySignature.find(last);
                reasons[entry->kernel->id()] = found != g_reasonBySignature.end()
                    ? found->second
                    : "(not kept: more than " + std::to_string(kMostReasonsKept) + " different fallbacks)";
            }
            kernels.push_back({{"id", entry->kernel->id()},
                               {"card", entry->kernel->card().id},
                               {"op", entry->kernel->card().qualifiedName()},
                               {"hook", key},
                               {"hits", entry->kernel->hits.load()},
                               {"fallbacks", entry->kernel->fallbacks.load()},
                               {"enabled", entry->kernel->enabled.load()}});
        }
    return {{"kernels", kernels}, {"fallback_reasons", reasons}};
}

} // namespace kforge::runtime
