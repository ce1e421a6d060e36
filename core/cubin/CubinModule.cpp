#include "cubin/CubinModule.h"

#include <cstring>
#include <variant>

namespace kforge::core {
namespace {

size_t paramSize(ParamType type)
{
    switch (type) {
    case ParamType::Pointer:
        return sizeof(CUdeviceptr);
    case ParamType::I32:
        return sizeof(std::int32_t);
    case ParamType::I64:
        return sizeof(std::int64_t);
    case ParamType::U32:
        return sizeof(std::uint32_t);
    case ParamType::U64:
        return sizeof(std::uint64_t);
    case ParamType::F32:
        return sizeof(float);
    case ParamType::F64:
        return sizeof(double);
    }
    return 0;
}

std::string kernelNames(CUmodule module)
{
    unsigned int count = 0;
    if (cuModuleGetFunctionCount(&count, module) != CUDA_SUCCESS || count == 0)
        return "none";
    std::vector<CUfunction> functions(count);
    if (cuModuleEnumerateFunctions(functions.data(), count, module) != CUDA_SUCCESS)
        return "unknown";
    std::string names;
    for (CUfunction function : functions) {
        const char* name = nullptr;
        if (cuFuncGetName(&name, function) == CUDA_SUCCESS && name)
            names += (names.empty() ? "" : ", ") + std::string(name);
    }
    return names;
}

// Parameters are kept in 8-byte slots; cuLaunchKernel reads paramSize(type) bytes from each.
using Slot = std::uint64_t;

Result<Slot> resolve(const KernelParam& param, const LaunchBindings& bindings)
{
    Slot slot = 0;
    auto pointer = [&](CUdeviceptr value) {
        std::memcpy(&slot, &value, sizeof value);
        return slot;
    };
    switch (param.source) {
    case ParamSource::TensorArg: {
        const std::string key = param.index >= 0 ? param.name + "." + std::to_string(param.index) : param.name;
        auto found = bindings.tensorArgs.find(key);
        if (found == bindings.tensorArgs.end())
            return makeError(ErrorCode::InvalidArgument, "no tensor bound for '" + key + "'", param.token);
        return pointer(found->second);
    }
    case ParamSource::Output:
        if (param.index >= static_cast<int>(bindings.outputs.size()))
            return makeError(ErrorCode::InvalidArgument, "no such output", param.token);
        return pointer(bindings.outputs[param.index]);
    case ParamSource::Scratch: {
        auto found = bindings.scratch.find(param.name);
        if (found == bindings.scratch.end())
            return makeError(ErrorCode::InvalidArgument, "no such scratch buffer", param.token);
        return pointer(found->second);
    }
    case ParamSource::CardValue:
    case ParamSource::Literal: {
        double value = param.literal;
        if (param.source == ParamSource::CardValue) {
            auto found = bindings.cardValues.find(param.name);
            if (found == bindings.cardValues.end())
                return makeError(ErrorCode::InvalidArgument, "no numeric card argument '" + param.name + "'",
                                 param.token);
            value = found->second;
        }
        switch (param.type) {
        case ParamType::I32: {
            auto v = static_cast<std::int32_t>(value);
            std::memcpy(&slot, &v, sizeof v);
            break;
        }
        case ParamType::I64: {
            auto v = static_cast<std::int64_t>(value);
            std::memcpy(&slot, &v, sizeof v);
            break;
        }
        case ParamType::U32: {
            auto v = static_cast<std::uint32_t>(value);
            std::memcpy(&slot, &v, sizeof v);
            break;
        }
        case ParamType::U64: {
            auto v = static_cast<std::uint64_t>(value);
            std::memcpy(&slot, &v, sizeof v);
            break;
        }
        case ParamType::F32: {
            auto v = static_cast<float>(value);
            std::memcpy(&slot, &v, sizeof v);
            break;
        }
        case ParamType::F64: {
            std::memcpy(&slot, &value, sizeof value);
            break;
        }
        case ParamType::Pointer:
            break;
        }
        return slot;
    }
    }
    return slot;
}

} // namespace

std::string cudaDriverMessage(CUresult result)
{
    const char* name = nullptr;
    const char* text = nullptr;
    cuGetErrorName(result, &name);
    cuGetErrorString(result, &text);
    return std::string(name ? name : "CUDA_ERROR") + ": " + (text ? text : "unknown error");
}

Result<CubinModule> CubinModule::load(const std::vector<std::uint8_t>& cubin, const LaunchPlan& plan)
{
    CubinModule module;
    if (CUresult r = cuModuleLoadData(&module.m_module, cubin.data()); r != CUDA_SUCCESS)
        return makeError(ErrorCode::InvalidArgument, "cannot load the cubin: " + cudaDriverMessage(r), "candidate");
    for (size_t i = 0; i < plan.launches.size(); ++i) {
        const KernelLaunch& launch = plan.launches[i];
        const std::string where = "launches[" + std::to_string(i) + "] (" + launch.kernel + ")";
        if (module.m_functions.count(launch.kernel) == 0) {
            CUfunction function = nullptr;
            CUresult r = cuModuleGetFunction(&function, module.m_module, launch.kernel.c_str());
            if (r == CUDA_ERROR_NOT_FOUND)
                return makeError(ErrorCode::InvalidArgument,
                                 "no kernel named '" + launch.kernel + "' in the source (kernels: " +
                                     kernelNames(module.m_module) + "; declare it extern \"C\" __global__)",
                                 where);
            if (r != CUDA_SUCCESS)
                return makeError(ErrorCode::InvalidArgument, cudaDriverMessage(r), where);
            module.m_functions[launch.kernel] = function;
        }
        CUfunction function = module.m_functions[launch.kernel];
        // The signature: parameter i exists and has the size of the plan's type.
        for (size_t p = 0;; ++p) {
            size_t offset = 0;
            size_t size = 0;
            const bool exists = cuFuncGetParamInfo(function, p, &offset, &size) == CUDA_SUCCESS;
            if (!exists) {
                if (p != launch.params.size())
                    return makeError(ErrorCode::InvalidArgument,
                                     "the kernel takes " + std::to_string(p) + " parameter(s); the plan passes " +
                                         std::to_string(launch.params.size()),
                                     where);
                break;
            }
            if (p >= launch.params.size())
                continue; // counted above when the loop ends
            if (size != paramSize(launch.params[p].type))
                return makeError(ErrorCode::InvalidArgument,
                                 "parameter " + std::to_string(p) + " is " + std::to_string(size) +
                                     " bytes in the kernel but '" + launch.params[p].token + "' passes " +
                                     std::to_string(paramSize(launch.params[p].type)),
                                 where);
        }
        if (launch.sharedBytes > 48 * 1024) {
            CUresult r = cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            static_cast<int>(launch.sharedBytes));
            if (r != CUDA_SUCCESS)
                return makeError(ErrorCode::InvalidArgument,
                                 "cannot allow " + std::to_string(launch.sharedBytes) +
                                     " bytes of dynamic shared memory: " + cudaDriverMessage(r),
                                 where);
        }
    }
    return module;
}

