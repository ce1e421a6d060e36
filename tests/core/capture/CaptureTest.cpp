// Captures the real TorchScript test models on the CPU and checks the exact operator cards.

#include "CaptureTestSupport.h"

#include "capture/SampleIO.h"
#include "project/ProjectStore.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>

using namespace kforge::core;
using kforge::core::test::cpuCapture;
using kforge::core::test::ScratchDir;

namespace {

using KeyCounts = std::map<std::string, std::int64_t>;

// The op cards' keys and call counts (region cards, which follow them, are tested in RegionCaptureTest).
KeyCounts keyCounts(const Project& project)
{
    KeyCounts counts;
    for (const OperatorCard& card : project.cards)
        if (!card.isRegion())
            counts[card.key] = card.callCount;
    return counts;
}

Project captureOnCpu(const ScratchDir& scratch, const std::string& model, std::vector<std::string> inputs)
{
    auto report = runCapture(cpuCapture(model, std::move(inputs), scratch / "project"));
    EXPECT_TRUE(report.ok()) << report.error().toString();
    return report.ok() ? report->project : Project{};
}

/// One sample per card, as `kforge capture --samples 1` takes them for the search.
Result<CaptureReport> captureOneSamplePerCard(const ScratchDir& scratch, const std::string& model,
                                              std::vector<std::string> inputs)
{
    CaptureOptions options = cpuCapture(model, std::move(inputs), scratch / "project");
    options.samplesPerCard = 1;
    return runCapture(options);
}

} // namespace

TEST(Capture, ConvGroupNormBlockCards)
{
    ScratchDir scratch;
    const Project project = captureOnCpu(scratch, "conv_gn_block.pt", {"2x3x16x16"});
    const KeyCounts expected = {
        {"aten::_convolution(tensor:(float32[2,3,16,16]{768,256,16,1}@cpu), tensor:(float32[8,3,3,3]{27,9,3,1}@cpu), "
         "tensor:(float32[8]{1}@cpu), value:[1,1], value:[1,1], value:[1,1], value:false, value:[0,0], value:1, "
         "value:false, value:false, value:true, value:true)",
         1},
        {"aten::group_norm(tensor:(float32[2,8,16,16]{2048,256,16,1}@cpu), value:4, tensor:(float32[8]{1}@cpu), "
         "tensor:(float32[8]{1}@cpu), value:1e-05, value:true)",
         1},
        {"aten::relu(tensor:(float32[2,8,16,16]{2048,256,16,1}@cpu))", 1},
        {"aten::adaptive_avg_pool2d(tensor:(float32[2,8,16,16]{2048,256,16,1}@cpu), value:[1,1])", 1},
    };
    EXPECT_EQ(keyCounts(project), expected);
    EXPECT_EQ(project.capture.totalCalls, 4);
    // Op cards are in order of first call, then the region group_norm -> relu; the convolution is
    // vendor-backed, the rest are not.
    ASSERT_EQ(project.cards.size(), 5u);
    EXPECT_TRUE(project.cards[4].isRegion());
    EXPECT_EQ(project.cards[0].op, "aten::_convolution");
    EXPECT_TRUE(project.cards[0].vendorBacked);
    EXPECT_EQ(project.cards[3].op, "aten::adaptive_avg_pool2d");
    EXPECT_FALSE(project.cards[3].vendorBacked);
    EXPECT_EQ(project.cards[3].outputs, (std::vector<TensorSpec>{{"float32", {2, 8, 1, 1}, {8, 1, 1, 1}, "cpu"}}));
}

