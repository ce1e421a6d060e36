// Region cards captured from real TorchScript models (tests/models/make_test_models.py) put back
// into those models: every place capture saw a chain run is found in the model's graph, and the
// rewritten model computes what forward does. The call op serves each region by replaying its
// chain as eager does (capture/ChainReplay.h), so the outputs must be equal bit for bit.

#include "CaptureTestSupport.h"

#include "capture/ChainReplay.h"
#include "capture/TorchModel.h"
#include "region_rewrite/RegionRewrite.h"

#include <gtest/gtest.h>
#include <torch/library.h>
#include <torch/torch.h>

#include <map>

namespace kforge::core {
namespace {

using test::cpuCapture;
using test::ScratchDir;

std::map<std::string, ChainReplay>& replays()
{
    static std::map<std::string, ChainReplay> byKernel;
    return byKernel;
}
int& servedCalls()
{
    static int served = 0;
    return served;
}

std::tuple<bool, std::vector<at::Tensor>> replayRegion(std::vector<std::string> ids, std::vector<at::Tensor> inputs)
{
    const auto found = replays().find(ids.at(0));
    if (found == replays().end())
        return {false, {}};
    auto outputs = found->second.run(inputs);
    if (!outputs)
        throw std::runtime_error(outputs.error().toString());
    ++servedCalls();
    return {true, outputs.value()};
}

TORCH_LIBRARY(kforge_replay, m)
{
    m.def("region_call(str[] kernels, Tensor[] inputs) -> (bool, Tensor[])", &replayRegion);
}

struct ModelCase {
    std::string model;
    std::vector<std::string> inputs;
};

class RegionRewriteModels : public ::testing::TestWithParam<ModelCase> {};

TEST_P(RegionRewriteModels, EveryCapturedOccurrenceIsReplacedAndTheModelComputesTheSame)
{
    const ModelCase& c = GetParam();
    ScratchDir scratch;
    CaptureOptions options = cpuCapture(c.model, c.inputs, scratch / "project");
    options.samplesPerCard = 0;
    auto report = runCapture(options);
    ASSERT_TRUE(report.ok()) << report.error().toString();

    replays().clear();
    servedCalls() = 0;
    std::vector<RegionKernelChain> kernels;
    size_t occurrences = 0;
    for (const OperatorCard& card : report->project.cards) {
        if (!card.isRegion())
            continue;
        auto replay = ChainReplay::prepare(*card.region);
        ASSERT_TRUE(replay.ok()) << replay.error().toString();
        const std::string id = "k" + std::to_string(kernels.size());
        replays().emplace(id, std::move(replay.value()));
        kernels.push_back({id, *card.region});
        occurrences += card.region->occurrences.size();
    }
    ASSERT_FALSE(kernels.empty()) << c.model << " has no region card";

    auto module = loadTorchScript(test::modelPath(c.model), c10::Device(c10::kCPU));
    ASSERT_TRUE(module.ok()) << module.error().toString();
    auto spec = parseInputSpec(c.inputs);
    ASSERT_TRUE(spec.ok()) << spec.error().toString();
    auto inputs = makeInputs(spec.value(), c10::Device(c10::kCPU), 7);
    ASSERT_TRUE(inputs.ok()) << inputs.error().toString();

    auto groups = addRegionMethod(module.value(), kernels, "kforge_replay::region_call", "regions_forward");
    ASSERT_TRUE(groups.ok()) << groups.error().toString();
    int replaced = 0;
    for (const RegionRewriteGroup& group : groups.value()) {
        EXPECT_GT(group.replaced, 0) << group.chainText << ": " << group.note;
        replaced += group.replaced;
    }
    EXPECT_EQ(static_cast<size_t>(replaced), occurrences) << "places replaced vs occurrences captured";

    c10::InferenceMode inferenceMode;
    const at::Tensor expected = forwardOpByOp(module.value(), inputs.value()).toTensor();
    const at::Tensor got = forwardOpByOp(module.value(), inputs.value(), "regions_forward").toTensor();
    EXPECT_EQ(static_cast<size_t>(servedCalls()), occurrences);
    EXPECT_TRUE(torch::equal(got, expected)) << "max abs diff " << (got - expected).abs().max().item<double>();
}

INSTANTIATE_TEST_SUITE_P(
    CapturedModels, RegionRewriteModels,
    ::testing::Values(ModelCase{"bn_relu_add_stack.pt", {"2x8x8x8"}}, ModelCase{"rms_norm_written_out.pt", {"2x8x32"}},
                      ModelCase{"scaled_masked_softmax.pt", {"2x4x8x16", "2x4x8x16", "2x4x8x16"}},
                      ModelCase{"gelu_tanh_written_out.pt", {"4x64"}}, ModelCase{"swiglu_mlp.pt", {"2x8x32"}},
                      ModelCase{"residual_norm.pt", {"2x8x32"}}, ModelCase{"basic_block.pt", {"2x8x8x8"}},
                      ModelCase{"conv_gn_block.pt", {"2x3x16x16"}}, ModelCase{"transformer_block.pt", {"2x8x32"}},
                      ModelCase{"mixed_precision_block.pt", {"2x8x32:bfloat16"}}),
    [](const ::testing::TestParamInfo<ModelCase>& info) {
        std::string name = info.param.model.substr(0, info.param.model.find('.'));
        return name;
    });

} // namespace
} // namespace kforge::core
