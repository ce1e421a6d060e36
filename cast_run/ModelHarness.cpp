#include "ModelHarness.h"

#include "capture/Float64Model.h"
#include "capture/HostScalarConstants.h"
#include "capture/TorchInterop.h"
#include "capture/TorchModel.h"
#include "cast_export/KernelSpeedCheck.h"
#include "checks/ModelAccuracy.h"
#include "checks/OutputComparison.h"
#include "checks/Tolerance.h"
#include "model/InputSpec.h"

#include <ATen/ops/empty.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <utility>

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
        core::keepIntegerScalarConstantsOn(harness.module); // as the capture loads it (TorchModel.cpp)
    } catch (const std::exception& e) {
        return makeError(ErrorCode::BadModel,
                         "cannot load the TorchScript model: " + core::torchinterop::oneLineError(e), name);
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
        const c10::IValue output = core::forwardOpByOp(harness.module, harness.inputs, harness.method);
        core::synchronizeDevice(harness.device);
        result.milliseconds =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
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
    const auto [least, most] = std::minmax_element(milliseconds.begin(), milliseconds.end());
    summary.minMs = *least;
    summary.maxMs = *most;
    summary.medianMs = core::medianOf(std::move(milliseconds));
    return summary;
}

namespace {

// A tensor's values on the host as float64, in logical order.
at::Tensor hostDouble(const at::Tensor& t)
{
    return t.detach().to(at::kDouble).contiguous().cpu();
}

// False, with the reason in `difference`, when the outputs differ in count, shape or dtype.
bool sameStructure(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& expected,
                   OutputDifference& difference)
{
    if (got.size() != expected.size()) {
        difference.withinTolerance = false;
        difference.detail = std::to_string(got.size()) + " outputs, eager gave " + std::to_string(expected.size());
        return false;
    }
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (got[i].sizes() != expected[i].sizes() || got[i].scalar_type() != expected[i].scalar_type()) {
            difference.withinTolerance = false;
            difference.detail = "output " + std::to_string(i) + " has another shape or dtype than eager's";
            return false;
        }
    }
    return true;
}

// Element by element (host float64 values of an output of `dtype`), with the reduction tolerance
// of that dtype (integers exactly).
core::ComparisonResult compareElementwise(const at::Tensor& gotHost, const at::Tensor& expectedHost,
                                          at::ScalarType dtype, core::Tolerance& tolerance)
{
    tolerance = core::toleranceFor(core::torchinterop::dtypeName(dtype), core::OpClass::Reduction);
    return core::compareOutputs(gotHost.data_ptr<double>(), expectedHost.data_ptr<double>(), expectedHost.sizes().vec(),
                                tolerance);
}

} // namespace

OutputDifference compareModelOutputs(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& expected)
{
    OutputDifference difference;
    if (!sameStructure(got, expected, difference))
        return difference;
    for (std::size_t i = 0; i < got.size(); ++i) {
        core::Tolerance tolerance;
        const core::ComparisonResult result =
            compareElementwise(hostDouble(got[i]), hostDouble(expected[i]), expected[i].scalar_type(), tolerance);
        if (difference.tolerance.empty() && !tolerance.exact)
            difference.tolerance = tolerance.describe();
        difference.maxAbsDiff = std::max(difference.maxAbsDiff, result.maxAbsError);
        if (!result.passed && difference.withinTolerance) {
            difference.withinTolerance = false;
            difference.detail = "output " + std::to_string(i) + ": " + result.describe(tolerance);
        }
    }
    return difference;
}

core::Result<std::vector<at::Tensor>> runGoldenForward(ModelHarness& harness)
{
    auto output = core::runModelInFloat64(harness.module, harness.inputs);
    if (!output)
        return output.error();
    std::vector<at::Tensor> outputs;
    try {
        flatten(output.value(), outputs);
        core::synchronizeDevice(harness.device);
        for (at::Tensor& tensor : outputs)
            if (tensor.is_floating_point())
                tensor = tensor.to(at::kDouble);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::BadModel, "the float64 run failed: " + core::torchinterop::oneLineError(e),
                         "in-model check");
    }
    return outputs;
}

OutputDifference compareWithGolden(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& eager,
                                   const std::vector<at::Tensor>& golden)
{
    OutputDifference difference;
    difference.againstFloat64 = true;
    difference.tolerance = "at most " + std::to_string(static_cast<int>(core::kGoldenMultiplier)) +
        "x eager's relative RMSE vs float64, plus one rounding";
    if (!sameStructure(got, eager, difference))
        return difference;
    for (std::size_t i = 0; i < golden.size() || i < eager.size(); ++i) {
        if (i >= golden.size() || i >= eager.size() || golden[i].sizes() != eager[i].sizes()) {
            difference.withinTolerance = false; // the float64 run's outputs are float64: sizes only
            difference.detail = "the float64 run's output " + std::to_string(i) + " does not match eager's";
            return difference;
        }
    }
    for (std::size_t i = 0; i < got.size(); ++i) {
        const at::Tensor& e = eager[i];
        const at::Tensor gd = hostDouble(got[i]);
        const at::Tensor ed = hostDouble(e);
        // The largest difference from eager, and exact equality for outputs that are not floating.
        core::Tolerance tolerance;
        const core::ComparisonResult elementwise = compareElementwise(gd, ed, e.scalar_type(), tolerance);
        difference.maxAbsDiff = std::max(difference.maxAbsDiff, elementwise.maxAbsError);
        if (!e.is_floating_point()) {
            if (!elementwise.passed && difference.withinTolerance) {
                difference.withinTolerance = false;
                difference.detail = "output " + std::to_string(i) + " (not floating) differs from eager's";
            }
            continue;
        }
        const at::Tensor golden64 = hostDouble(golden[i]);
        const std::int64_t n = golden64.numel();
        const double candidateError = core::relativeRmse(gd.data_ptr<double>(), golden64.data_ptr<double>(), n);
        const double eagerError = core::relativeRmse(ed.data_ptr<double>(), golden64.data_ptr<double>(), n);
        const core::GoldenVerdict verdict =
            core::judgeAgainstGolden(candidateError, eagerError, core::torchinterop::dtypeName(e.scalar_type()));
        if (eagerError > 0)
            difference.worstErrorRatio = std::max(difference.worstErrorRatio, candidateError / eagerError);
        if (!verdict.passed && difference.withinTolerance) {
            difference.withinTolerance = false;
            char text[256];
            std::snprintf(text, sizeof text,
                          "output %zu: relative RMSE vs float64 %.3g with the kernels, %.3g eager (bound %.3g)", i,
                          candidateError, eagerError, verdict.bound);
            difference.detail = text;
        }
    }
    return difference;
}

OutputDifference judgeOutputs(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& eager,
                              const core::Result<std::vector<at::Tensor>>& golden)
{
    if (golden)
        return compareWithGolden(got, eager, golden.value());
    OutputDifference difference = compareModelOutputs(got, eager);
    difference.float64Error = golden.error().message;
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