TEST(Capture, TransformerBlockCards)
{
    ScratchDir scratch;
    const Project project = captureOnCpu(scratch, "transformer_block.pt", {"2x8x32:float32"});
    // The ops eager PyTorch runs for this block (the graph is executed unoptimized: chunk stays
    // aten::chunk, `* scale` is mul.Tensor with a 0-dim double tensor, as in eager).
    const KeyCounts expected = {
        {"aten::layer_norm(tensor:(float32[2,8,32]{256,32,1}@cpu), value:[32], tensor:(float32[32]{1}@cpu), "
         "tensor:(float32[32]{1}@cpu), value:1e-05, value:true)",
         2},
        {"aten::linear(tensor:(float32[2,8,32]{256,32,1}@cpu), tensor:(float32[96,32]{32,1}@cpu), "
         "tensor:(float32[96]{1}@cpu))",
         1},
        {"aten::chunk(tensor:(float32[2,8,96]{768,96,1}@cpu), value:3, value:-1)", 1},
        {"aten::unflatten.int(tensor:(float32[2,8,32]{768,96,1}@cpu), value:-1, value:[4,-1])", 3},
        {"aten::transpose.int(tensor:(float32[2,8,4,8]{768,96,8,1}@cpu), value:1, value:2)", 3},
        {"aten::transpose.int(tensor:(float32[2,4,8,8]{768,8,96,1}@cpu), value:-2, value:-1)", 1},
        {"aten::matmul(tensor:(float32[2,4,8,8]{768,8,96,1}@cpu), tensor:(float32[2,4,8,8]{768,8,1,96}@cpu))", 1},
        {"aten::mul.Tensor(tensor:(float32[2,4,8,8]{256,64,8,1}@cpu), tensor:(float64[]{}@cpu))", 1},
        {"aten::softmax.int(tensor:(float32[2,4,8,8]{256,64,8,1}@cpu), value:-1, none:)", 1},
        {"aten::matmul(tensor:(float32[2,4,8,8]{256,64,8,1}@cpu), tensor:(float32[2,4,8,8]{768,8,96,1}@cpu))", 1},
        {"aten::transpose.int(tensor:(float32[2,4,8,8]{256,64,8,1}@cpu), value:1, value:2)", 1},
        {"aten::flatten.using_ints(tensor:(float32[2,8,4,8]{256,8,64,1}@cpu), value:2, value:-1)", 1},
        {"aten::linear(tensor:(float32[2,8,32]{256,32,1}@cpu), tensor:(float32[32,32]{32,1}@cpu), "
         "tensor:(float32[32]{1}@cpu))",
         1},
        {"aten::add.Tensor(tensor:(float32[2,8,32]{256,32,1}@cpu), tensor:(float32[2,8,32]{256,32,1}@cpu), value:1)",
         2},
        {"aten::linear(tensor:(float32[2,8,32]{256,32,1}@cpu), tensor:(float32[128,32]{32,1}@cpu), "
         "tensor:(float32[128]{1}@cpu))",
         1},
        {"aten::gelu(tensor:(float32[2,8,128]{1024,128,1}@cpu), value:\"none\")", 1},
        {"aten::linear(tensor:(float32[2,8,128]{1024,128,1}@cpu), tensor:(float32[32,128]{128,1}@cpu), "
         "tensor:(float32[32]{1}@cpu))",
         1},
    };
    EXPECT_EQ(keyCounts(project), expected);
    EXPECT_EQ(project.capture.totalCalls, 23);
    // A multi-output op: chunk's three results are all described.
    for (const OperatorCard& card : project.cards) {
        if (card.op == "aten::chunk") {
            EXPECT_EQ(card.outputs.size(), 3u);
        }
    }
}

TEST(Capture, ResNetBasicBlockCards)
{
    ScratchDir scratch;
    const Project project = captureOnCpu(scratch, "basic_block.pt", {"2x8x8x8"});
    const KeyCounts expected = {
        {"aten::_convolution(tensor:(float32[2,8,8,8]{512,64,8,1}@cpu), tensor:(float32[8,8,3,3]{72,9,3,1}@cpu), "
         "none:, value:[1,1], value:[1,1], value:[1,1], value:false, value:[0,0], value:1, value:false, "
         "value:false, value:true, value:true)",
         2},
        {"aten::batch_norm(tensor:(float32[2,8,8,8]{512,64,8,1}@cpu), tensor:(float32[8]{1}@cpu), "
         "tensor:(float32[8]{1}@cpu), tensor:(float32[8]{1}@cpu), tensor:(float32[8]{1}@cpu), value:false, "
         "value:0.1, value:1e-05, value:true)",
         2},
        {"aten::relu(tensor:(float32[2,8,8,8]{512,64,8,1}@cpu))", 2},
        {"aten::add.Tensor(tensor:(float32[2,8,8,8]{512,64,8,1}@cpu), tensor:(float32[2,8,8,8]{512,64,8,1}@cpu), "
         "value:1)",
         1},
    };
    EXPECT_EQ(keyCounts(project), expected);
    for (const OperatorCard& card : project.cards) {
        if (card.op == "aten::relu") {
            EXPECT_EQ(card.callPositions, (std::vector<std::int64_t>{2, 6}));
        }
        if (card.op == "aten::batch_norm") {
            EXPECT_EQ(card.callPositions, (std::vector<std::int64_t>{1, 4}));
        }
    }
}

