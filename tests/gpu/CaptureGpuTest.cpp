// Capture on the GPU: cards carry positive eager latencies measured on the device.

#include "CaptureTestSupport.h"

#include "project/ProjectStore.h"

#include <map>

using namespace kforge::core;
using kforge::core::test::ScratchDir;

namespace {

CaptureOptions cudaCapture(const std::string& model, std::vector<std::string> inputs, const std::filesystem::path& out)
{
    return kforge::core::test::captureOn("cuda", model, std::move(inputs), out);
}

} // namespace

TEST(GpuCapture, EagerLatenciesArePresentPositiveAndFromTheGpu)
{
    for (const auto& [model, inputs] :
         std::vector<std::pair<std::string, std::string>>{{"conv_gn_block.pt", "2x3x64x64"},
                                                          {"transformer_block.pt", "4x128x32"},
                                                          {"basic_block.pt", "8x8x32x32"}}) {
        ScratchDir scratch;
        auto report = runCapture(cudaCapture(model, {inputs}, scratch / "p"));
        ASSERT_TRUE(report.ok()) << model << ": " << report.error().toString();
        const Project& project = report->project;
        EXPECT_EQ(project.capture.device, "cuda:0");
        EXPECT_NE(project.capture.deviceName, "cpu");
        double shareSum = 0;
        for (const OperatorCard& card : project.cards) {
            ASSERT_TRUE(card.eager.has_value()) << card.key << ": " << card.eagerNote;
            EXPECT_GT(card.eager->medianUs, 0) << card.key;
            if (card.runsOnHost()) {
                // Traced shape arithmetic on 0-dim CPU tensors: wall clock, not part of the GPU time.
                EXPECT_EQ(card.eager->method, "cpu wall clock") << card.key;
                EXPECT_EQ(card.eager->device, "cpu (host op)") << card.key;
                EXPECT_EQ(card.timeShare, 0) << card.key;
            } else {
                EXPECT_EQ(card.eager->method, "cuda-events, L2 flushed") << card.key;
                EXPECT_EQ(card.eager->device.rfind("cuda:0 (", 0), 0u) << card.eager->device;
                EXPECT_GT(card.timeShare, 0) << card.key;
            }
            // Activations and weights live on the GPU; traced shape arithmetic may pass 0-dim CPU tensors.
            for (const ArgSpec& arg : card.args) {
                for (const TensorSpec& tensor : arg.tensors) {
                    if (!tensor.sizes.empty()) {
                        EXPECT_EQ(tensor.device, "cuda:0") << card.key;
                    }
                }
            }
            if (!card.isRegion()) // a region's share overlaps its members'
                shareSum += card.timeShare;
        }
        EXPECT_NEAR(shareSum, 1.0, 1e-9);
        auto reopened = openProject(scratch / "p");
        ASSERT_TRUE(reopened.ok()) << reopened.error().toString();
        EXPECT_EQ(reopened.value(), project);
    }
}

TEST(GpuCapture, EveryOpOfTheModelIsRecordedAfterRepeatedRuns)
{
    // TorchScript's executor fuses pointwise chains on CUDA after a few runs (bypassing ATen);
    // the capture must still see the ops eager PyTorch runs: the same cards as on the CPU.
    ScratchDir scratch;
    auto report = runCapture(cudaCapture("basic_block.pt", {"2x8x8x8"}, scratch / "p"));
    ASSERT_TRUE(report.ok()) << report.error().toString();
    std::map<std::string, std::int64_t> counts;
    std::vector<std::string> regions;
    for (const OperatorCard& card : report->project.cards) {
        if (card.isRegion())
            regions.push_back(card.region->text());
        else
            counts[card.qualifiedName()] += card.callCount;
    }
    const std::map<std::string, std::int64_t> expected = {
        {"aten::_convolution", 2}, {"aten::batch_norm", 2}, {"aten::relu", 2}, {"aten::add.Tensor", 1}};
    EXPECT_EQ(counts, expected);
    EXPECT_EQ(regions, (std::vector<std::string>{"batch_norm -> relu", "batch_norm -> add -> relu"}));
    EXPECT_EQ(report->project.capture.totalCalls, 7);
}

TEST(GpuCapture, GroupNormOnTheGpuIsSlowerThanReluOfTheSameTensor)
{
    // A sanity check that the numbers are measurements, not constants: group_norm reads its input
    // twice and normalizes, relu streams it once.
    ScratchDir scratch;
    auto report = runCapture(cudaCapture("conv_gn_block.pt", {"16x3x256x256"}, scratch / "p"));
    ASSERT_TRUE(report.ok()) << report.error().toString();
    double groupNorm = 0;
    double relu = 0;
    for (const OperatorCard& card : report->project.cards) {
        if (card.op == "aten::group_norm")
            groupNorm = card.eager->medianUs;
        if (card.op == "aten::relu")
            relu = card.eager->medianUs;
    }
    EXPECT_GT(relu, 0);
    EXPECT_GT(groupNorm, relu);
}

TEST(GpuCapture, ShapeArithmeticStaysOnTheHost)
{
    // make_test_models.py SizeArithmetic: `x.shape[-1] // 2` and `heads * 2` traced into a 0-dim int64
    // constant. Loaded onto the GPU with the model, the arithmetic would run as CUDA kernels and each
    // aten::Int of its result would copy it to the host (an aten::item of a CUDA tensor: a device
    // synchronization mid-forward). The capture keeps the constant on the host (HostScalarConstants.h).
    ScratchDir scratch;
    auto report = runCapture(cudaCapture("size_arithmetic.pt", {"2x4x8x16"}, scratch / "p"));
    ASSERT_TRUE(report.ok()) << report.error().toString();
    int shapeArithmetic = 0;
    for (const OperatorCard& card : report->project.cards) {
        bool scalarsOnly = true;
        for (const ArgSpec& arg : card.args)
            for (const TensorSpec& tensor : arg.tensors)
                scalarsOnly = scalarsOnly && tensor.sizes.empty() && tensor.dtype == "int64";
        if (card.op == "aten::item" || card.op == "aten::_local_scalar_dense") {
            EXPECT_TRUE(card.runsOnHost()) << card.key << ": the forward would wait for the GPU";
        }
        if (card.op == "aten::floor_divide" || card.op == "aten::mul") {
            if (!scalarsOnly)
                continue; // the output scale: a real tensor op
            ++shapeArithmetic;
            EXPECT_TRUE(card.runsOnHost()) << card.key;
        }
    }
    EXPECT_GE(shapeArithmetic, 2) << "floor_divide and mul of sizes should be recorded";
    for (const std::string& note : report->notes)
        EXPECT_EQ(note.find("waits for the GPU"), std::string::npos) << note;
}

TEST(GpuCapture, AForwardThatWaitsForTheGpuIsNoted)
{
    // make_test_models.py WaitsForTheGpu: nonzero's output size depends on GPU data.
    ScratchDir scratch;
    auto report = runCapture(cudaCapture("waits_for_the_gpu.pt", {"64x64"}, scratch / "p"));
    ASSERT_TRUE(report.ok()) << report.error().toString();
    std::string waits;
    for (const std::string& note : report->notes)
        if (note.find("waits for the GPU") != std::string::npos)
            waits = note;
    EXPECT_EQ(waits.rfind("the model waits for the GPU 1 time per forward (aten::nonzero x1", 0), 0u)
        << "notes: " << waits;
}
