#pragma once
// A candidate's cubin loaded into the current CUDA context, and launches of its kernels with a
// plan's bindings. Internal to the GPU worker (CUDA build only).
// Thread: the thread whose current context is the device's primary context (the worker's only
// thread). The module is unloaded by the destructor.

#include "model/LaunchPlan.h"
#include "util/Result.h"

#include <cuda.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kforge::core {

/// Device addresses and scalar values for one launch of a plan: what each ParamSource resolves to.
struct LaunchBindings {
    std::map<std::string, CUdeviceptr> tensorArgs; // "self", "tensors.2" (list element)
    std::vector<CUdeviceptr> outputs;
    std::map<std::string, CUdeviceptr> scratch;
    std::map<std::string, double> cardValues; // numeric non-tensor card arguments and host numbers
};

class CubinModule {
public:
    /// Loads the cubin and resolves every kernel the plan launches, checking that each receives as
    /// many parameters, of the sizes its signature declares, as the plan passes.
    static Result<CubinModule> load(const std::vector<std::uint8_t>& cubin, const LaunchPlan& plan);
    CubinModule(CubinModule&& other) noexcept;
    CubinModule& operator=(CubinModule&&) = delete;
    CubinModule(const CubinModule&) = delete;
    ~CubinModule();

    /// Enqueues every launch of the plan on `stream`, in order. Errors name the launch.
    Result<void> launch(const LaunchPlan& plan, const LaunchBindings& bindings, CUstream stream) const;

private:
    CubinModule() = default;
    CUmodule m_module = nullptr;
    std::map<std::string, CUfunction> m_functions;
};

/// "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered".
std::string cudaDriverMessage(CUresult result);

} // namespace kforge::core
