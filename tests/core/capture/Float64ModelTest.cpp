// The float64 reference run of a traced mixed-precision model (core/capture/Float64Model.h), on the
// CPU, against the same block computed in float64 throughout by eager Python (make_test_models.py).

#include "CaptureTestSupport.h"

#include "capture/Float64Model.h"
#include "capture/TorchModel.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

using namespace kforge::core;
using kforge::core::test::modelPath;

namespace {

struct MixedPrecisionFixture {
    torch::jit::Module module;
    at::Tensor input;    // bfloat16
    at::Tensor expected; // float64, from Python
};

MixedPrecisionFixture loadFixture()
{
    const c10::Device cpu(c10::kCPU);
    auto module = loadTorchScript(modelPath("mixed_precision_block.pt"), cpu);
    EXPECT_TRUE(module.ok()) << module.error().toString();
    auto spec = parseInputSpec({modelPath("mixed_precision_float64.pt").string()});
    EXPECT_TRUE(spec.ok()) << spec.error().toString();
    auto values = makeInputs(spec.value(), cpu, 0);
    EXPECT_TRUE(values.ok()) << values.error().toString();
    EXPECT_EQ(values->size(), 2u);
    return {module.value(), values->at(0).toTensor(), values->at(1).toTensor()};
}

// The fixture run in float64 gives Python's float64 result, to float64 rounding (not to bfloat16's
// 3.9e-3 or float32's 6e-8).
void expectFloat64Result(MixedPrecisionFixture& fixture)
{
    auto output = runModelInFloat64(fixture.module, {fixture.input});
    ASSERT_TRUE(output.ok()) << output.error().toString();
    const at::Tensor got = output->toTensor();
    EXPECT_EQ(got.scalar_type(), at::kDouble);
    ASSERT_EQ(got.sizes(), fixture.expected.sizes());
    const double maxError = (got - fixture.expected).abs().max().item<double>();
    EXPECT_LT(maxError, 1e-12) << "largest difference from Python's float64 result";
}

} // namespace

TEST(Float64Model, TracedBfloat16BlockRunsInFloat64Throughout)
{
    MixedPrecisionFixture fixture = loadFixture();
    ASSERT_EQ(fixture.input.scalar_type(), at::kBFloat16);
    ASSERT_EQ(fixture.expected.scalar_type(), at::kDouble);

    expectFloat64Result(fixture);
}

TEST(Float64Model, RunsInFloat64AfterTheModelRanOpByOp)
{
    // The in-model check and `kforge run` run the model with the graph executor's optimizations off
    // (forwardOpByOp) before the float64 run; the norm's casts, two calls deep, must still be
    // promoted (they were not: the decoders' float64 run failed after the first op-by-op forward).
    MixedPrecisionFixture fixture = loadFixture();
    {
        c10::InferenceMode inferenceMode;
        for (int pass = 0; pass < 3; ++pass) // the profiling executor's runs, then its optimized plan
            (void)forwardOpByOp(fixture.module, {fixture.input});
    }
    expectFloat64Result(fixture);
}

TEST(Float64Model, ConvertingOnlyWeightsAndInputsIsNotEnough)
{
    // Why the graph's constants are rewritten: the plain conversion of parameters and inputs
    // either fails (a float64 matmul meets a bfloat16 operand) or stays in bfloat16 inside.
    MixedPrecisionFixture fixture = loadFixture();
    torch::jit::Module naive = fixture.module.deepcopy();
    naive.to(at::kDouble);
    bool failedOrLowPrecision = false;
    try {
        const at::Tensor out = naive.forward({fixture.input.to(at::kDouble)}).toTensor();
        failedOrLowPrecision = (out.to(at::kDouble) - fixture.expected).abs().max().item<double>() > 1e-6;
    } catch (const std::exception&) {
        failedOrLowPrecision = true;
    }
    EXPECT_TRUE(failedOrLowPrecision);
}

TEST(Float64Model, LeavesTheModelAndItsIntegerBuffersUntouched)
{
    MixedPrecisionFixture fixture = loadFixture();
    const at::Tensor before = fixture.module.forward({fixture.input}).toTensor();
    ASSERT_TRUE(runModelInFloat64(fixture.module, {fixture.input}).ok());
    const at::Tensor after = fixture.module.forward({fixture.input}).toTensor();
    EXPECT_EQ(after.scalar_type(), at::kBFloat16);
    EXPECT_TRUE(at::equal(before, after));
    for (const at::Tensor& parameter : fixture.module.parameters())
        EXPECT_EQ(parameter.scalar_type(), at::kBFloat16);
    int positionBuffers = 0;
    for (const auto& buffer : fixture.module.named_buffers(/*recurse=*/true))
        if (buffer.name == "layers.0.positions") {
            ++positionBuffers;
            EXPECT_EQ(buffer.value.scalar_type(), at::kLong);
        }
    EXPECT_EQ(positionBuffers, 1);
}

TEST(Float64Model, AnInputTheModelRejectsIsOneErrorLine)
{
    MixedPrecisionFixture fixture = loadFixture();
    auto output = runModelInFloat64(fixture.module, {at::zeros({3, 5}, at::kBFloat16)});
    ASSERT_FALSE(output.ok());
    EXPECT_EQ(output.error().code, ErrorCode::BadModel);
    EXPECT_NE(output.error().message.find("the model does not run in float64: "), std::string::npos);
    EXPECT_EQ(output.error().message.find('\n'), std::string::npos) << output.error().message;
}
