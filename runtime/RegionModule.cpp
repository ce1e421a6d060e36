#include "runtime/RegionModule.h"

#include "runtime/CastRuntime.h"
#include "runtime/RegionMethod.h"

#include "capture/TorchInterop.h"

#include <ATen/ops/empty.h>
#include <torch/csrc/jit/serialization/import.h>

#include <cstring>
#include <sstream>

namespace kforge::runtime {

std::tuple<at::Tensor, std::string> regionModule(const at::Tensor& model)
{
    TORCH_CHECK(model.scalar_type() == at::kByte && model.dim() == 1 && model.is_cpu(),
                "kforge: region_module takes the saved module as a 1-D uint8 CPU tensor");
    auto kernels = loadedRegionKernels();
    TORCH_CHECK(kernels.ok(), "kforge: ", kernels.ok() ? std::string() : kernels.error().toString());
    const at::Tensor bytes = model.contiguous();
    std::istringstream in(std::string(reinterpret_cast<const char*>(bytes.data_ptr()), bytes.numel()));
    torch::jit::Module module;
    try {
        module = torch::jit::load(in);
    } catch (const std::exception& e) {
        TORCH_CHECK(false,
                    "kforge: region_module: not a saved TorchScript module: ", core::torchinterop::oneLineError(e));
    }
    auto prepared = prepareRegionMethod(module, kernels.value());
    TORCH_CHECK(prepared.ok(), "kforge: ", prepared.ok() ? std::string() : prepared.error().toString());
    std::ostringstream out;
    module.save(out);
    const std::string saved = out.str();
    at::Tensor result = at::empty({static_cast<std::int64_t>(saved.size())}, at::TensorOptions().dtype(at::kByte));
    std::memcpy(result.data_ptr(), saved.data(), saved.size());
    return {result, prepared->toJson().dump()};
}

} // namespace kforge::runtime
