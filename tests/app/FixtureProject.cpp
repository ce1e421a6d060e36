#include "FixtureProject.h"

#include "project/ProjectStore.h"

#include <QDir>
#include <QFile>

#include <initializer_list>

namespace kforge::app::test {
namespace {

using core::ArgKind;
using core::ArgSpec;
using core::OperatorCard;
using core::TensorSpec;

const std::string kDevice = "cuda:0";

TensorSpec bf16(std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides = {})
{
    if (strides.empty()) {
        strides.assign(sizes.size(), 1);
        for (size_t i = sizes.size(); i-- > 1;)
            strides[i - 1] = strides[i] * sizes[i];
    }
    return TensorSpec{"bfloat16", std::move(sizes), std::move(strides), kDevice};
}

ArgSpec tensor(const std::string& name, TensorSpec spec, const std::string& type = "Tensor")
{
    ArgSpec arg;
    arg.name = name;
    arg.type = type;
    arg.kind = ArgKind::Tensor;
    arg.tensors = {std::move(spec)};
    return arg;
}

ArgSpec value(const std::string& name, const std::string& type, nlohmann::json v)
{
    ArgSpec arg;
    arg.name = name;
    arg.type = type;
    arg.kind = ArgKind::Value;
    arg.value = std::move(v);
    return arg;
}

ArgSpec none(const std::string& name, const std::string& type)
{
    ArgSpec arg;
    arg.name = name;
    arg.type = type;
    arg.kind = ArgKind::None;
    return arg;
}

struct CardSpec {
    std::string op;
    std::string overload;
    std::string schema;
    std::vector<ArgSpec> args;
    std::vector<TensorSpec> outputs;
    std::vector<std::int64_t> positions;
    double medianUs = 0; // 0: not timed
};

OperatorCard makeCard(CardSpec spec)
{
    OperatorCard card;
    card.op = spec.op;
    card.overload = spec.overload;
    card.schema = spec.schema;
    card.args = std::move(spec.args);
    card.outputs = std::move(spec.outputs);
    card.key = core::variantKey(card.op, card.overload, card.args);
    card.id = core::cardIdForKey(card.key);
    card.callPositions = spec.positions;
    card.callCount = static_cast<std::int64_t>(spec.positions.size());
    card.vendorBacked = core::isVendorBackedOp(card.op);
    if (card.vendorBacked) {
        card.samplesNote = "vendor-backed (cuBLAS/cuDNN): not sampled; pass --sample-vendor to include";
    } else {
        for (size_t i = 0; i < spec.positions.size() && i < 2; ++i) {
            card.samples.push_back(
                core::SampleRef{spec.positions[i],
                                "samples/" + card.id + "/call-" + std::to_string(spec.positions[i]) + ".pt", 1572864});
        }
    }
    if (spec.medianUs > 0) {
        card.eager = core::EagerTiming{"cuda:0 (NVIDIA H200)", "cuda-events, L2 flushed", spec.medianUs,
                                       spec.medianUs * 0.97,   spec.medianUs * 1.04,      50};
    } else {
        card.eagerNote = "argument 'generator' is opaque: the call cannot be replayed";
    }
    return card;
}

} // namespace

core::Project makeFixtureProject()
{
    const TensorSpec x = bf16({8, 128, 768});
    const TensorSpec heads = bf16({8, 12, 128, 128});
    const std::string linearSchema = "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor";
    const std::string addSchema = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
    const std::string layerNormSchema =
        "aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
        "Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor";
    auto linear = [&](int out, int in, std::vector<std::int64_t> positions, double us) {
        return CardSpec{"aten::linear",
                        "",
                        linearSchema,
                        {tensor("input", bf16({8, 128, in})), tensor("weight", bf16({out, in})),
                         tensor("bias", bf16({out}), "Tensor?")},
                        {bf16({8, 128, out})},
                        std::move(positions),
                        us};
    };

    core::Project project;
    std::vector<CardSpec> specs;
    specs.push_back(
        {"aten::layer_norm",
         "",
         layerNormSchema,
         {tensor("input", x), value("normalized_shape", "SymInt[]", {768}), tensor("weight", bf16({768}), "Tensor?"),
          tensor("bias", bf16({768}), "Tensor?"), value("eps", "float", 1e-5), value("cudnn_enable", "bool", true)},
         {x},
         {0, 9},
         9.8});
    specs.push_back(linear(2304, 768, {1}, 41.2));
    specs.push_back({"aten::matmul",
                     "",
                     "aten::matmul(Tensor self, Tensor other) -> Tensor",
                     {tensor("self", bf16({8, 12, 128, 64}, {294912, 64, 2304, 1})),
                      tensor("other", bf16({8, 12, 64, 128}, {294912, 64, 1, 2304}))},
                     {heads},
                     {2},
                     18.5});
    specs.push_back({"aten::mul",
                     "Scalar",
                     "aten::mul.Scalar(Tensor self, Scalar other) -> Tensor",
                     {tensor("self", heads), value("other", "Scalar", 0.125)},
                     {heads},
                     {3},
                     6.1});
    specs.push_back({"aten::softmax",
                     "int",
                     "aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                     {tensor("self", heads), value("dim", "int", -1), none("dtype", "ScalarType?")},
                     {heads},
                     {4},
                     11.7});
    specs.push_back({"aten::bernoulli_",
                     "float",
                     "aten::bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)",
                     {tensor("self", heads, "Tensor(a!)"), value("p", "float", 0.9),
                      ArgSpec{"generator", "Generator?", ArgKind::Opaque, {}, "torch.Generator"}},
                     {heads},
                     {5},
                     0});
    specs.push_back({"aten::matmul",
                     "",
                     "aten::matmul(Tensor self, Tensor other) -> Tensor",
                     {tensor("self", heads), tensor("other", bf16({8, 12, 128, 64}, {294912, 64, 2304, 1}))},
                     {bf16({8, 12, 128, 64})},
                     {6},
                     17.9});
    specs.push_back(linear(768, 768, {7}, 14.9));
    specs.push_back({"aten::add",
                     "Tensor",
                     addSchema,
                     {tensor("self", x), tensor("other", x), value("alpha", "Scalar", 1)},
                     {x},
                     {8, 13},
                     5.4});
    specs.push_back(linear(3072, 768, {10}, 52.3));
    specs.push_back({"aten::gelu",
                     "",
                     "aten::gelu(Tensor self, *, str approximate='none') -> Tensor",
                     {tensor("self", bf16({8, 128, 3072})), value("approximate", "str", "none")},
                     {bf16({8, 128, 3072})},
                     {11},
                     16.8});
    specs.push_back(linear(768, 3072, {12}, 50.6));

    double total = 0;
    for (CardSpec& spec : specs) {
        project.cards.push_back(makeCard(std::move(spec)));
        total += project.cards.back().totalEagerUs();
        project.capture.totalCalls += project.cards.back().callCount;
    }
    for (OperatorCard& card : project.cards)
        card.timeShare = card.totalEagerUs() / total;

    core::CaptureInfo& info = project.capture;
    info.modelPath = "/home/dev/models/vit_block.pt";
    info.modelSha = "9c1b5e2f0a7d3e41";
    info.inputs = "8x128x768:bfloat16";
    info.device = kDevice;
    info.deviceName = "NVIDIA H200";
    info.torchVersion = "2.11.0+cu130";
    info.kforgeVersion = "0.1.0";
    info.createdUtc = "2026-11-29T12:00:00Z";
    info.ignoredCalls = 1;
    info.samplesPerCard = 2;
    info.sampleBudgetBytes = 1ll << 30;
    info.totalEagerUs = total;
    return project;
}

bool writeProject(const QString& dir, const core::Project& project)
{
    if (!QDir().mkpath(dir))
        return false;
    return core::saveProject(QFile::encodeName(dir).toStdString(), project).ok();
}

bool writeFixtureProject(const QString& dir)
{
    return writeProject(dir, makeFixtureProject());
}

} // namespace kforge::app::test
