// Captures the fused-region test models (tests/models/make_test_models.py) on the CPU and checks the
// call graph the capture records and the regions found on it.

#include "CaptureTestSupport.h"

#include "capture/ChainReplay.h"
#include "capture/SampleIO.h"
#include "project/ProjectStore.h"
#include "regions/RegionFinder.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

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
        EXPECT_EQ(reopened->cards, report->project.cards); // region cards and their chains too
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

TEST(RegionCapture, SqueezeExciteGivesNormActivationAndScaleRegions)
{
    ScratchDir scratch;
    const auto regions = regionsOf(capture(scratch, "squeeze_excite.pt", {"2x16x8x8"}));
    std::vector<std::string> chains;
    for (const RegionCard& region : regions)
        chains.push_back(region.chainText());
    std::sort(chains.begin(), chains.end());
    ASSERT_EQ(chains, (std::vector<std::string>{"batch_norm -> hardswish", "hardsigmoid -> mul"}));
    for (const RegionCard& region : regions) {
        ASSERT_EQ(region.outputs.size(), 1u) << region.chainText();
        if (region.chainText() == "hardsigmoid -> mul") {
            // The scale [2, 16, 1, 1] from the convolution and the activations [2, 16, 8, 8].
            ASSERT_EQ(region.inputs.size(), 2u);
            EXPECT_EQ(region.outputs[0].spec.sizes, (std::vector<std::int64_t>{2, 16, 8, 8}));
        } else {
            // The hardswish output feeds both the pool and the scale's mul: an output of the region.
            EXPECT_EQ(region.outputs[0].spec.sizes, (std::vector<std::int64_t>{2, 16, 8, 8}));
        }
    }
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

TEST(RegionCapture, RegionCardsCarryASampleTheChainReplaysToAndAnEagerTime)
{
    ScratchDir scratch;
    CaptureOptions options = cpuCapture("bn_relu_add_stack.pt", {"2x8x8x8"}, scratch / "project");
    options.samplesPerCard = 1;
    auto report = runCapture(options);
    ASSERT_TRUE(report.ok()) << report.error().toString();
    std::vector<const OperatorCard*> regionCards;
    for (const OperatorCard& card : report->project.cards)
        if (card.isRegion())
            regionCards.push_back(&card);
    ASSERT_EQ(regionCards.size(), 1u);
    const OperatorCard& card = *regionCards.front();
    EXPECT_EQ(card.op, kRegionOp);
    EXPECT_EQ(card.region->text(), "batch_norm -> relu_ -> add");
    EXPECT_EQ(card.callCount, 2);
    ASSERT_TRUE(card.eager.has_value()) << card.eagerNote;
    EXPECT_GT(card.eager->medianUs, 0);
    EXPECT_GT(card.timeShare, 0);
    // Op cards only in the model's total: the region's calls are its members'.
    double opShares = 0;
    for (const OperatorCard& c : report->project.cards)
        if (!c.isRegion())
            opShares += c.timeShare;
    EXPECT_NEAR(opShares, 1.0, 1e-9);
    // The region's share is its members' calls' (once per occurrence), so never above the whole.
    double memberUs = 0;
    for (const ChainMember& member : card.region->members)
        for (const OperatorCard& c : report->project.cards)
            if (c.id == member.cardId)
                memberUs += c.eager->medianUs;
    double modelUs = 0;
    for (const OperatorCard& c : report->project.cards)
        if (!c.isRegion())
            modelUs += c.totalEagerUs();
    EXPECT_NEAR(card.timeShare, memberUs * 2 / modelUs, 1e-9);
    EXPECT_LE(card.timeShare, 1.0);

    // The sample: the region's inputs at its first occurrence and what the forward computed there,
    // which replaying the chain on those inputs gives again.
    ASSERT_EQ(card.samples.size(), 1u);
    EXPECT_EQ(card.samples[0].callPosition, card.region->occurrences[0][0]);
    auto sample = loadSampleFile(scratch / "project" / card.samples[0].file);
    ASSERT_TRUE(sample.ok()) << sample.error().toString();
    ASSERT_EQ(sample->inputs.size(), card.args.size());
    ASSERT_EQ(sample->outputs.size(), 1u);
    std::vector<at::Tensor> inputs;
    for (const c10::IValue& value : sample->inputs)
        inputs.push_back(value.toTensor().clone());
    auto replay = ChainReplay::prepare(*card.region);
    ASSERT_TRUE(replay.ok()) << replay.error().toString();
    auto outputs = replay->run(inputs);
    ASSERT_TRUE(outputs.ok()) << outputs.error().toString();
    ASSERT_EQ(outputs->size(), 1u);
    EXPECT_TRUE(at::allclose(outputs->front(), sample->outputs[0].toTensor()));
    // relu_ then add: not everything is zero or equal to the identity input.
    EXPECT_GT(outputs->front().abs().sum().item<double>(), 0);
}

TEST(ChainReplay, UnknownMemberOpAndUnrebuildableValuesAreOneLineErrors)
{
    RegionChain chain;
    ChainMember member;
    member.op = "aten::no_such_op";
    chain.members.push_back(member);
    auto replay = ChainReplay::prepare(chain);
    ASSERT_FALSE(replay.ok());
    EXPECT_EQ(replay.error().toString().find('\n'), std::string::npos);
    EXPECT_NE(replay.error().message.find("not found"), std::string::npos);

    ArgSpec arg;
    arg.name = "generator";
    arg.type = "Generator?";
    arg.kind = ArgKind::Value;
    arg.value = "cpu-generator";
    auto value = capturedArgumentValue(arg);
    ASSERT_FALSE(value.ok());
    EXPECT_NE(value.error().toString().find("generator"), std::string::npos);
    arg.type = "float";
    arg.value = "-inf";
    auto negInf = capturedArgumentValue(arg);
    ASSERT_TRUE(negInf.ok());
    EXPECT_EQ(negInf->toDouble(), -std::numeric_limits<double>::infinity());
    arg.type = "Scalar";
    arg.value = 3;
    auto integer = capturedArgumentValue(arg);
    ASSERT_TRUE(integer.ok());
    EXPECT_TRUE(integer->isInt()); // an integer Scalar stays one (type promotion depends on it)
}

namespace {

ArgSpec tensorArg(const std::string& name, const TensorSpec& spec)
{
    ArgSpec arg;
    arg.name = name;
    arg.type = "Tensor";
    arg.kind = ArgKind::Tensor;
    arg.tensors = {spec};
    return arg;
}

ArgSpec valueArg(const std::string& name, const std::string& type, nlohmann::json value)
{
    ArgSpec arg;
    arg.name = name;
    arg.type = type;
    arg.kind = value.is_null() ? ArgKind::None : ArgKind::Value;
    arg.value = std::move(value);
    return arg;
}

// in0.add_(in1).to(torch.bfloat16) on float16[4]: an in-place member and a dtype argument.
RegionChain addInPlaceThenToBfloat16()
{
    const TensorSpec half{"float16", {4}, {1}, "cpu"};
    const TensorSpec bf16{"bfloat16", {4}, {1}, "cpu"};
    RegionChain chain;
    ChainMember add;
    add.op = "aten::add_";
    add.overload = "Tensor";
    add.args = {tensorArg("self", half), tensorArg("other", half), valueArg("alpha", "Scalar", 1)};
    add.sources = {{ChainSource{false, 0, 0}}, {ChainSource{false, 1, 0}}, {}};
    add.outputs = {half};
    ChainMember to;
    to.op = "aten::to";
    to.overload = "dtype";
    to.args = {tensorArg("self", half), valueArg("dtype", "ScalarType", static_cast<int>(c10::ScalarType::BFloat16)),
               valueArg("non_blocking", "bool", false), valueArg("copy", "bool", false),
               valueArg("memory_format", "MemoryFormat?", nullptr)};
    to.sources = {{ChainSource{true, 0, 0}}, {}, {}, {}, {}};
    to.outputs = {bf16};
    chain.members = {add, to};
    chain.outputs = {ChainSource{true, 1, 0}};
    return chain;
}

} // namespace

TEST(ChainReplay, Float64ReplayWidensInputsAndDtypeArgumentsAndLeavesTheInputsAlone)
{
    const RegionChain chain = addInPlaceThenToBfloat16();
    // Sums that float16 and then bfloat16 must round.
    const at::Tensor a = at::tensor({1000.0, 3.0, -2.5, 0.125}, at::kDouble).to(at::kHalf);
    const at::Tensor b = at::tensor({0.375, 0.001, 2.5, 1e-4}, at::kDouble).to(at::kHalf);
    const at::Tensor exact = a.to(at::kDouble) + b.to(at::kDouble);

    auto widened = ChainReplay::prepare(chain, ReplayPrecision::Float64);
    ASSERT_TRUE(widened.ok()) << widened.error().toString();
    const at::Tensor aBefore = a.clone();
    auto golden = widened->run({a, b});
    ASSERT_TRUE(golden.ok()) << golden.error().toString();
    ASSERT_EQ(golden->size(), 1u);
    EXPECT_EQ(golden->front().scalar_type(), at::kDouble); // to(bfloat16) became to(float64)
    EXPECT_TRUE(at::equal(golden->front(), exact));
    EXPECT_TRUE(at::equal(a, aBefore)); // the in-place member wrote into a float64 copy

    auto asCaptured = ChainReplay::prepare(chain);
    ASSERT_TRUE(asCaptured.ok()) << asCaptured.error().toString();
    const at::Tensor written = a.clone();
    auto eager = asCaptured->run({written, b});
    ASSERT_TRUE(eager.ok()) << eager.error().toString();
    EXPECT_EQ(eager->front().scalar_type(), at::kBFloat16);
    EXPECT_FALSE(at::equal(written, a)); // as eager: add_ wrote into its input
    // Eager rounds twice (float16, then bfloat16): not the exact sum, which the float64 run is.
    EXPECT_FALSE(at::equal(eager->front().to(at::kDouble), exact));
}
