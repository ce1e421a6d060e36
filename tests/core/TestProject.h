#pragma once
// A project built from value types only, with every field set, for store and round-trip tests.

#include "model/Project.h"

namespace kforge::core::test {

inline Project makeFixtureProject()
{
    Project project;
    CaptureInfo& info = project.capture;
    info.modelPath = "/models/m.pt";
    info.modelSha = "0123456789abcdef";
    info.inputs = "8x512:bfloat16";
    info.device = "cuda:0";
    info.deviceName = "NVIDIA H200";
    info.torchVersion = "2.11.0";
    info.kforgeVersion = "0.1.0";
    info.createdUtc = "2026-11-29T12:00:00Z";
    info.totalCalls = 3;
    info.ignoredCalls = 1;
    info.samplesPerCard = 2;
    info.sampleBudgetBytes = 1 << 20;

    OperatorCard softmax;
    ArgSpec self;
    self.name = "self";
    self.type = "Tensor";
    self.kind = ArgKind::Tensor;
    self.tensors.push_back(TensorSpec{"bfloat16", {8, 512}, {512, 1}, "cuda:0"});
    ArgSpec dim;
    dim.name = "dim";
    dim.type = "int";
    dim.kind = ArgKind::Value;
    dim.value = -1;
    ArgSpec dtype;
    dtype.name = "dtype";
    dtype.type = "ScalarType?";
    dtype.kind = ArgKind::None;
    softmax.op = "aten::softmax";
    softmax.overload = "int";
    softmax.schema = "aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor";
    softmax.args = {self, dim, dtype};
    softmax.key = variantKey(softmax.op, softmax.overload, softmax.args);
    softmax.id = cardIdForKey(softmax.key);
    softmax.outputs = {TensorSpec{"bfloat16", {8, 512}, {512, 1}, "cuda:0"}};
    softmax.callCount = 2;
    softmax.callPositions = {0, 2};
    softmax.samples = {SampleRef{0, "samples/x/call-0.pt", 16384}};
    softmax.samplesNote = "sample budget exhausted (raise --sample-budget-mb)";
    softmax.eager = EagerTiming{"cuda:0 (NVIDIA H200)", "cuda-events, L2 flushed", 3.25, 3.0, 3.5, 40};
    softmax.timeShare = 0.8125;

    OperatorCard linear;
    ArgSpec input = self;
    input.name = "input";
    ArgSpec weight = self;
    weight.name = "weight";
    weight.tensors = {TensorSpec{"bfloat16", {512, 512}, {1, 512}, "cuda:0"}};
    linear.op = "aten::linear";
    linear.schema = "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor";
    linear.args = {input, weight};
    linear.key = variantKey(linear.op, linear.overload, linear.args);
    linear.id = cardIdForKey(linear.key);
    linear.callCount = 1;
    linear.callPositions = {1};
    linear.vendorBacked = true;
    linear.samplesNote = "vendor-backed (cuBLAS/cuDNN): not sampled; pass --sample-vendor to include";
    linear.eager = EagerTiming{"cuda:0 (NVIDIA H200)", "cuda-events, L2 flushed", 1.5, 1.25, 1.75, 40};
    linear.timeShare = 0.1875;

    project.cards = {softmax, linear};
    info.totalEagerUs = softmax.totalEagerUs() + linear.totalEagerUs();
    return project;
}

} // namespace kforge::core::test