CubinModule::CubinModule(CubinModule&& other) noexcept
    : m_module(other.m_module), m_functions(std::move(other.m_functions))
{
    other.m_module = nullptr;
}

CubinModule::~CubinModule()
{
    if (m_module)
        cuModuleUnload(m_module);
}

Result<void> CubinModule::launch(const LaunchPlan& plan, const LaunchBindings& bindings, CUstream stream) const
{
    for (size_t i = 0; i < plan.launches.size(); ++i) {
        const KernelLaunch& launch = plan.launches[i];
        std::vector<Slot> slots;
        slots.reserve(launch.params.size());
        for (const KernelParam& param : launch.params) {
            auto slot = resolve(param, bindings);
            if (!slot)
                return slot.error();
            slots.push_back(slot.value());
        }
        std::vector<void*> pointers;
        for (Slot& slot : slots)
            pointers.push_back(&slot);
        CUresult r = cuLaunchKernel(m_functions.at(launch.kernel), launch.grid[0], launch.grid[1], launch.grid[2],
                                    launch.block[0], launch.block[1], launch.block[2], launch.sharedBytes, stream,
                                    pointers.empty() ? nullptr : pointers.data(), nullptr);
        if (r != CUDA_SUCCESS)
            return makeError(ErrorCode::InvalidArgument, "launch failed: " + cudaDriverMessage(r),
                             "launches[" + std::to_string(i) + "] (" + launch.kernel + ")");
    }
    return {};
}

} // namespace kforge::core
