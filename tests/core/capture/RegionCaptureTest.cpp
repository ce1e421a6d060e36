// Captures the fused-region test models (tests/models/make_test_models.py) on the CPU and checks the
// call graph the capture records and the regions found on it.

#include "CaptureTestSupport.h"

#include "project/ProjectStore.h"
#include "regions/RegionFinder.h"

#include <algorithm>

using namespace kforge::core;
using kforge::core::test::cpuCapture;
using kforge::core::test::ScratchDir;

namespace {

Project capture(const ScratchDir& scratch, const std::string& model, std::vector<std::string> inputs,
                const std::string& folder = "project")
{
    CaptureOptions options = cpuCapture(model, std::move(inputs), scratch / folder);
    options.samplesPerCard = 0;
    auto report = runCapture(options);
    EXPECT_TRUE(report.ok()) << report.error().toString();
    if (!report.ok())
        return {};
    EXPECT_EQ(report->project.graph.problem(report->project.cards), "");
    // What was saved opens to the same graph.
    auto reopened = openProject(scratch / folder);
    EXPECT_TRUE(reopened.ok()) << reopened.error().toString();
    if (reopened.ok()) {
        EXPECT_EQ(reopened->graph, report->project.graph);
    }
    return report->project;
}

std::vector<RegionCard> regionsOf(const Project& project)
{
    return findRegions(project.graph, project.cards);
}

// Inputs that are not 0-dim: a traced Python float becomes a 0-dim float64 constant tensor.
size_t tensorInputs(const RegionCard& region)
{
    return static_cast<size_t>(std::count_if(region.inputs.begin(), region.inputs.end(),
                                             [](const RegionInput& input) { return !input.spec.sizes.empty(); }));
}

} // namespace

TEST(RegionCapture, GraphRecordsEveryCallWithItsCardAndValues)
{
    ScratchDir scratch;
    const Project project = capture(scratch, "swiglu_mlp.pt", {"2x8x32"});
    const CallGraph& graph = project.graph;
    ASSERT_EQ(static_cast<std::int64_t>(graph.calls.size()), project.capture.totalCalls);
    // linear(x, wg), linear(x, wu), silu, mul, linear: x is one external value read twice.
    std::vector<std::string> ops;
    for (const GraphCall& call : graph.calls)
        ops.push_back(project.cards[static_cast<size_t>(call.card)].op);
    EXPECT_EQ(ops,
              (std::vector<std::string>{"aten::linear", "aten::silu", "aten::linear", "aten::mul", "aten::linear"}));
    EXPECT_EQ(graph.calls[0].inputs[0], graph.calls[2].inputs[0]);
    EXPECT_EQ(graph.valueProducers[static_cast<size_t>(graph.calls[0].inputs[0][0])], -1);
    EXPECT_EQ(graph.calls[1].inputs[0], std::vector<std::int32_t>{graph.calls[0].outputs[0]});
    ASSERT_EQ(graph.modelOutputs.size(), 1u);
    EXPECT_EQ(graph.modelOutputs[0], graph.calls[4].outputs[0]);
}

TEST(RegionCapture, BatchNormReluAddRepeatedInTwoLayersIsOneRegion)
{
    ScratchDir scratch;
    const auto regions = regionsOf(capture(scratch, "bn_relu_add_stack.pt", {"2x8x8x8"}));
    ASSERT_EQ(regions.size(), 1u);
    EXPECT_EQ(regions[0].chainText(), "batch_norm -> relu_ -> add");
    ASSERT_EQ(regions[0].occurrences.size(), 2u);
    EXPECT_EQ(regions[0].occurrences[0].size(), 3u);
    EXPECT_LT(regions[0].occurrences[0].back(), regions[0].occurrences[1].front());
    // conv output, weight, bias, running mean and var, the identity; one output (the add).
    EXPECT_EQ(regions[0].inputs.size(), 6u);
    EXPECT_EQ(regions[0].outputs.size(), 1u);
    EXPECT_EQ(regions[0].outputs[0].member, 2);
    EXPECT_TRUE(regions[0].eagerEstimateComplete);
    EXPECT_GT(regions[0].eagerUsEstimate, 0);
}

