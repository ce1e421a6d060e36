#pragma once
// Running a whole TorchScript model for `kforge run` and export's in-model check: load it (from a
// package's bytes or a file) on the current CUDA device, build its inputs, run and time forward
// passes, and compare outputs with a reference. LibTorch inside; used only by CUDA builds.

#include "RunSummary.h"
#include "util/Result.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/module.h>

#include <string>
#include <vector>

namespace kforge::runtime {

struct ModelHarness {
    torch::jit::Module module;
    std::vector<c10::IValue> inputs;
    c10::Device device{c10::kCUDA, 0};
    std::string method = "forward";       // the method a forward pass runs now
    std::string regionMethod = "forward"; // the one to run with a package loaded (RegionMethod.h)
};

/// The model (TorchScript bytes, `name` for errors) and its inputs (`inputSpec`: the --inputs
/// values, an inputs file or shape specs synthesized with `seed`) on cuda:0. Errors: no CUDA
/// device, a bad model, bad inputs.
core::Result<ModelHarness> openHarness(const std::string& modelBytes, const std::string& name,
                                       const std::vector<std::string>& inputSpec, std::uint64_t seed);

/// One forward pass (InferenceMode) and a device synchronize: the outputs flattened to tensors
/// (a tensor, or the tensors of nested tuples, lists and dict values in order) and the wall time.
struct ForwardResult {
    std::vector<at::Tensor> outputs;
    double milliseconds = 0;
};
core::Result<ForwardResult> runTimedForward(ModelHarness& harness);

LatencySummary summarizeLatency(std::vector<double> milliseconds);

/// How far `got` is from `expected` (same structure): the largest absolute difference, and whether
/// every element is within the tolerance of a reduction in its dtype (core/checks/Tolerance.h; a whole
/// model is a chain of reductions), integers exactly.
OutputDifference compareModelOutputs(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& expected);

/// The model run in float64 (core/capture/Float64Model.h: parameters, floating inputs and the dtypes
/// the trace baked in all float64): the outputs, flattened, as float64 for the floating ones. An
/// error when the model does not run in float64.
core::Result<std::vector<at::Tensor>> runGoldenForward(ModelHarness& harness);

/// Like compareModelOutputs, but judged against the float64 outputs (core/checks/ModelAccuracy.h):
/// every floating output of `got` may be at most twice as far from `golden` as `eager` is, plus
/// one rounding of its dtype; other outputs must equal eager's. `detail` names the first output
/// that is not, with both errors.
OutputDifference compareWithGolden(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& eager,
                                   const std::vector<at::Tensor>& golden);

/// compareWithGolden when the float64 run worked, else compareModelOutputs with `float64Error`
/// saying why it did not.
OutputDifference judgeOutputs(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& eager,
                              const core::Result<std::vector<at::Tensor>>& golden);

/// Splits a capture's recorded inputs ("8x3x224x224:float16 8x10:int64") into --inputs values.
std::vector<std::string> splitInputSpec(const std::string& recorded);

} // namespace kforge::runtime