TEST(Capture, CardsCarryTimingsSharesAndSamplesAndReopenExactly)
{
    ScratchDir scratch;
    auto report = captureOneSamplePerCard(scratch, "basic_block.pt", {"2x8x8x8"});
    ASSERT_TRUE(report.ok()) << report.error().toString();
    const Project& project = report->project;

    double shareSum = 0;
    for (const OperatorCard& card : project.cards) {
        ASSERT_TRUE(card.eager.has_value()) << card.key << ": " << card.eagerNote;
        EXPECT_EQ(card.eager->device, "cpu"); // never labelled as a GPU number
        EXPECT_EQ(card.eager->method, "cpu wall clock");
        EXPECT_GT(card.eager->medianUs, 0);
        EXPECT_LE(card.eager->q1Us, card.eager->medianUs);
        EXPECT_GE(card.eager->q3Us, card.eager->medianUs);
        EXPECT_GE(card.eager->repetitions, 10);
        if (!card.isRegion()) // a region's share overlaps its members'
            shareSum += card.timeShare;
        if (card.vendorBacked) {
            EXPECT_TRUE(card.samples.empty());
            EXPECT_NE(card.samplesNote.find("vendor-backed"), std::string::npos);
        } else {
            ASSERT_EQ(card.samples.size(), 1u) << card.key; // --samples 1 even for cards with 2 calls
            EXPECT_EQ(card.samples[0].callPosition, card.callPositions[0]);
        }
    }
    EXPECT_NEAR(shareSum, 1.0, 1e-9);
    EXPECT_EQ(project.capture.device, "cpu");
    EXPECT_EQ(project.capture.torchVersion, "2.11.0");

    auto reopened = openProject(scratch / "project");
    ASSERT_TRUE(reopened.ok()) << reopened.error().toString();
    EXPECT_EQ(reopened.value(), project);
}

TEST(Capture, SamplesHoldTheRealInputsAndEagerOutputs)
{
    ScratchDir scratch;
    const Project project = captureOnCpu(scratch, "basic_block.pt", {"2x8x8x8"});
    const OperatorCard* relu = nullptr;
    const OperatorCard* add = nullptr;
    for (const OperatorCard& card : project.cards) {
        if (card.op == "aten::relu")
            relu = &card;
        if (card.op == "aten::add")
            add = &card;
    }
    ASSERT_NE(relu, nullptr);
    ASSERT_NE(add, nullptr);
    ASSERT_EQ(relu->samples.size(), 2u);
    for (const SampleRef& ref : relu->samples) {
        auto sample = loadSampleFile(scratch / "project" / ref.file);
        ASSERT_TRUE(sample.ok()) << sample.error().toString();
        ASSERT_EQ(sample->inputs.size(), 1u);
        ASSERT_EQ(sample->outputs.size(), 1u);
        const at::Tensor input = sample->inputs[0].toTensor();
        const at::Tensor output = sample->outputs[0].toTensor();
        EXPECT_EQ(input.sizes().vec(), (std::vector<std::int64_t>{2, 8, 8, 8}));
        EXPECT_TRUE(at::equal(output, at::relu(input))) << "output is not relu(input) for " << ref.file;
        // The input is a real activation (batch_norm output), not zeros: it has negatives to clamp.
        EXPECT_GT(input.lt(0).sum().item<std::int64_t>(), 0);
    }
    // The residual add sample: both inputs and the output agree with eager add.
    auto addSample = loadSampleFile(scratch / "project" / add->samples.at(0).file);
    ASSERT_TRUE(addSample.ok()) << addSample.error().toString();
    ASSERT_EQ(addSample->inputs.size(), 3u); // self, other, alpha
    EXPECT_EQ(addSample->inputs[2].toInt(), 1);
    EXPECT_TRUE(at::allclose(addSample->outputs[0].toTensor(),
                             addSample->inputs[0].toTensor() + addSample->inputs[1].toTensor()));
}

TEST(Capture, SampleBudgetLimitsSamplesAndSaysWhy)
{
    ScratchDir scratch;
    CaptureOptions options = cpuCapture("basic_block.pt", {"2x8x8x8"}, scratch / "project");
    options.sampleBudgetBytes = 5000; // one 2x8x8x8 float32 input is 4096 bytes
    auto report = runCapture(options);
    ASSERT_TRUE(report.ok()) << report.error().toString();
    std::int64_t total = 0;
    bool anyExhausted = false;
    for (const OperatorCard& card : report->project.cards) {
        for (const SampleRef& sample : card.samples)
            total += sample.bytes;
        anyExhausted = anyExhausted || card.samplesNote.find("budget") != std::string::npos;
    }
    EXPECT_TRUE(anyExhausted);
    EXPECT_LE(total, 5000 + 4096); // the budget bounds inputs; one call's outputs may follow

    // One note sums it up: how many cards, their share, and a budget that samples them.
    const auto note = std::find_if(report->notes.begin(), report->notes.end(), [](const std::string& text) {
        return text.find("sample budget") != std::string::npos;
    });
    ASSERT_NE(note, report->notes.end());
    int unsampled = 0;
    double share = 0;
    for (const OperatorCard& card : report->project.cards) {
        if (!card.isRegion() && card.samples.empty() && card.samplesNote.find("budget") != std::string::npos) {
            ++unsampled;
            share += card.timeShare;
        }
    }
    std::ostringstream expected;
    expected << "the sample budget (1 MB) ran out: " << unsampled << " card" << (unsampled == 1 ? "" : "s") << " ("
             << std::fixed << std::setprecision(1) << share * 100.0 << "% of model time) have no sample";
    EXPECT_EQ(note->rfind(expected.str(), 0), 0u) << *note;
    EXPECT_NE(note->find("--sample-budget-mb 1 would sample their first calls"), std::string::npos) << *note;
}

