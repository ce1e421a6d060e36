#include "runtime/HostScalars.h"

#include "cast/HostNumbers.h"

#include <c10/cuda/CUDAGraphsC10Utils.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

namespace kforge::runtime {

namespace {

constexpr std::size_t kMaxHostScalars = 256; // distinct (device, dtype, value) copies kept

using Key = std::tuple<int, int, std::uint64_t>; // device, dtype, the value's bytes

struct Cache {
    std::mutex mutex;
    std::map<Key, at::Tensor> copies; // nodes are stable: pointers to values stay valid
};

// Never destroyed: device tensors freed during static destruction would outlive the allocator.
Cache& cache()
{
    static Cache* instance = new Cache();
    return *instance;
}

} // namespace

bool isHostScalarOf(const at::Tensor& t, c10::ScalarType type)
{
    return t.defined() && t.is_cpu() && t.dim() == 0 && t.scalar_type() == type;
}

bool hostScalarComputesAlike(const at::Tensor& t, const std::string& outputDtype)
{
    double value = 0;
    if (t.scalar_type() == c10::ScalarType::Double)
        value = *static_cast<const double*>(t.const_data_ptr());
    else if (t.scalar_type() == c10::ScalarType::Float)
        value = *static_cast<const float*>(t.const_data_ptr());
    else
        return false;
    return core::hostNumberSurvivesRounding(value, outputDtype);
}

const at::Tensor* deviceCopyOfHostScalar(const at::Tensor& hostScalar, int device)
{
    if (hostScalar.element_size() > static_cast<std::int64_t>(sizeof(std::uint64_t)))
        return nullptr; // complex128: not a value the built-in kernels take
    std::uint64_t bits = 0;
    std::memcpy(&bits, hostScalar.const_data_ptr(), static_cast<std::size_t>(hostScalar.element_size()));
    const Key key{device, static_cast<int>(hostScalar.scalar_type()), bits};
    Cache& c = cache();
    std::lock_guard lock(c.mutex);
    if (auto found = c.copies.find(key); found != c.copies.end())
        return &found->second;
    if (c.copies.size() >= kMaxHostScalars)
        return nullptr;
    // A copy made during graph capture would be recorded into the graph, not made now.
    if (c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None)
        return nullptr;
    try {
        // A blocking copy: complete when it returns, so a kernel on any stream may read it.
        at::Tensor copy = hostScalar.to(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(device)),
                                        /*non_blocking=*/false, /*copy=*/true);
        return &c.copies.emplace(key, std::move(copy)).first->second;
    } catch (const std::exception&) {
        return nullptr;
    }
}

} // namespace kforge::runtime
