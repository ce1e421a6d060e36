#include "runtime/CastRuntime.h"

#include "cast/CastReader.h"
#include "cast/RuntimeOps.h"
#include "runtime/HookRegistration.h"
#include "runtime/HookRegistry.h"
#include "runtime/PackagedKernel.h"
#include "runtime/RegionMethod.h"

#include <ATen/cuda/CUDAContext.h>
#include <torch/library.h>
#include <torch/version.h>

#include <memory>
#include <mutex>

namespace kforge::runtime {

using core::ErrorCode;
using core::makeError;

namespace {

struct LoadedPackage {
    int handle = 0;
    std::string path;
    std::vector<core::RegionKernelChain> regionKernels;     // for models prepared after the load
    std::vector<std::unique_ptr<torch::Library>> libraries; // destroying one restores the original
};

std::mutex g_mutex; // guards g_loaded and the registry's contents during load/unload
std::unique_ptr<LoadedPackage> g_loaded;
int g_nextHandle = 1;

} // namespace

core::Result<int> loadPackage(const std::string& path)
{
    {
        std::lock_guard lock(g_mutex);
        if (g_loaded)
            return makeError(ErrorCode::AlreadyExists,
                             "a package is already loaded (" + g_loaded->path + "): unload it first", path);
    }
    auto package = core::openCast(path);
    if (!package)
        return package.error();
    return loadOpenedPackage(package.value(), path);
}

core::Result<int> loadOpenedPackage(const core::CastPackage& package, const std::string& path)
{
    std::lock_guard lock(g_mutex);
    if (g_loaded)
        return makeError(ErrorCode::AlreadyExists,
                         "a package is already loaded (" + g_loaded->path + "): unload it first", path);
    const int device = at::cuda::current_device();
    const cudaDeviceProp* props = at::cuda::getDeviceProperties(device);
    const std::string arch = "sm_" + std::to_string(props->major) + std::to_string(props->minor);
    if (auto compatible = core::checkCompatibility(package, arch, TORCH_VERSION, ""); !compatible)
        return compatible.error();

    // Every custom kernel loads before anything is registered: a package loads whole or not at all.
    std::vector<std::pair<core::RuntimeHook, std::unique_ptr<PackagedKernel>>> kernels;
    for (const core::CastKernel& kernel : package.kernels) {
        if (kernel.kind != core::KernelKind::Custom)
            continue;
        std::string why;
        auto hook = core::runtimeHookFor(kernel.op + (kernel.overload.empty() ? "" : "." + kernel.overload), why);
        if (!hook)
            return makeError(ErrorCode::Unsupported, "kernel " + kernel.id + ": " + why, path);
        if (!hookSupported(*hook))
            return makeError(ErrorCode::Unsupported, "kernel " + kernel.id + ": no hook for " + hook->op, path);
        auto loaded = PackagedKernel::load(kernel, arch, device);
        if (!loaded)
            return makeError(loaded.error().code, loaded.error().toString(), path);
        kernels.emplace_back(*hook, std::move(loaded.value()));
    }
    auto regionKernels = regionKernelChains(package);
    if (!regionKernels)
        return makeError(regionKernels.error().code, regionKernels.error().toString(), path);
    auto loadedPackage = std::make_unique<LoadedPackage>();
    loadedPackage->handle = g_nextHandle++;
    loadedPackage->path = path;
    loadedPackage->regionKernels = std::move(regionKernels.value());
    try {
        for (auto& [hook, kernel] : kernels)
            addToRegistry(hook, std::move(kernel));
        loadedPackage->libraries = registerHooks();
    } catch (const std::exception& e) {
        loadedPackage->libraries.clear();
        clearRegistry();
        return makeError(ErrorCode::Internal, std::string("registering the dispatcher hooks failed: ") + e.what(),
                         path);
    }
    const int handle = loadedPackage->handle;
    g_loaded = std::move(loadedPackage);
    return handle;
}

core::Result<void> unloadPackage(int handle)
{
    std::lock_guard lock(g_mutex);
    if (!g_loaded || g_loaded->handle != handle)
        return makeError(ErrorCode::NotFound, "no loaded package with handle " + std::to_string(handle), "unload");
    g_loaded->libraries.clear(); // the original kernels serve every call from here on
    clearRegistry();
    g_loaded.reset();
    return {};
}

core::Result<void> setKernelEnabled(const std::string& id, bool enabled)
{
    std::lock_guard lock(g_mutex);
    if (!g_loaded)
        return makeError(ErrorCode::NotFound, "no package is loaded", "kernel " + id);
    if (!setRegistryKernelEnabled(id, enabled) && !id.empty())
        return makeError(ErrorCode::NotFound, "the loaded package has no custom kernel " + id, g_loaded->path);
    return {};
}

core::Result<std::vector<core::RegionKernelChain>> loadedRegionKernels()
{
    std::lock_guard lock(g_mutex);
    if (!g_loaded)
        return makeError(ErrorCode::NotFound, "no package is loaded", "region kernels");
    return g_loaded->regionKernels;
}

nlohmann::json runtimeStats()
{
    std::lock_guard lock(g_mutex);
    nlohmann::json stats = registryStats();
    stats["package"] = g_loaded ? nlohmann::json(g_loaded->path) : nlohmann::json(nullptr);
    return stats;
}

} // namespace kforge::runtime
