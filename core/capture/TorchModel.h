#pragma once
// Loading a TorchScript model, building its example inputs and running it, with every LibTorch
// failure turned into one readable Error. Internal to core (includes LibTorch).

#include "model/InputSpec.h"
#include "util/Result.h"

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/module.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kforge::core {

/// Resolves "auto", "cpu", "cuda" or "cuda:N". "auto" picks cuda:0 when a GPU is usable.
Result<c10::Device> resolveDevice(const std::string& requested);

/// "NVIDIA H200" for a CUDA device (when this build links LibTorch's CUDA backend), "cpu" otherwise.
std::string deviceDisplayName(c10::Device device);

/// Loads a TorchScript archive onto `device` in eval mode, its integer scalar constants kept on the
/// host (keepIntegerScalarConstantsOn: shape arithmetic stays off the GPU). Errors: NotFound, BadModel (not a zip,
/// truncated, not TorchScript), each naming the file.
Result<torch::jit::Module> loadTorchScript(const std::filesystem::path& path, c10::Device device);

/// Synthesizes (seeded) or loads the model inputs described by `spec`, on `device`.
Result<std::vector<c10::IValue>> makeInputs(const InputSpec& spec, c10::Device device, std::uint64_t seed);

/// module.<method>(inputs) (forward by default) with TorchScript's graph optimizations off for the call
/// (GraphOptimizerEnabledGuard: per thread, restored after). Every forward pass of a model that is
/// measured or compared goes through here, as the capture's do (CaptureJob): from the second call
/// on, the optimizing executor would specialize the graph and fuse elementwise chains into NNC
/// kernels on CUDA, which eager PyTorch does not run and a .cast's hooks never see (the in-model
/// check and `kforge run` would judge another model than the one captured). Op by op, every aten op
/// goes through the dispatcher as in eager mode.
c10::IValue forwardOpByOp(torch::jit::Module& module, std::vector<c10::IValue> inputs,
                          const std::string& method = "forward");

/// Runs forward once (forwardOpByOp) in InferenceMode and waits for the device. BadInputs when the model rejects
/// the inputs (count, dtype, shape), with the model's own reason.
Result<c10::IValue> runForward(torch::jit::Module& module, const std::vector<c10::IValue>& inputs, c10::Device device);

/// Waits for all work queued on `device`.
void synchronizeDevice(c10::Device device);

} // namespace kforge::core
