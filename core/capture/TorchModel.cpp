#include "capture/TorchModel.h"

#include "capture/HostScalarConstants.h"
#include "capture/TorchInterop.h"
#include "util/AtomicFile.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/cuda.h>
#include <torch/serialize.h>

#include <fstream>

#ifdef KFORGE_TORCH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace kforge::core {
namespace fs = std::filesystem;

namespace {

bool hasZipMagic(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    in.read(magic, 4);
    return in.gcount() == 4 && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4;
}

Result<at::Tensor> synthesize(const ShapeSpec& shape, c10::Device device, at::Generator& generator)
{
    c10::ScalarType dtype;
    if (!torchinterop::scalarTypeFromName(shape.dtype, dtype))
        return makeError(ErrorCode::Unsupported, "dtype '" + shape.dtype + "' cannot be synthesized", shape.toString());
    const auto cpuLong = at::TensorOptions().dtype(at::kLong);
    const auto cpuDouble = at::TensorOptions().dtype(at::kDouble);
    at::Tensor tensor;
    if (shape.dtype == "bool") {
        tensor = at::randint(0, 2, shape.sizes, generator, cpuLong);
    } else if (isFloatingDtype(shape.dtype)) {
        tensor = shape.low ? at::rand(shape.sizes, generator, cpuDouble) * (*shape.high - *shape.low) + *shape.low
                           : at::randn(shape.sizes, generator, cpuDouble);
    } else {
        const auto low = static_cast<std::int64_t>(shape.low.value_or(0));
        const auto high = static_cast<std::int64_t>(shape.high.value_or(10));
        tensor = at::randint(low, high, shape.sizes, generator, cpuLong);
    }
    // Generated on the CPU in double so the values are the same on every device and dtype.
    return tensor.to(dtype).to(device);
}

Result<std::vector<c10::IValue>> loadInputsFile(const fs::path& path, c10::Device device)
{
    auto bytes = readWholeFile(path);
    if (!bytes)
        return bytes.error();
    c10::IValue loaded;
    try {
        loaded = torch::pickle_load(std::vector<char>(bytes->begin(), bytes->end()));
    } catch (const std::exception& e) {
        return makeError(ErrorCode::BadInputs, "not a torch.save file of tensors: " + torchinterop::oneLineError(e),
                         path.string());
    }
    std::vector<c10::IValue> items;
    if (loaded.isTensor())
        items.push_back(loaded);
    else if (loaded.isTuple())
        items = loaded.toTupleRef().elements().vec();
    else if (loaded.isList())
        items = loaded.toListRef().vec();
    else
        return makeError(ErrorCode::BadInputs, "expected a tensor or a tuple/list of tensors", path.string());
    for (size_t i = 0; i < items.size(); ++i) {
        if (!items[i].isTensor())
            return makeError(ErrorCode::BadInputs, "input " + std::to_string(i) + " is not a tensor", path.string());
        items[i] = items[i].toTensor().to(device);
    }
    return items;
}

} // namespace

Result<c10::Device> resolveDevice(const std::string& requested)
{
    const bool cudaUsable = torch::cuda::is_available();
    if (requested == "auto")
        return cudaUsable ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
    if (requested == "cpu")
        return c10::Device(c10::kCPU);
    if (requested == "cuda" || requested.starts_with("cuda:")) {
        if (!cudaUsable)
#ifdef KFORGE_TORCH_CUDA
            return makeError(ErrorCode::Unsupported, "no usable CUDA device on this machine", "--device " + requested);
#else
            return makeError(ErrorCode::Unsupported,
                             "this build has no CUDA backend (configure with -DKFORGE_TORCH_CUDA=ON on a GPU machine)",
                             "--device " + requested);
#endif
        try {
            c10::Device device(requested == "cuda" ? std::string("cuda:0") : requested);
            if (device.index() >= static_cast<int>(torch::cuda::device_count()))
                return makeError(ErrorCode::InvalidArgument, "no such CUDA device", "--device " + requested);
            return device;
        } catch (const std::exception&) {
        }
    }
    return makeError(ErrorCode::InvalidArgument, "expected auto, cpu, cuda or cuda:N", "--device " + requested);
}

std::string deviceDisplayName(c10::Device device)
{
#ifdef KFORGE_TORCH_CUDA
    if (device.is_cuda())
        return at::cuda::getDeviceProperties(device.index())->name;
#endif
    return device.is_cuda() ? std::string("CUDA device") : std::string("cpu");
}

Result<torch::jit::Module> loadTorchScript(const fs::path& path, c10::Device device)
{
    std::error_code ec;
    if (!fs::exists(path, ec))
        return makeError(ErrorCode::NotFound, "no such model file", path.string());
    if (!fs::is_regular_file(path, ec))
        return makeError(ErrorCode::BadModel, "not a regular file", path.string());
    if (!hasZipMagic(path))
        return makeError(ErrorCode::BadModel, "not a TorchScript file (not a zip archive)", path.string());
    try {
        torch::jit::Module module = torch::jit::load(path.string(), device);
        module.eval();
        keepIntegerScalarConstantsOn(module);
        if (!module.find_method("forward"))
            return makeError(ErrorCode::BadModel, "TorchScript module has no forward method", path.string());
        return module;
    } catch (const std::exception& e) {
        const std::string reason = torchinterop::oneLineError(e);
        // A readable zip without TorchScript code: most often a torch.save checkpoint.
        if (reason.find("constants.pkl") != std::string::npos || reason.find("code/") != std::string::npos)
            return makeError(ErrorCode::BadModel,
                             "not a TorchScript model (saved with torch.save instead of torch.jit.save?)",
                             path.string());
        if (reason.find("central directory") != std::string::npos || reason.find("zip archive") != std::string::npos ||
            reason.find("PytorchStreamReader") != std::string::npos)
            return makeError(ErrorCode::BadModel, "truncated or corrupt archive", path.string());
        return makeError(ErrorCode::BadModel, "cannot load TorchScript: " + reason, path.string());
    }
}

Result<std::vector<c10::IValue>> makeInputs(const InputSpec& spec, c10::Device device, std::uint64_t seed)
{
    try {
        if (spec.file)
            return loadInputsFile(*spec.file, device);
        at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
        std::vector<c10::IValue> inputs;
        for (const ShapeSpec& shape : spec.shapes) {
            auto tensor = synthesize(shape, device, generator);
            if (!tensor)
                return tensor.error();
            inputs.emplace_back(tensor.value());
        }
        return inputs;
    } catch (const std::exception& e) {
        return makeError(ErrorCode::BadInputs, "cannot build inputs: " + torchinterop::oneLineError(e),
                         spec.toString());
    }
}

c10::IValue forwardOpByOp(torch::jit::Module& module, std::vector<c10::IValue> inputs, const std::string& method)
{
    torch::jit::GraphOptimizerEnabledGuard opByOp(false);
    if (method == "forward")
        return module.forward(std::move(inputs));
    return module.get_method(method)(std::move(inputs));
}

Result<c10::IValue> runForward(torch::jit::Module& module, const std::vector<c10::IValue>& inputs, c10::Device device)
{
    try {
        c10::InferenceMode inferenceMode;
        c10::IValue output = forwardOpByOp(module, inputs);
        synchronizeDevice(device);
        return output;
    } catch (const std::exception& e) {
        return makeError(ErrorCode::BadInputs, "the model rejected the inputs: " + torchinterop::oneLineError(e),
                         "forward");
    }
}

void synchronizeDevice(c10::Device device)
{
    if (device.is_cuda())
        torch::cuda::synchronize(device.index());
}

} // namespace kforge::core
