#include "CaptureTestSupport.h"

#include "capture/SampleIO.h"
#include "capture/TorchInterop.h"

#include <ATen/ATen.h>

#include <fstream>

using namespace kforge::core;
using kforge::core::test::ScratchDir;

TEST(CloneExact, KeepsStridesOfExpandedAndTransposedTensors)
{
    const at::Tensor base = at::arange(12, at::kFloat).reshape({3, 4});
    const at::Tensor transposed = base.t();
    const at::Tensor expanded = at::arange(4, at::kFloat).expand({5, 4}); // stride 0: overlapping elements
    const at::Tensor sliced = base.slice(1, 1, 3);                        // storage offset 1
    for (const at::Tensor& tensor : {transposed, expanded, sliced}) {
        const at::Tensor copy = torchinterop::cloneExact(tensor, c10::Device(c10::kCPU));
        EXPECT_EQ(copy.sizes(), tensor.sizes());
        EXPECT_EQ(copy.strides(), tensor.strides());
        EXPECT_TRUE(at::equal(copy, tensor));
        EXPECT_NE(copy.data_ptr(), tensor.data_ptr()); // a real copy
    }
}

TEST(SampleIO, RoundTripsTensorsScalarsListsAndNone)
{
    ScratchDir scratch;
    SampleTensors sample;
    sample.inputs = {at::randn({3, 5}).t(), c10::IValue(int64_t{-1}), c10::IValue(), c10::IValue(2.5),
                     c10::IValue(std::vector<int64_t>{1, 1})};
    sample.outputs = {at::randn({5, 3})};
    ASSERT_TRUE(saveSampleFile(scratch / "s.pt", sample).ok());
    auto loaded = loadSampleFile(scratch / "s.pt");
    ASSERT_TRUE(loaded.ok()) << loaded.error().toString();
    ASSERT_EQ(loaded->inputs.size(), 5u);
    EXPECT_TRUE(at::equal(loaded->inputs[0].toTensor(), sample.inputs[0].toTensor()));
    EXPECT_EQ(loaded->inputs[0].toTensor().strides(), sample.inputs[0].toTensor().strides());
    EXPECT_EQ(loaded->inputs[1].toInt(), -1);
    EXPECT_TRUE(loaded->inputs[2].isNone());
    EXPECT_EQ(loaded->inputs[3].toDouble(), 2.5);
    EXPECT_EQ(loaded->inputs[4].toIntVector(), (std::vector<int64_t>{1, 1}));
    EXPECT_TRUE(at::equal(loaded->outputs[0].toTensor(), sample.outputs[0].toTensor()));
}

TEST(SampleIO, DamagedFileIsAClearError)
{
    ScratchDir scratch;
    std::ofstream(scratch / "bad.pt") << "not a pickle";
    auto loaded = loadSampleFile(scratch / "bad.pt");
    ASSERT_FALSE(loaded.ok());
    EXPECT_NE(loaded.error().toString().find("bad.pt"), std::string::npos);
    EXPECT_EQ(loaded.error().toString().find('\n'), std::string::npos);
}

TEST(TorchInterop, OneLineErrorKeepsTheCauseOfATorchScriptTraceback)
{
    const std::runtime_error error(
        "The following operation failed in the TorchScript interpreter.\nTraceback of TorchScript, serialized code "
        "(most recent call last):\n  File \"code/__torch__.py\", line 10, in forward\n    x = torch.conv2d(...)\n"
        "RuntimeError: expected input[2, 5, 16, 16] to have 3 channels, but got 5 channels instead\n");
    EXPECT_EQ(torchinterop::oneLineError(error),
              "expected input[2, 5, 16, 16] to have 3 channels, but got 5 channels instead");
}
