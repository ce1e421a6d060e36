#include "ModelHarness.h"

#include "capture/InputSpec.h"
#include "capture/TorchInterop.h"
#include "capture/TorchModel.h"
#include "eval/OutputComparison.h"
#include "eval/Tolerance.h"

#include <ATen/ops/empty.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>

namespace kforge::runtime {

using core::ErrorCode;
using core::makeError;

namespace {

void flatten(const c10::IValue& value, std::vector<at::Tensor>& out)
{
    if (value.isTensor()) {
        out.push_back(value.toTensor());
    } else if (value.isTuple()) {
        for (const c10::IValue& item : value.toTupleRef().elements())
            flatten(item, out);
    } else if (value.isList()) {
        for (const c10::IValue& item : value.toListRef())
            flatten(item, out);
    } else if (value.isGenericDict()) {
        for (const auto& item : value.toGenericDict())
            flatten(item.value(), out);
    }
}

} // namespace

core::Result<ModelHarness> openHarness(const std::string& modelBytes, const std::string& name,
                                       const std::vector<std::string>& inputSpec, std::uint64_t seed)
{
    if (!torch::cuda::is_available())
        return makeError(ErrorCode::Unsupported, "no usable CUDA device on this machine", name);
    ModelHarness harness;
    try {
        std::istringstream stream(modelBytes);
        harness.module = torch::jit::load(stream, harness.device);
        harness.module.eval();
    } catch (const std::exception& e) {
        return makeError(ErrorCode::BadModel, "cannot load the TorchScript model: " + core::torchinterop::oneLineError(e),
                         name);
    }
    auto spec = core::parseInputSpec(inputSpec);
    if (!spec)
        return spec.error();
    auto inputs = core::makeInputs(spec.value(), harness.device, seed);
    if (!inputs)
        return inputs.error();
    harness.inputs = std::move(inputs.value());
    return harness;
}

core::Result<ForwardResult> runTimedForward(ModelHarness& harness)
{
    ForwardResult result;
    try {
        c10::InferenceMode inferenceMode;
        core::synchronizeDevice(harness.device);
        const auto start = std::chrono::steady_clock::now();
        const c10::IValue output = harness.module.forward(harness.inputs);
        core::synchronizeDevice(harness.device);
        result.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        flatten(output, result.outputs);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::BadInputs, "the model failed: " + core::torchinterop::oneLineError(e), "forward");
    }
    return result;
}

LatencySummary summarizeLatency(std::vector<double> milliseconds)
{
    LatencySummary summary;
    if (milliseconds.empty())
        return summary;
    std::sort(milliseconds.begin(), milliseconds.end());
    const std::size_t n = milliseconds.size();
    summary.medianMs = n % 2 ? milliseconds[n / 2] : 0.5 * (milliseconds[n / 2 - 1] + milliseconds[n / 2]);
    summary.minMs = milliseconds.front();
    summary.maxMs = milliseconds.back();
    return summary;
}

OutputDifference compareModelOutputs(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& expected)
{
    OutputDifference difference;
    if (got.size() != expected.size()) {
        difference.withinTolerance = false;
        difference.detail = std::to_string(got.size()) + " outputs, eager gave " + std::to_string(expected.size());
        return difference;
    }
    for (std::size_t i = 0; i < got.size(); ++i) {
        const at::Tensor& g = got[i];
        const at::Tensor& e = expected[i];
        if (g.sizes() != e.sizes() || g.scalar_type() != e.scalar_type()) {
            difference.withinTolerance = false;
            difference.detail = "output " + std::to_string(i) + " has another shape or dtype than eager's";
            return difference;
        }
        const std::string dtype = core::torchinterop::dtypeName(e.scalar_type());
        const core::Tolerance tolerance = core::toleranceFor(dtype, core::OpClass::Reduction);
        if (difference.tolerance.empty() && !tolerance.exact)
            difference.tolerance = tolerance.describe();
        const at::Tensor gd = g.detach().to(at::kDouble).contiguous().cpu();
        const at::Tensor ed = e.detach().to(at::kDouble).contiguous().cpu();
        const core::ComparisonResult result =
            core::compareOutputs(gd.data_ptr<double>(), ed.data_ptr<double>(), e.sizes().vec(), tolerance);
        difference.maxAbsDiff = std::max(difference.maxAbsDiff, result.maxAbsError);
        if (!result.passed && difference.withinTolerance) {
            difference.withinTolerance = false;
            difference.detail = "output " + std::to_string(i) + ": " + result.describe(tolerance);
        }
    }
    return difference;
}

std::vector<std::string> splitInputSpec(const std::string& recorded)
{
    std::error_code ec;
    if (std::filesystem::exists(recorded, ec)) // an inputs file (its path may hold spaces)
        return {recorded};
    std::vector<std::string> values;
    std::istringstream stream(recorded);
    for (std::string value; stream >> value;)
        values.push_back(value);
    return values;
}

} // namespace kforge::runtime
