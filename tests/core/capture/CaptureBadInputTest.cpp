// Every bad input gives one clear error naming the thing, and leaves no project or staging folder.

#include "CaptureTestSupport.h"

#include <torch/cuda.h>

#include <fstream>

using namespace kforge::core;
using kforge::core::test::cpuCapture;
using kforge::core::test::modelPath;
using kforge::core::test::ScratchDir;

namespace {

// Runs a capture that must fail; checks the error mentions every `needle` and that the scratch
// folder holds nothing but what it held before.
void expectFailure(const ScratchDir& scratch, const CaptureOptions& options, ErrorCode code,
                   std::vector<std::string> needles)
{
    const auto before = scratch.entries();
    auto report = runCapture(options);
    ASSERT_FALSE(report.ok());
    const std::string line = report.error().toString();
    EXPECT_EQ(report.error().code, code) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << "not one line: " << line;
    for (const std::string& needle : needles)
        EXPECT_NE(line.find(needle), std::string::npos) << "'" << needle << "' missing from: " << line;
    EXPECT_EQ(scratch.entries(), before) << "a failed capture left files behind";
}

} // namespace

TEST(CaptureBadInput, MissingModelFile)
{
    ScratchDir scratch;
    expectFailure(scratch, cpuCapture("no_such_model.pt", {"2x3"}, scratch / "p"), ErrorCode::NotFound,
                  {"no_such_model.pt", "no such model file"});
}

TEST(CaptureBadInput, FileThatIsNotAnArchive)
{
    ScratchDir scratch;
    expectFailure(scratch, cpuCapture("garbage.pt", {"2x3"}, scratch / "p"), ErrorCode::BadModel,
                  {"garbage.pt", "not a TorchScript file"});
}

TEST(CaptureBadInput, TruncatedArchive)
{
    ScratchDir scratch;
    expectFailure(scratch, cpuCapture("truncated.pt", {"2x3x16x16"}, scratch / "p"), ErrorCode::BadModel,
                  {"truncated.pt", "truncated or corrupt archive"});
}

TEST(CaptureBadInput, TorchSaveFileInsteadOfTorchScript)
{
    ScratchDir scratch;
    expectFailure(scratch, cpuCapture("state_dict_not_torchscript.pt", {"2x3x16x16"}, scratch / "p"),
                  ErrorCode::BadModel, {"state_dict_not_torchscript.pt", "not a TorchScript model"});
}

TEST(CaptureBadInput, InputShapeTheModelRejects)
{
    ScratchDir scratch;
    // The convolution expects 3 input channels.
    expectFailure(scratch, cpuCapture("conv_gn_block.pt", {"2x5x16x16"}, scratch / "p"), ErrorCode::BadInputs,
                  {"the model rejected the inputs", "channels"});
}

TEST(CaptureBadInput, InputCountTheModelRejects)
{
    ScratchDir scratch;
    expectFailure(scratch, cpuCapture("conv_gn_block.pt", {"2x3x16x16", "2x3x16x16"}, scratch / "p"),
                  ErrorCode::BadInputs, {"the model rejected the inputs", "argument"});
}

TEST(CaptureBadInput, InputDtypeTheModelRejects)
{
    ScratchDir scratch;
    expectFailure(scratch, cpuCapture("conv_gn_block.pt", {"2x3x16x16:int64"}, scratch / "p"), ErrorCode::BadInputs,
                  {"the model rejected the inputs"});
}

TEST(CaptureBadInput, InputsFileThatHoldsNoTensors)
{
    ScratchDir scratch;
    expectFailure(scratch, cpuCapture("two_inputs.pt", {modelPath("dict_inputs.pt").string()}, scratch / "p"),
                  ErrorCode::BadInputs, {"dict_inputs.pt", "expected a tensor or a tuple/list of tensors"});
}

TEST(CaptureBadInput, MalformedShapeSpec)
{
    ScratchDir scratch;
    expectFailure(scratch, cpuCapture("conv_gn_block.pt", {"2x3x16x16:float99"}, scratch / "p"),
                  ErrorCode::InvalidArgument, {"2x3x16x16:float99", "unknown dtype"});
}

TEST(CaptureBadInput, OutputFolderThatHoldsAProject)
{
    ScratchDir scratch;
    ASSERT_TRUE(runCapture(cpuCapture("conv_gn_block.pt", {"2x3x16x16"}, scratch / "p")).ok());
    const auto cardsBefore = std::filesystem::last_write_time(scratch / "p" / "cards.json");
    expectFailure(scratch, cpuCapture("basic_block.pt", {"2x8x8x8"}, scratch / "p"), ErrorCode::AlreadyExists,
                  {"already holds a Kernel Forge project"});
    EXPECT_EQ(std::filesystem::last_write_time(scratch / "p" / "cards.json"), cardsBefore);
}

TEST(CaptureBadInput, OutputFolderThatCannotBeCreated)
{
    ScratchDir scratch;
    std::ofstream(scratch / "a_file") << "x";
    // The parent is a regular file; this fails for root too (unlike permission bits).
    expectFailure(scratch, cpuCapture("conv_gn_block.pt", {"2x3x16x16"}, scratch / "a_file" / "p"), ErrorCode::NotFound,
                  {"a_file"});
}

TEST(CaptureBadInput, CudaDeviceOnAMachineWithout)
{
    if (torch::cuda::is_available())
        GTEST_SKIP() << "this machine has a GPU";
    ScratchDir scratch;
    CaptureOptions options = cpuCapture("conv_gn_block.pt", {"2x3x16x16"}, scratch / "p");
    options.device = "cuda";
    expectFailure(scratch, options, ErrorCode::Unsupported, {"--device cuda"});
}

TEST(CaptureBadInput, CancelledCaptureWritesNothing)
{
    ScratchDir scratch;
    std::atomic<bool> stop{true};
    const auto before = scratch.entries();
    auto report = runCapture(cpuCapture("conv_gn_block.pt", {"2x3x16x16"}, scratch / "p"), nullptr, &stop);
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.error().code, ErrorCode::Cancelled);
    EXPECT_EQ(scratch.entries(), before);
}
