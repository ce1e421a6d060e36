#include "runtime/HookRegistry.h"

#include "model/RegionChain.h"
#include "project/ProjectJson.h"

#include <atomic>
#include <map>
#include <mutex>
#include <string_view>
#include <unordered_map>

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
Registry g_building; // filled by addToRegistry under the load lock, served after publishRegistry

// Why a fallback happened, by its signature: each distinct signature's reason is formatted once.
// A model calls a hooked op with many shapes in turn (Gemma s512's add and mul: about 28 misses per
// forward), and even one shape's misses differ in their pointers' alignment (part of the
// signature): formatting a mismatch on every change cost microseconds of host time per call. Bounded: past
// kMostReasonsKept distinct signatures (a model with ever-changing shapes) the map starts again.
std::mutex g_reasonsMutex;
std::unordered_map<std::uint64_t, std::string> g_reasonBySignature;
constexpr std::size_t kMostReasonsKept = 4096;

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

} // namespace

std::string hookKey(const core::RuntimeHook& hook)
{
    return hook.op + (hook.overload.empty() ? "" : "." + hook.overload);
}

namespace {

// A tensor with no data of its own: torch.compile traces a model with fake and functional tensors,
// which reach a composite operator's hook (its CompositeImplicitAutograd kernel runs before the
// Python dispatch key). Such a call is a trace, not a run: the original traces it and no fallback
// is counted. A tensor subclass with its own dispatch (the Python key) keeps its semantics too.
bool tracedOrSubclassTensor(const HookCall& call)
{
    for (const auto& [name, tensor] : call.tensors)
        if (tensor && tensor->defined() &&
            (tensor->unsafeGetTensorImpl()->is_python_dispatch() ||
             tensor->key_set().has(c10::DispatchKey::Functionalize)))
            return true;
    return false;
}

// The first of `entries` whose guard and baked-in arguments match serves the call; otherwise every
// one of them counts a fallback, with the reason.
std::optional<std::vector<at::Tensor>> serveFrom(const std::vector<std::shared_ptr<Entry>>& entries,
                                                 const HookCall& call)
{
    const PackagedKernel* firstMismatch = nullptr;
    std::string refused;
    for (const std::shared_ptr<Entry>& entry : entries) {
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
    recordFallbacks(entries, signature, [&]() -> std::string {
        if (!refused.empty())
            return refused;
        return firstMismatch ? firstMismatch->mismatch(call) : std::string("disabled");
    });
    return std::nullopt;
}

// The region kernels named by `kernelIds`, in that order, from `registry`.
std::vector<std::shared_ptr<Entry>> regionEntries(const Registry& registry, const std::vector<std::string>& kernelIds)
{
    std::vector<std::shared_ptr<Entry>> named;
    const auto found = registry.byHook.find(std::string_view(core::kRegionOp));
    if (found == registry.byHook.end())
        return named;
    for (const std::string& id : kernelIds)
        for (const std::shared_ptr<Entry>& entry : found->second)
            if (entry->kernel->id() == id)
                named.push_back(entry);
    return named;
}

} // namespace

std::optional<std::vector<at::Tensor>> serveCall(const char* hook, const HookCall& call)
{
    const std::shared_ptr<const Registry> registry = g_registry.load();
    auto found = registry->byHook.find(std::string_view(hook));
    if (found == registry->byHook.end() || tracedOrSubclassTensor(call))
        return std::nullopt;
    return serveFrom(found->second, call);
}

std::optional<std::vector<at::Tensor>> serveRegionCall(const std::vector<std::string>& kernelIds, const HookCall& call)
{
    const std::shared_ptr<const Registry> registry = g_registry.load();
    const std::vector<std::shared_ptr<Entry>> named = regionEntries(*registry, kernelIds);
    if (named.empty() || tracedOrSubclassTensor(call))
        return std::nullopt; // none of them loaded (no package, or another one): nothing to count
    return serveFrom(named, call);
}

void countRegionFallback(const std::vector<std::string>& kernelIds, const std::string& reason)
{
    const std::shared_ptr<const Registry> registry = g_registry.load();
    const std::vector<std::shared_ptr<Entry>> named = regionEntries(*registry, kernelIds);
    if (!named.empty())
        recordFallbacks(named, fallbackSignature(nullptr, std::hash<std::string>{}(reason)),
                        [&reason] { return reason; });
}

void countFallback(const char* hook, const std::string& reason)
{
    const std::shared_ptr<const Registry> registry = g_registry.load();
    if (auto found = registry->byHook.find(std::string_view(hook)); found != registry->byHook.end())
        recordFallbacks(found->second, fallbackSignature(nullptr, std::hash<std::string>{}(reason)),
                        [&reason] { return reason; });
}

void addToRegistry(const core::RuntimeHook& hook, std::unique_ptr<PackagedKernel> kernel)
{
    const std::string key = hookKey(hook);
    auto entry = std::make_shared<Entry>();
    entry->hook = key;
    entry->kernel = std::move(kernel);
    g_building.byHook[key].push_back(std::move(entry));
}

std::vector<std::string> pendingHookKeys()
{
    std::vector<std::string> keys;
    for (const auto& [key, entries] : g_building.byHook)
        if (!entries.empty())
            keys.push_back(key);
    return keys;
}

void publishRegistry()
{
    g_registry.store(std::make_shared<const Registry>(std::move(g_building)));
    g_building = Registry{};
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

nlohmann::json registryRegionKernels()
{
    const std::shared_ptr<const Registry> registry = g_registry.load();
    nlohmann::json kernels = nlohmann::json::array();
    if (const auto found = registry->byHook.find(std::string_view(core::kRegionOp)); found != registry->byHook.end())
        for (const std::shared_ptr<Entry>& entry : found->second)
            kernels.push_back({{"id", entry->kernel->id()}, {"card", core::toJson(entry->kernel->card())}});
    return kernels;
}

} // namespace kforge::runtime