TEST(RegionCapture, RmsNormWrittenOutIsOneRegion)
{
    ScratchDir scratch;
    const auto regions = regionsOf(capture(scratch, "rms_norm_written_out.pt", {"2x8x32"}));
    ASSERT_EQ(regions.size(), 1u);
    EXPECT_EQ(regions[0].chainText(), "pow -> mean -> add -> rsqrt -> mul -> mul");
    EXPECT_EQ(tensorInputs(regions[0]), 2u); // x (read twice) and the weight
    EXPECT_EQ(regions[0].inputs[0].uses.size(), 2u);
    EXPECT_EQ(regions[0].outputs.size(), 1u);
}

TEST(RegionCapture, ScaleMaskSoftmaxCastIsOneRegionBetweenMatmuls)
{
    ScratchDir scratch;
    const auto regions = regionsOf(capture(scratch, "scaled_masked_softmax.pt", {"2x4x8x16", "2x4x8x16", "2x4x8x16"}));
    ASSERT_EQ(regions.size(), 1u);
    EXPECT_EQ(regions[0].chainText(), "mul -> add -> softmax -> to");
    EXPECT_EQ(tensorInputs(regions[0]), 2u); // the scores and the mask
    ASSERT_EQ(regions[0].outputs.size(), 1u);
    EXPECT_EQ(regions[0].outputs[0].spec.dtype, "bfloat16");
}

TEST(RegionCapture, GeluWrittenOutWithTanhIsOneEightOpRegion)
{
    ScratchDir scratch;
    const auto regions = regionsOf(capture(scratch, "gelu_tanh_written_out.pt", {"4x64"}));
    ASSERT_EQ(regions.size(), 1u);
    EXPECT_EQ(regions[0].members.size(), 8u);
    EXPECT_EQ(regions[0].chainText(), "mul -> pow -> mul -> add -> mul -> tanh -> add -> mul");
    EXPECT_EQ(tensorInputs(regions[0]), 1u);
    EXPECT_EQ(regions[0].inputs[0].uses.size(), 3u);
    EXPECT_EQ(regions[0].outputs.size(), 1u);
}

TEST(RegionCapture, SiluTimesUpIsBoundedByTheLinears)
{
    ScratchDir scratch;
    const auto regions = regionsOf(capture(scratch, "swiglu_mlp.pt", {"2x8x32"}));
    ASSERT_EQ(regions.size(), 1u);
    EXPECT_EQ(regions[0].chainText(), "silu -> mul");
    EXPECT_EQ(regions[0].inputs.size(), 2u);
    EXPECT_EQ(regions[0].outputs.size(), 1u);
}

TEST(RegionCapture, ResidualAddAndLayerNormIsOneRegionAndTheLastAddStaysOut)
{
    ScratchDir scratch;
    const auto regions = regionsOf(capture(scratch, "residual_norm.pt", {"2x8x32"}));
    ASSERT_EQ(regions.size(), 1u);
    EXPECT_EQ(regions[0].chainText(), "add -> layer_norm");
    EXPECT_EQ(regions[0].inputs.size(), 4u); // x, fc(x), the norm's weight and bias
    // h feeds the last add as well as the norm: two outputs.
    EXPECT_EQ(regions[0].outputs.size(), 2u);
}

TEST(RegionCapture, RegionIdsAreStableAcrossCaptures)
{
    ScratchDir scratch;
    const auto first = regionsOf(capture(scratch, "bn_relu_add_stack.pt", {"2x8x8x8"}, "first"));
    const auto second = regionsOf(capture(scratch, "bn_relu_add_stack.pt", {"2x8x8x8"}, "second"));
    ASSERT_EQ(first.size(), 1u);
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(first[0].id, second[0].id);
    EXPECT_EQ(first[0].key, second[0].key);
    EXPECT_EQ(first[0].occurrences, second[0].occurrences);
}
