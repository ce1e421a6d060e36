// The runtime's entry points as custom PyTorch operators, so that Python needs nothing but torch:
//
//   torch.ops.load_library("libkforge_runtime.so")
//   handle = torch.ops.kforge.load_cast("model.cast")   # verifies, then registers the kernels
//   json.loads(torch.ops.kforge.cast_stats())           # per-kernel hits and fallbacks
//   json.loads(torch.ops.kforge.region_kernels())       # loaded region kernels: id and card (chain)
//   torch.ops.kforge.set_kernel_enabled(id, False)      # one kernel ("" = all) off / on again
//   torch.ops.kforge.unload_cast(handle)                # original kernels again
//
// and kforge::region_call (RegionCall.h), which rewritten TorchScript graphs call, and
// kforge::region_module (RegionModule.h), which kforge_runtime.py's TorchScript backend calls.
//
// Errors raise RuntimeError with the loader's one-line message; nothing is registered then.

#include "runtime/CastRuntime.h"
#include "runtime/HookRegistry.h"
#include "runtime/RegionCall.h"
#include "runtime/RegionModule.h"

#include <torch/library.h>

namespace {

int64_t loadCast(c10::string_view path)
{
    auto handle = kforge::runtime::loadPackage(std::string(path));
    TORCH_CHECK(handle.ok(), "kforge: ", handle.ok() ? std::string() : handle.error().toString());
    return handle.value();
}

void unloadCast(int64_t handle)
{
    auto unloaded = kforge::runtime::unloadPackage(static_cast<int>(handle));
    TORCH_CHECK(unloaded.ok(), "kforge: ", unloaded.ok() ? std::string() : unloaded.error().toString());
}

void setKernelEnabled(c10::string_view id, bool enabled)
{
    auto set = kforge::runtime::setKernelEnabled(std::string(id), enabled);
    TORCH_CHECK(set.ok(), "kforge: ", set.ok() ? std::string() : set.error().toString());
}

std::string castStats()
{
    return kforge::runtime::runtimeStats().dump();
}

std::string regionKernels()
{
    return kforge::runtime::registryRegionKernels().dump();
}

} // namespace

TORCH_LIBRARY(kforge, m)
{
    m.def("load_cast(str path) -> int", &loadCast);
    m.def("unload_cast(int handle) -> ()", &unloadCast);
    m.def("cast_stats() -> str", &castStats);
    m.def("region_kernels() -> str", &regionKernels);
    m.def("set_kernel_enabled(str id, bool enabled) -> ()", &setKernelEnabled);
    m.def(kforge::runtime::kRegionCallSchema, &kforge::runtime::regionCall);
    m.def(kforge::runtime::kRegionModuleSchema, &kforge::runtime::regionModule);
}