TEST(Capture, AGenerousBudgetLeavesNoBudgetNote)
{
    ScratchDir scratch;
    auto report = runCapture(cpuCapture("basic_block.pt", {"2x8x8x8"}, scratch / "project"));
    ASSERT_TRUE(report.ok()) << report.error().toString();
    for (const std::string& note : report->notes)
        EXPECT_EQ(note.find("sample budget"), std::string::npos) << note;
}

TEST(Capture, OpsThatOnlyAliasTheirInputKeepNoSample)
{
    ScratchDir scratch;
    auto report = captureOneSamplePerCard(scratch, "transformer_block.pt", {"2x8x32:float32"});
    ASSERT_TRUE(report.ok()) << report.error().toString();
    int views = 0;
    int computing = 0;
    for (const OperatorCard& card : report->project.cards) {
        if (card.op == "aten::transpose" || card.op == "aten::unflatten" || card.op == "aten::chunk") {
            ++views;
            EXPECT_TRUE(card.samples.empty()) << card.key;
            EXPECT_NE(card.samplesNote.find("view of an input"), std::string::npos)
                << card.key << ": " << card.samplesNote;
        }
        if (card.op == "aten::layer_norm" || card.op == "aten::softmax" || card.op == "aten::gelu" ||
            card.op == "aten::add") {
            ++computing;
            EXPECT_EQ(card.samples.size(), 1u) << card.key;
            EXPECT_EQ(card.samplesNote, "") << card.key;
        }
    }
    EXPECT_EQ(views, 5);     // three transpose variants, unflatten, chunk
    EXPECT_EQ(computing, 4); // layer_norm, softmax, gelu, add
}

TEST(Capture, AnInPlaceOpKeepsItsSampleThoughItReturnsItsInput)
{
    ScratchDir scratch;
    auto report = captureOneSamplePerCard(scratch, "inplace_add.pt", {"4x8"});
    ASSERT_TRUE(report.ok()) << report.error().toString();
    const auto add = std::find_if(report->project.cards.begin(), report->project.cards.end(),
                                  [](const OperatorCard& card) { return card.op == "aten::add_"; });
    ASSERT_NE(add, report->project.cards.end());
    ASSERT_EQ(add->samples.size(), 1u);
    auto sample = loadSampleFile(scratch / "project" / add->samples[0].file);
    ASSERT_TRUE(sample.ok()) << sample.error().toString();
    // The pre-call self and the post-call output: add_ wrote self + other into it.
    EXPECT_TRUE(
        at::allclose(sample->outputs[0].toTensor(), sample->inputs[0].toTensor() + sample->inputs[1].toTensor()));
}

TEST(Capture, InputsFromTorchSaveFile)
{
    ScratchDir scratch;
    const Project project =
        captureOnCpu(scratch, "two_inputs.pt", {kforge::core::test::modelPath("two_inputs_inputs.pt").string()});
    const KeyCounts expected = {
        {"aten::embedding(tensor:(float32[100,16]{16,1}@cpu), tensor:(int64[2,5]{5,1}@cpu), value:-1, value:false, "
         "value:false)",
         1},
        {"aten::mul.Tensor(tensor:(float32[2,5,16]{80,16,1}@cpu), tensor:(float32[2,5,1]{5,1,1}@cpu))", 1},
    };
    EXPECT_EQ(keyCounts(project), expected);
}

TEST(Capture, SynthesizedIntegerInputsRespectTheirRange)
{
    ScratchDir scratch;
    // Token ids in [0,100) fit the 100-row embedding; a wider range would index out of bounds.
    const Project project = captureOnCpu(scratch, "two_inputs.pt", {"2x5:int64[0,100)", "2x5x1"});
    EXPECT_EQ(project.cards.size(), 2u);
}

TEST(Capture, ProgressEndsInDone)
{
    ScratchDir scratch;
    CaptureProgress progress;
    auto report = runCapture(cpuCapture("conv_gn_block.pt", {"2x3x16x16"}, scratch / "project"), &progress);
    ASSERT_TRUE(report.ok()) << report.error().toString();
    EXPECT_EQ(progress.phase.load(), CapturePhase::Done);
}
