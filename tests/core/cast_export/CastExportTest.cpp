// What `kforge export` selects (core/cast/CastExport): the best proven node per card, the
// --min-speedup and runtime-dispatch fallbacks, compile and sanitizer failures, and an audit that
// covers every card. Compiling and the sanitizer are injected, so no NVRTC or GPU is needed.

#include "cast_export/CastExport.h"
#include "RegionChainBuilder.h"
#include "cast/CastReader.h"
#include "cast/CastWriter.h"
#include "cast/RuntimeOps.h"
#include "project/ProjectJson.h"
#include "search/TreeStore.h"
#include "util/AtomicFile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace kforge::core {
namespace {

using nlohmann::json;

OperatorCard makeCard(const std::string& op, const std::string& overload, const std::string& dtype = "float16")
{
    OperatorCard card;
    card.op = op;
    card.overload = overload;
    ArgSpec self;
    self.name = "self";
    self.type = "Tensor";
    self.kind = ArgKind::Tensor;
    self.tensors = {TensorSpec{dtype, {8, 512}, {512, 1}, "cuda:0"}};
    ArgSpec dim;
    dim.name = "dim";
    dim.type = "int";
    dim.kind = ArgKind::Value;
    dim.value = -1;
    card.args = {self, dim};
    card.outputs = {TensorSpec{dtype, {8, 512}, {512, 1}, "cuda:0"}};
    card.key = variantKey(card.op, card.overload, card.args);
    card.id = cardIdForKey(card.key);
    card.callCount = 1;
    return card;
}

Candidate candidate(const std::string& tag)
{
    Candidate c;
    c.source = "extern \"C\" __global__ void kf(const void* in, void* out) {} // " + tag + "\n";
    c.launchPlan = {
        {"launches", {{{"kernel", "kf"}, {"grid", {8}}, {"block", {128}}, {"args", {"ptr:self", "ptr:out0"}}}}}};
    return c;
}

// A bench report as the evaluator stores it: compiled for `arch`, validated, timed.
json passedDetails(const std::string& arch, std::optional<double> paired)
{
    json timing = {{"method", "cupti kernel activity, L2 flushed"}};
    if (paired)
        timing["speedup"] = *paired;
    return {{"status", "passed"},
            {"compile", {{"ok", true}, {"architecture", arch}}},
            {"evaluation",
             {{"status", "passed"},
              {"checks", {{{"name", "sample call-0: output 0"}, {"passed", true}, {"detail", "max error 0"}}}},
              {"validated_input_sets", 4},
              {"device", {{"gpu", "NVIDIA H200"}, {"architecture", arch}}},
              {"timing", timing}}}};
}

struct NodeSpec {
    NodeSpec(NodeStatus status_) : status(status_) {}
    NodeSpec(NodeStatus status_, double medianUs_, double eagerUs_, std::optional<double> paired_ = std::nullopt,
             std::string arch_ = "sm_90")
        : status(status_), medianUs(medianUs_), eagerUs(eagerUs_), paired(paired_), arch(std::move(arch_))
    {
    }

    NodeStatus status;
    double medianUs = 10;
    double eagerUs = 15;
    std::optional<double> paired;
    std::string arch = "sm_90";
    std::string gpu; // the evaluating worker's GPU model; empty: the details do not name one
};

// A tree whose root and children (all children of the root) are `nodes`, in order.
SearchTree makeTree(const OperatorCard& card, const std::vector<NodeSpec>& nodes)
{
    SearchTree tree(card.id, 7);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const NodeSpec& spec = nodes[i];
        auto id = i == 0 ? tree.addRoot(candidate("n0"), Provenance{}, 0)
                         : tree.addChild("n0", candidate("n" + std::to_string(i)), Provenance{}, 0);
        EXPECT_TRUE(id.ok());
        Evaluation evaluation;
        evaluation.status = spec.status;
        if (spec.status == NodeStatus::Passed) {
            evaluation.latency = LatencyStats{spec.medianUs, spec.medianUs * 0.95, spec.medianUs * 1.05};
            evaluation.eagerUs = spec.eagerUs;
            json details = passedDetails(spec.arch, spec.paired);
            if (!spec.gpu.empty())
                details["worker"] = {{"pid", 1}, {"gpu", {{"gpu", spec.gpu}, {"architecture", spec.arch}}}};
            evaluation.report = EvaluationReport::fromJson(details);
        } else if (isFailure(spec.status)) {
            evaluation.failureReason = "failed: output 0 differs";
        } else {
            evaluation.report = EvaluationReport::fromJson(
                {{"status", "compiled-only"}, {"compile", {{"ok", true}, {"architecture", spec.arch}}}});
        }
        EXPECT_TRUE(tree.recordEvaluation(id.value(), evaluation).ok());
    }
    return tree;
}

// A softmax and a relu card, each with one passed node 2x faster than eager.
struct TwoCards {
    OperatorCard softmax = makeCard("aten::softmax", "int");
    OperatorCard relu = makeCard("aten::relu", "");
    Project project = [this] {
        Project p;
        p.cards = {softmax, relu};
        return p;
    }();
    std::map<std::string, SearchTree> trees{{softmax.id, makeTree(softmax, {{NodeStatus::Passed, 5, 10, 2.0}})},
                                            {relu.id, makeTree(relu, {{NodeStatus::Passed, 5, 10, 2.0}})}};
};

class CastExportTest : public ::testing::Test {
protected:
    CastExportTest()
    {
        options.producer = "kforge test";
        options.createdUtc = "2026-12-01T00:00:00Z";
        options.minTorchVersion = "2.11";
        options.minCudaVersion = "12.8";
        options.compile = [this](const std::string& source, const std::string& arch) -> Result<ExportCompiled> {
            compiles.push_back(arch);
            if (failCompile)
                return makeError(ErrorCode::InvalidArgument, "candidate.cu:3:1: error: expected a ';'");
            return ExportCompiled{"CUBIN:" + arch + ":" + source, "PTX:" + arch};
        };
    }

    ExportResult exportOk(const Project& project, const std::map<std::string, SearchTree>& trees)
    {
        auto result = buildCastExport(project, trees, options);
        EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().toString());
        return result.ok() ? result.value() : ExportResult{};
    }

    ExportOptions options;
    std::vector<std::string> compiles;
    bool failCompile = false;
};

TEST_F(CastExportTest, BestPassedNodeWinsByPairedSpeedupThenLowerMedian)
{
    Project project;
    const OperatorCard card = makeCard("aten::softmax", "int");
    project.cards = {card};
    // n1: fastest by eager/median but its paired speedup is lower; n2 failed; n3 and n4 tie on the
    // paired speedup and n4 has the lower median; n5 compiled only.
    const SearchTree tree = makeTree(card,
                                     {{NodeStatus::Passed, 10, 12, 1.2},
                                      {NodeStatus::Passed, 5, 15, 1.5},
                                      {NodeStatus::FailedValidation},
                                      {NodeStatus::Passed, 8, 14, 1.75},
                                      {NodeStatus::Passed, 7, 12, 1.75},
                                      {NodeStatus::CompiledOnly}});
    const ExportResult result = exportOk(project, {{card.id, tree}});
    ASSERT_EQ(result.decisions.size(), 1u);
    const ExportDecision& d = result.decisions[0];
    EXPECT_TRUE(d.custom) << d.reason;
    EXPECT_EQ(d.nodeId, "n4");
    EXPECT_EQ(d.reason, "1.750x (n4), not sanitizer-checked");
    EXPECT_DOUBLE_EQ(*d.speedup, 1.75);
    EXPECT_DOUBLE_EQ(d.medianUs, 7);
    EXPECT_NEAR(d.spreadPercent, 10.0, 1e-9); // (1.05 - 0.95) * 7 / 7

    ASSERT_EQ(result.package.kernels.size(), 1u);
    const CastKernel& k = result.package.kernels[0];
    EXPECT_EQ(k.kind, KernelKind::Custom);
    EXPECT_EQ(k.id, "k0");
    EXPECT_EQ(k.cardId, card.id);
    EXPECT_EQ(k.op, "aten::softmax");
    EXPECT_EQ(k.overload, "int");
    EXPECT_EQ(k.args, json::array({toJson(card.args[0]), toJson(card.args[1])}));
    EXPECT_EQ(k.source, tree.find("n4")->candidate.source);
    EXPECT_EQ(k.cubins.at("sm_90"), "CUBIN:sm_90:" + k.source);
    ASSERT_TRUE(k.ptx.has_value());
    EXPECT_EQ(*k.ptx, "PTX:sm_90");
    EXPECT_EQ(k.ptxArch, "compute_90");
    EXPECT_EQ(k.launchPlan["launches"][0]["kernel"], "kf");
    EXPECT_EQ(k.launchPlan["launches"][0]["grid"], json({8, 1, 1})); // normalized
    EXPECT_DOUBLE_EQ(k.speedup, 1.75);
    EXPECT_DOUBLE_EQ(k.medianUs, 7);
    // Guard: the tensor argument from the card, 16-byte alignment, the measured architecture.
    ASSERT_EQ(k.guard.tensors.size(), 1u);
    EXPECT_EQ(k.guard.tensors[0], (TensorGuard{"self", "float16", {8, 512}, {512, 1}, 16}));
    EXPECT_EQ(k.guard.capabilityMajor, 9);
    EXPECT_EQ(k.guard.capabilityMinor, 0);
    // Validation record: the stored checks, and the sanitizer gate's verdict.
    EXPECT_EQ(k.validation["node"], "n4");
    EXPECT_EQ(k.validation["status"], "passed");
    EXPECT_EQ(k.validation["checks"][0]["name"], "sample call-0: output 0");
    EXPECT_EQ(k.validation["validated_input_sets"], 4);
    EXPECT_EQ(k.validation["sanitizer"], json({{"checked", false}, {"reason", "--sanitize off"}}));
    EXPECT_EQ(result.package.header.architectures, std::vector<std::string>{"sm_90"});
    EXPECT_EQ(
        result.package.audit,
        (std::vector<AuditEntry>{{card.id, "aten::softmax.int", "custom", "1.750x (n4), not sanitizer-checked"}}));
}

TEST_F(CastExportTest, WithoutPairedSpeedupTheNodeSpeedupRanks)
{
    Project project;
    const OperatorCard card = makeCard("aten::relu", "");
    project.cards = {card};
    const SearchTree tree = makeTree(card, {{NodeStatus::Passed, 10, 12}, {NodeStatus::Passed, 8, 16}});
    const ExportResult result = exportOk(project, {{card.id, tree}});
    EXPECT_EQ(result.decisions[0].nodeId, "n1");
    EXPECT_DOUBLE_EQ(*result.decisions[0].speedup, 2.0);
}

TEST_F(CastExportTest, BelowMinSpeedupFallsBack)
{
    Project project;
    const OperatorCard card = makeCard("aten::softmax", "int");
    project.cards = {card};
    const std::map<std::string, SearchTree> trees{{card.id, makeTree(card, {{NodeStatus::Passed, 10, 9.3, 0.93}})}};
    ExportResult result = exportOk(project, trees);
    const CastKernel& k = result.package.kernels[0];
    EXPECT_EQ(k.kind, KernelKind::Fallback);
    EXPECT_EQ(k.fallbackReason, "best 0.930x below --min-speedup 1.05 (n0)");
    EXPECT_TRUE(k.cubins.empty());
    EXPECT_FALSE(k.ptx.has_value());
    EXPECT_TRUE(k.source.empty());
    EXPECT_TRUE(compiles.empty()); // nothing compiled for a card that falls back
    EXPECT_EQ(result.package.audit[0].decision, "fallback");
    EXPECT_EQ(result.package.audit[0].reason, k.fallbackReason);

    // 1.04x is noise at the default; a lower bar lets it through.
    const std::map<std::string, SearchTree> close{{card.id, makeTree(card, {{NodeStatus::Passed, 10, 10.4, 1.04}})}};
    EXPECT_FALSE(exportOk(project, close).decisions[0].custom);
    options.minSpeedup = 1.0;
    EXPECT_TRUE(exportOk(project, close).decisions[0].custom);
}

TEST_F(CastExportTest, PreviewListsWhatExportWouldShipAndEveryOtherCardsReasonWithoutCompiling)
{
    Project project;
    const OperatorCard softmax = makeCard("aten::softmax", "int");
    const OperatorCard relu = makeCard("aten::relu", "");
    const OperatorCard unhooked = makeCard("aten::leaky_relu", ""); // no runtime hook
    OperatorCard unsearched = makeCard("aten::tanh", "");
    unsearched.id = "tanh-card";
    project.cards = {softmax, relu, unhooked, unsearched};
    const std::map<std::string, SearchTree> trees{
        {softmax.id, makeTree(softmax, {{NodeStatus::Passed, 5, 10, 2.0}})},
        {relu.id, makeTree(relu, {{NodeStatus::Passed, 10, 10.4, 1.04}})},
        {unhooked.id, makeTree(unhooked, {{NodeStatus::Passed, 5, 10, 2.0}})}};

    const std::vector<ExportPreviewRow> rows = previewCastExport(project, trees, {}, kDefaultMinSpeedup);
    EXPECT_TRUE(compiles.empty()); // a preview compiles nothing
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_TRUE(rows[0].ships);
    EXPECT_EQ(rows[0].op, "aten::softmax.int");
    EXPECT_EQ(rows[0].nodeId, "n0");
    EXPECT_EQ(rows[0].reason, "best 2.000x (n0)");
    EXPECT_FALSE(rows[1].ships);
    EXPECT_EQ(rows[1].nodeId, "n0"); // found, but refused
    EXPECT_DOUBLE_EQ(*rows[1].speedup, 1.04);
    EXPECT_FALSE(rows[2].ships);
    EXPECT_FALSE(rows[3].ships);
    EXPECT_EQ(rows[3].reason, "no search tree (not optimized)");
    EXPECT_TRUE(rows[3].nodeId.empty());

    // The export's own decisions give the same reasons to the cards it does not ship.
    const ExportResult result = exportOk(project, trees);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(rows[i].ships, result.decisions[i].custom) << rows[i].op;
        if (!rows[i].ships) {
            EXPECT_EQ(rows[i].reason, result.decisions[i].reason) << rows[i].op;
        }
    }

    // A lower bar and a card selection, as the export dialog sets them.
    const std::vector<ExportPreviewRow> chosen = previewCastExport(project, trees, {relu.id}, 1.0);
    EXPECT_FALSE(chosen[0].ships);
    EXPECT_EQ(chosen[0].reason, "not selected (--cards)");
    EXPECT_TRUE(chosen[1].ships) << chosen[1].reason;
}

TEST_F(CastExportTest, OperatorTheRuntimeCannotDispatchFallsBackWithItsReason)
{
    Project project;
    // leaky_relu: the built-in proposer covers it, the runtime has no hook for it yet.
    const OperatorCard leaky = makeCard("aten::leaky_relu", "");
    project.cards = {leaky};
    const ExportResult result = exportOk(project, {{leaky.id, makeTree(leaky, {{NodeStatus::Passed, 5, 10, 2.0}})}});
    std::string why;
    ASSERT_FALSE(runtimeHookFor(leaky.qualifiedName(), why).has_value());
    EXPECT_FALSE(result.decisions[0].custom);
    EXPECT_EQ(result.decisions[0].reason, "best 2.000x (n0); " + why);
    EXPECT_NE(result.decisions[0].reason.find("no dispatch hook for aten::leaky_relu"), std::string::npos);
    EXPECT_TRUE(compiles.empty());
}

TEST_F(CastExportTest, CompositeOperatorsAreDispatchedAsThemselves)
{
    for (const char* op :
         {"aten::layer_norm", "aten::group_norm", "aten::batch_norm", "aten::rms_norm", "aten::adaptive_avg_pool2d",
          "aten::max_pool2d", "aten::embedding", "aten::type_as", "aten::contiguous", "aten::reshape",
          "aten::max_pool1d", "aten::max_pool3d", "aten::avg_pool1d"}) {
        std::string why;
        const auto hook = runtimeHookFor(op, why);
        ASSERT_TRUE(hook.has_value()) << op << ": " << why;
        EXPECT_EQ(hook->op, op);
        EXPECT_EQ(hook->overload, "");
    }
    std::string why;
    const auto to = runtimeHookFor("aten::to.dtype", why); // the dtype overload only
    ASSERT_TRUE(to.has_value()) << why;
    EXPECT_EQ(to->op, "aten::to");
    EXPECT_EQ(to->overload, "dtype");
    EXPECT_FALSE(runtimeHookFor("aten::to.dtype_layout", why).has_value());
    const auto flatten = runtimeHookFor("aten::flatten.using_ints", why); // a reshape that may copy
    ASSERT_TRUE(flatten.has_value()) << why;
    EXPECT_EQ(flatten->op, "aten::flatten");
    EXPECT_EQ(flatten->overload, "using_ints");
}

TEST_F(CastExportTest, StatisticsAndIndexReductionsAreDispatchedAsThemselves)
{
    // Each as the capture records it: overload and all (var.dim and var.correction are two hooks).
    const std::pair<const char*, const char*> hooks[] = {{"aten::var", "correction"},
                                                         {"aten::std", "correction"},
                                                         {"aten::var_mean", "correction"},
                                                         {"aten::std_mean", "correction"},
                                                         {"aten::var", "dim"},
                                                         {"aten::std", "dim"},
                                                         {"aten::var_mean", "dim"},
                                                         {"aten::std_mean", "dim"},
                                                         {"aten::logsumexp", ""},
                                                         {"aten::argmax", ""},
                                                         {"aten::argmin", ""},
                                                         {"aten::max", "dim"},
                                                         {"aten::min", "dim"},
                                                         {"aten::amax", ""},
                                                         {"aten::amin", ""},
                                                         {"aten::prod", "dim_int"},
                                                         {"aten::linalg_vector_norm", ""},
                                                         {"aten::instance_norm", ""},
                                                         {"aten::max", ""},
                                                         {"aten::min", ""}};
    for (const auto& [op, overload] : hooks) {
        const std::string qualified = std::string(op) + (*overload ? std::string(".") + overload : std::string());
        std::string why;
        const auto hook = runtimeHookFor(qualified, why);
        ASSERT_TRUE(hook.has_value()) << qualified << ": " << why;
        EXPECT_EQ(hook->op, op);
        EXPECT_EQ(hook->overload, overload);
    }
}

TEST_F(CastExportTest, ScansAndAveragePoolsAreDispatchedAsThemselves)
{
    for (const char* op : {"aten::cumsum", "aten::cumprod", "aten::avg_pool2d", "aten::avg_pool3d"}) {
        std::string why;
        const auto hook = runtimeHookFor(op, why);
        ASSERT_TRUE(hook.has_value()) << op << ": " << why;
        EXPECT_EQ(hook->op, op);
        EXPECT_EQ(hook->overload, "");
    }
}

TEST_F(CastExportTest, InPlaceUnaryOperatorsAreDispatchedAsThemselves)
{
    // The built-in proposer covers relu_ and silu_ (ResNet's ReLU(inplace=True)): the runtime must
    // hook them in place, or export would list every such kernel as a fallback.
    for (const char* op : {"aten::relu_", "aten::silu_"}) {
        std::string why;
        const auto hook = runtimeHookFor(op, why);
        ASSERT_TRUE(hook.has_value()) << op << ": " << why;
        EXPECT_EQ(hook->op, op);
    }
    std::string why;
    EXPECT_FALSE(runtimeHookFor("aten::gelu_", why).has_value()); // not covered, not hooked
}

TEST_F(CastExportTest, CatIsDispatchedAsItselfWithItsListGuardedElementByElement)
{
    std::string why;
    const auto hook = runtimeHookFor("aten::cat", why);
    ASSERT_TRUE(hook.has_value()) << why;
    EXPECT_EQ(hook->op, "aten::cat");
    // The runtime's cat hook names the list's tensors as the guard does.
    OperatorCard card = makeCard("aten::cat", "");
    card.args = {
        ArgSpec{"tensors",
                "Tensor[]",
                ArgKind::TensorList,
                {TensorSpec{"float32", {2, 3}, {3, 1}, "cuda:0"}, TensorSpec{"float32", {2, 5}, {1, 2}, "cuda:0"}},
                nullptr},
        ArgSpec{"dim", "int", ArgKind::Value, {}, 1}};
    const KernelGuard guard = guardForCard(card, "sm_90", 16);
    ASSERT_EQ(guard.tensors.size(), 2u);
    EXPECT_EQ(guard.tensors[0].arg, "tensors[0]");
    EXPECT_EQ(guard.tensors[1].arg, "tensors[1]");
    EXPECT_EQ(guard.tensors[1].strides, (std::vector<std::int64_t>{1, 2}));
}

TEST_F(CastExportTest, InModelCheckDropsKernelsIntoFallbacksWithTheirReason)
{
    Project project;
    const OperatorCard softmax = makeCard("aten::softmax", "int");
    const OperatorCard relu = makeCard("aten::relu", "");
    project.cards = {softmax, relu};
    ExportResult result = exportOk(project,
                                   {{softmax.id, makeTree(softmax, {{NodeStatus::Passed, 5, 10, 2.0}})},
                                    {relu.id, makeTree(relu, {{NodeStatus::Passed, 5, 10, 1.5}})}});
    ASSERT_TRUE(result.decisions[0].custom);
    ASSERT_TRUE(result.decisions[1].custom);
    const std::string kept = result.decisions[1].reason;

    applyInModelCheck(result,
                      InModelCheck{true,
                                   true,
                                   "outputs within tolerance; 1 kernel dropped",
                                   {{result.decisions[0].kernelId, "the model ran 2.0% faster without it"}}});

    EXPECT_FALSE(result.decisions[0].custom);
    EXPECT_EQ(result.package.kernels[0].kind, KernelKind::Fallback);
    EXPECT_TRUE(result.package.kernels[0].cubins.empty());
    EXPECT_EQ(result.package.audit[0].decision, "fallback");
    EXPECT_NE(result.package.audit[0].reason.find("dropped: the model ran 2.0% faster without it"), std::string::npos);
    EXPECT_EQ(result.package.kernels[1].kind, KernelKind::Custom);
    EXPECT_EQ(result.package.audit[1].reason, kept);
    EXPECT_EQ(result.package.header.architectures, std::vector<std::string>(result.decisions[1].architectures));
    EXPECT_EQ(result.package.auditNotes.back(), "in-model check: passed (outputs within tolerance; 1 kernel dropped)");
    // Still a package the writer and the strict reader accept.
    auto bytes = CastWriter::build(result.package);
    ASSERT_TRUE(bytes.ok()) << bytes.error().toString();
    EXPECT_TRUE(readCast(bytes.value(), "dropped.cast").ok());
}

TEST(InModelCheckJson, RoundTripsAndRefusesAnythingElse)
{
    const InModelCheck check{true, false, "outputs differ", {{"k1", "in-model check: slower"}, {"k4", "x"}}};
    auto back = inModelCheckFromJson(inModelCheckToJson(check));
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(back->run, check.run);
    EXPECT_EQ(back->passed, check.passed);
    EXPECT_EQ(back->reason, check.reason);
    ASSERT_EQ(back->dropped.size(), 2u);
    EXPECT_EQ(back->dropped[1].kernelId, "k4");
    EXPECT_EQ(back->dropped[0].reason, "in-model check: slower");
    EXPECT_FALSE(inModelCheckFromJson(nlohmann::json::parse("{\"run\": true}")).ok());
    EXPECT_FALSE(inModelCheckFromJson(nlohmann::json()).ok());
}

TEST_F(CastExportTest, CompileFailureFallsBackWithTheCompilerLine)
{
    Project project;
    const OperatorCard card = makeCard("aten::softmax", "int");
    project.cards = {card};
    failCompile = true;
    const ExportResult result = exportOk(project, {{card.id, makeTree(card, {{NodeStatus::Passed, 5, 10, 2.0}})}});
    EXPECT_FALSE(result.decisions[0].custom);
    EXPECT_EQ(result.decisions[0].reason,
              "best 2.000x (n0); compile for sm_90 failed: candidate.cu:3:1: error: expected a ';'");
    EXPECT_TRUE(result.package.header.architectures.empty());
    EXPECT_TRUE(CastWriter::build(result.package).ok());
}

TEST_F(CastExportTest, ArchitecturesAsAskedGuardOnTheMeasuredOneAndPtxOfTheOldest)
{
    Project project;
    const OperatorCard card = makeCard("aten::softmax", "int");
    project.cards = {card};
    const std::map<std::string, SearchTree> trees{{card.id, makeTree(card, {{NodeStatus::Passed, 5, 10, 2.0}})}};
    options.architectures = {"sm_100", "sm_90", "sm_80"};
    ExportResult result = exportOk(project, trees);
    const CastKernel& k = result.package.kernels[0];
    EXPECT_EQ(compiles, (std::vector<std::string>{"sm_100", "sm_90", "sm_80"}));
    EXPECT_EQ(k.cubins.size(), 3u);
    EXPECT_EQ(k.ptxArch, "compute_80");
    EXPECT_EQ(*k.ptx, "PTX:sm_80");
    EXPECT_EQ(k.guard.capabilityMajor, 9); // measured on sm_90
    EXPECT_EQ(result.package.header.architectures, (std::vector<std::string>{"sm_100", "sm_80", "sm_90"}));

    // Measured on an architecture that is not exported: the guard names the first one asked for.
    options.architectures = {"sm_100"};
    result = exportOk(project, trees);
    EXPECT_EQ(result.package.kernels[0].guard.capabilityMajor, 10);
    EXPECT_EQ(result.package.kernels[0].guard.capabilityMinor, 0);

    // No --arch: the architecture the node was measured on, else sm_90.
    compiles.clear();
    options.architectures.clear();
    result = exportOk(project, {{card.id, makeTree(card, {{NodeStatus::Passed, 5, 10, 2.0, "sm_86"}})}});
    EXPECT_EQ(compiles, std::vector<std::string>{"sm_86"});
    EXPECT_EQ(result.package.kernels[0].guard.capabilityMajor, 8);
    EXPECT_EQ(result.package.kernels[0].guard.capabilityMinor, 6);
    compiles.clear();
    result = exportOk(project, {{card.id, makeTree(card, {{NodeStatus::Passed, 5, 10, 2.0, ""}})}});
    EXPECT_EQ(compiles, std::vector<std::string>{"sm_90"});
    EXPECT_EQ(result.package.header.architectures, std::vector<std::string>{"sm_90"});

    options.architectures = {"sm90"};
    EXPECT_FALSE(buildCastExport(project, trees, options).ok());
}

TEST_F(CastExportTest, BeforeCardSeesEveryCardAndCanStopTheExport)
{
    const TwoCards cards;
    const Project& project = cards.project;
    const std::map<std::string, SearchTree>& trees = cards.trees;
    std::vector<std::string> seen;
    std::vector<std::string> sanitized;
    options.sanitize = [&](const OperatorCard& card, const SearchNode&) -> Result<SanitizerVerdict> {
        sanitized.push_back(card.op);
        return SanitizerVerdict{json{{"checked", true}, {"passed", true}}, ""};
    };
    options.beforeCard = [&](std::size_t index, std::size_t count) {
        seen.push_back(std::to_string(index) + "/" + std::to_string(count));
        return true;
    };
    EXPECT_EQ(exportOk(project, trees).decisions.size(), 2u);
    EXPECT_EQ(seen, (std::vector<std::string>{"0/2", "1/2"}));

    // A stop before the second card: the first card's work is done, then the export ends, cancelled.
    sanitized.clear();
    options.beforeCard = [&](std::size_t index, std::size_t) { return index < 1; };
    auto stopped = buildCastExport(project, trees, options);
    ASSERT_FALSE(stopped.ok());
    EXPECT_EQ(stopped.error().code, ErrorCode::Cancelled);
    EXPECT_EQ(stopped.error().toString(), "card 2 of 2: export cancelled: nothing written");
    EXPECT_EQ(sanitized, std::vector<std::string>{"aten::softmax"});
}

// Six cards of hooked ops, each with one passed node 2x faster than eager.
struct SixCards {
    Project project;
    std::map<std::string, SearchTree> trees;
    SixCards()
    {
        for (const char* op : {"aten::relu", "aten::tanh", "aten::sigmoid", "aten::silu", "aten::neg", "aten::rsqrt"}) {
            const OperatorCard card = makeCard(op, "");
            project.cards.push_back(card);
            trees.emplace(card.id, makeTree(card, {{NodeStatus::Passed, 5, 10, 2.0}}));
        }
    }
};

// A sanitizer gate that takes `duration` and counts how many run at once; tanh's finds something.
struct CountingGate {
    std::chrono::milliseconds duration{150};
    std::mutex mutex;
    int running = 0, most = 0;
    std::vector<std::string> checked;

    Result<SanitizerVerdict> operator()(const OperatorCard& card)
    {
        {
            std::lock_guard lock(mutex);
            most = std::max(most, ++running);
            checked.push_back(card.op);
        }
        std::this_thread::sleep_for(duration);
        std::lock_guard lock(mutex);
        --running;
        if (card.op == "aten::tanh")
            return SanitizerVerdict{json{{"checked", true}, {"passed", false}},
                                    "compute-sanitizer racecheck: 1 hazard"};
        return SanitizerVerdict{json{{"checked", true}, {"passed", true}}, ""};
    }
};

TEST_F(CastExportTest, ConcurrentSanitizerGatesBuildTheSamePackage)
{
    const SixCards cards;
    CountingGate gate;
    options.sanitize = [&gate](const OperatorCard& card, const SearchNode&) { return gate(card); };
    const ExportResult serial = exportOk(cards.project, cards.trees);
    EXPECT_EQ(gate.most, 1);

    gate.most = 0;
    gate.checked.clear();
    options.sanitizeConcurrency = 3;
    const ExportResult concurrent = exportOk(cards.project, cards.trees);
    EXPECT_EQ(gate.most, 3) << "six gates of 150 ms, at most three at once";
    EXPECT_EQ(gate.running, 0);
    std::sort(gate.checked.begin(), gate.checked.end());
    EXPECT_EQ(gate.checked,
              (std::vector<std::string>{"aten::neg", "aten::relu", "aten::rsqrt", "aten::sigmoid", "aten::silu",
                                        "aten::tanh"}));

    // The same decisions in card order, and the same bytes.
    ASSERT_EQ(concurrent.decisions.size(), 6u);
    for (std::size_t i = 0; i < 6; ++i) {
        EXPECT_EQ(concurrent.decisions[i].cardId, cards.project.cards[i].id);
        EXPECT_EQ(concurrent.decisions[i].reason, serial.decisions[i].reason);
        EXPECT_EQ(concurrent.decisions[i].custom, serial.decisions[i].custom);
    }
    EXPECT_EQ(concurrent.decisions[1].reason, "best 2.000x (n0); sanitizer: compute-sanitizer racecheck: 1 hazard");
    EXPECT_EQ(CastWriter::build(concurrent.package).value(), CastWriter::build(serial.package).value());
}

TEST_F(CastExportTest, ConcurrentGatesFinishBeforeACancelOrAnErrorReturns)
{
    const SixCards cards;
    CountingGate gate;
    options.sanitize = [&gate](const OperatorCard& card, const SearchNode&) { return gate(card); };
    options.sanitizeConcurrency = 3;
    options.beforeCard = [](std::size_t index, std::size_t) { return index < 4; };
    auto stopped = buildCastExport(cards.project, cards.trees, options);
    ASSERT_FALSE(stopped.ok());
    EXPECT_EQ(stopped.error().code, ErrorCode::Cancelled);
    EXPECT_EQ(gate.running, 0) << "a gate was still running when the export returned";
    EXPECT_EQ(gate.checked.size(), 4u);

    // A gate that cannot run (--sanitize on without compute-sanitizer) fails the export.
    options.beforeCard = nullptr;
    options.sanitize = [&gate](const OperatorCard& card, const SearchNode&) -> Result<SanitizerVerdict> {
        if (card.op == "aten::silu")
            return makeError(ErrorCode::Unsupported, "compute-sanitizer not found: cannot run the sanitizer gate",
                             "--sanitize on");
        return gate(card);
    };
    auto failed = buildCastExport(cards.project, cards.trees, options);
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().toString(), "--sanitize on: compute-sanitizer not found: cannot run the sanitizer gate");
    EXPECT_EQ(gate.running, 0);
}

TEST_F(CastExportTest, SanitizerFindingFallsBackAndACleanRunIsRecorded)
{
    const TwoCards cards;
    const Project& project = cards.project;
    const OperatorCard& softmax = cards.softmax;
    const OperatorCard& relu = cards.relu;
    const std::map<std::string, SearchTree>& trees = cards.trees;
    std::vector<std::string> checked;
    options.sanitize = [&](const OperatorCard& card, const SearchNode& node) -> Result<SanitizerVerdict> {
        checked.push_back(card.id + "/" + node.id);
        if (card.op == "aten::softmax")
            return SanitizerVerdict{json{{"checked", true}, {"passed", false}},
                                    "compute-sanitizer memcheck: 1 error(s): Invalid __global__ read of size 16 bytes"};
        return SanitizerVerdict{json{{"checked", true}, {"passed", true}}, ""};
    };
    const ExportResult result = exportOk(project, trees);
    EXPECT_EQ(checked, (std::vector<std::string>{softmax.id + "/n0", relu.id + "/n0"}));
    EXPECT_FALSE(result.decisions[0].custom);
    EXPECT_EQ(result.decisions[0].reason,
              "best 2.000x (n0); sanitizer: compute-sanitizer memcheck: 1 error(s): Invalid __global__ read of size 16 "
              "bytes");
    EXPECT_EQ(result.package.kernels[0].validation["sanitizer"]["passed"], false);
    EXPECT_TRUE(result.decisions[1].custom);
    EXPECT_EQ(result.decisions[1].reason, "2.000x (n0)"); // checked: no "not sanitizer-checked"
    EXPECT_EQ(result.package.kernels[1].validation["sanitizer"], json({{"checked", true}, {"passed", true}}));
    for (const std::string& note : result.package.auditNotes)
        EXPECT_EQ(note.find("not sanitizer-checked"), std::string::npos) << note;

    // A gate that cannot run but may be skipped: recorded, noted, still custom.
    options.sanitize = [](const OperatorCard&, const SearchNode&) -> Result<SanitizerVerdict> {
        return SanitizerVerdict{
            json{{"checked", false}, {"reason", "compute-sanitizer not found: not sanitizer-checked"}}, ""};
    };
    const ExportResult skipped = exportOk(project, trees);
    EXPECT_EQ(skipped.decisions[0].reason, "2.000x (n0), not sanitizer-checked");
    EXPECT_EQ(skipped.package.auditNotes.front(), "not sanitizer-checked: k0, k1 (compute-sanitizer not found)");

    // A pass reused from an earlier export: custom as checked, and an audit note names the kernel.
    options.sanitize = [](const OperatorCard& card, const SearchNode&) -> Result<SanitizerVerdict> {
        json record{{"checked", true}, {"passed", true}};
        if (card.op == "aten::relu")
            record["reused"] = json{{"checked_utc", "2026-12-01T15:40:00Z"}};
        return SanitizerVerdict{record, ""};
    };
    const ExportResult reused = exportOk(project, trees);
    EXPECT_EQ(reused.decisions[1].reason, "2.000x (n0)");
    EXPECT_EQ(reused.package.kernels[1].validation["sanitizer"]["reused"]["checked_utc"], "2026-12-01T15:40:00Z");
    EXPECT_EQ(reused.package.auditNotes,
              (std::vector<std::string>{
                  "sanitizer verdicts reused (the same kernel passed on the same samples before): k1"}));

    // --sanitize on with no sanitizer: the export fails.
    options.sanitize = [](const OperatorCard&, const SearchNode&) -> Result<SanitizerVerdict> {
        return makeError(ErrorCode::Unsupported, "compute-sanitizer not found: cannot run the sanitizer gate",
                         "--sanitize on");
    };
    auto failed = buildCastExport(project, trees, options);
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().toString(), "--sanitize on: compute-sanitizer not found: cannot run the sanitizer gate");
}

TEST_F(CastExportTest, EveryCardIsAuditedAndThePackageReadsBack)
{
    Project project;
    const OperatorCard softmax = makeCard("aten::softmax", "int", "bfloat16");
    const OperatorCard relu = makeCard("aten::relu", "");
    OperatorCard linear = makeCard("aten::linear", "");
    linear.vendorBacked = true;
    const OperatorCard add = makeCard("aten::add", "Tensor");
    const OperatorCard gelu = makeCard("aten::gelu", "");
    const OperatorCard sigmoid = makeCard("aten::sigmoid", "");
    project.cards = {softmax, relu, linear, add, gelu, sigmoid};
    const std::map<std::string, SearchTree> trees{
        {softmax.id, makeTree(softmax, {{NodeStatus::Passed, 5, 10, 2.0}})},
        {add.id, makeTree(add, {{NodeStatus::CompiledOnly}, {NodeStatus::FailedCompile}, {NodeStatus::CompiledOnly}})},
        {gelu.id, makeTree(gelu, {{NodeStatus::Passed, 5, 10, 3.0}})},
        {sigmoid.id, makeTree(sigmoid, {{NodeStatus::Passed, 5, 10, 1.5}})}};
    options.cardIds = {softmax.id, relu.id, linear.id, add.id, sigmoid.id}; // gelu is not selected
    options.model = std::string("PK model bytes");
    ExportResult result = exportOk(project, trees);

    ASSERT_EQ(result.package.audit.size(), project.cards.size());
    ASSERT_EQ(result.package.kernels.size(), project.cards.size());
    std::vector<std::string> reasons;
    for (std::size_t i = 0; i < project.cards.size(); ++i) {
        EXPECT_EQ(result.package.audit[i].cardId, project.cards[i].id);
        EXPECT_EQ(result.package.audit[i].op, project.cards[i].qualifiedName());
        EXPECT_EQ(result.package.kernels[i].id, "k" + std::to_string(i));
        reasons.push_back(result.package.audit[i].decision + ": " + result.package.audit[i].reason);
    }
    EXPECT_EQ(reasons,
              (std::vector<std::string>{
                  "custom: 2.000x (n0), not sanitizer-checked",
                  "fallback: no search tree (not optimized)",
                  "fallback: vendor-backed (cuBLAS/cuDNN): not searched",
                  "fallback: no passed node with a measured speedup (3 nodes: 2 compiled-only, 1 failed-compile)",
                  "fallback: not selected (--cards)",
                  "custom: 1.500x (n0), not sanitizer-checked",
              }));
    EXPECT_EQ(result.package.auditNotes, (std::vector<std::string>{"not sanitizer-checked: k0, k5 (--sanitize off)"}));
    applyInModelCheck(result, InModelCheck{false, false, "this build has no CUDA runtime", {}});
    EXPECT_EQ(result.package.auditNotes.back(), "in-model check: not run (this build has no CUDA runtime)");
    EXPECT_FALSE(result.inModelCheck.run);

    // The writer accepts it and the strict reader gives back the same package, notes included.
    auto bytes = CastWriter::build(result.package);
    ASSERT_TRUE(bytes.ok()) << bytes.error().toString();
    auto read = readCast(bytes.value(), "export.cast");
    ASSERT_TRUE(read.ok()) << read.error().toString();
    EXPECT_EQ(read->header.customCount, 2u);
    EXPECT_EQ(read->header.fallbackCount, 4u);
    EXPECT_TRUE(read->header.modelIncluded);
    EXPECT_EQ(read->kernels, result.package.kernels);
    EXPECT_EQ(read->audit, result.package.audit);
    EXPECT_EQ(read->auditNotes, result.package.auditNotes);
    EXPECT_EQ(read->model, options.model);
}

TEST_F(CastExportTest, SpeedupsOfDifferentGpuModelsAreNotCompared)
{
    Project project;
    const OperatorCard card = makeCard("aten::softmax", "int");
    project.cards = {card};
    // Three nodes from an H200 and two from an L40S, whose 3x is the highest speedup overall:
    // export compares only the H200's (the model with the most nodes) and names it.
    std::vector<NodeSpec> nodes = {{NodeStatus::Passed, 10, 12, 1.2},
                                   {NodeStatus::Passed, 5, 15, 3.0},
                                   {NodeStatus::Passed, 8, 14, 1.6},
                                   {NodeStatus::Passed, 6, 12, 2.0},
                                   {NodeStatus::Passed, 7, 12, 1.4}};
    for (std::size_t i = 0; i < nodes.size(); ++i)
        nodes[i].gpu = (i == 1 || i == 3) ? "NVIDIA L40S" : "NVIDIA H200";
    const SearchTree tree = makeTree(card, nodes);
    EXPECT_EQ(bestExportableNode(tree)->id, "n2");
    const ExportResult result = exportOk(project, {{card.id, tree}});
    ASSERT_EQ(result.decisions.size(), 1u);
    EXPECT_EQ(result.decisions[0].nodeId, "n2");
    EXPECT_NE(result.decisions[0].reason.find("on NVIDIA H200"), std::string::npos) << result.decisions[0].reason;

    // One GPU model: the reason does not name it, and the best of all nodes wins.
    for (NodeSpec& node : nodes)
        node.gpu = "NVIDIA H200";
    const SearchTree single = makeTree(card, nodes);
    EXPECT_EQ(bestExportableNode(single)->id, "n1");
    const ExportResult one = exportOk(project, {{card.id, single}});
    EXPECT_EQ(one.decisions[0].reason.find(" on "), std::string::npos) << one.decisions[0].reason;
}

TEST_F(CastExportTest, ARegionKernelShipsWithItsChainAndAGuardOnEveryInput)
{
    test_regions::RegionChainBuilder b;
    const TensorSpec spec = test_regions::spec("float16", {8, 512});
    const auto x = b.input(spec);
    const auto y = b.input(test_regions::spec("float16", {1, 512}));
    b.output(b.unary("aten::relu", b.binary("aten::mul", x, y, spec)));
    OperatorCard region = b.card();
    region.id = cardIdForKey(region.key);
    Project project;
    project.cards = {region};
    SearchTree tree(region.id, 7);
    Candidate c;
    c.source = "extern \"C\" __global__ void kf(const void* a, const void* b, void* out) {}\n";
    c.launchPlan = {
        {"launches",
         {{{"kernel", "kf"}, {"grid", {8}}, {"block", {128}}, {"args", {"ptr:in0", "ptr:in1", "ptr:out0"}}}}}};
    const auto root = tree.addRoot(c, Provenance{}, 0);
    ASSERT_TRUE(root.ok());
    Evaluation evaluation;
    evaluation.status = NodeStatus::Passed;
    evaluation.latency = LatencyStats{5, 4.75, 5.25};
    evaluation.eagerUs = 10;
    evaluation.report = EvaluationReport::fromJson(passedDetails("sm_90", 2.0));
    ASSERT_TRUE(tree.recordEvaluation(root.value(), evaluation).ok());

    const ExportResult result = exportOk(project, {{region.id, tree}});
    ASSERT_EQ(result.package.kernels.size(), 1u);
    const CastKernel& k = result.package.kernels[0];
    EXPECT_EQ(k.kind, KernelKind::Custom) << k.fallbackReason;
    EXPECT_EQ(k.op, kRegionOp);
    EXPECT_EQ(k.region, toJson(*region.region));
    ASSERT_EQ(k.guard.tensors.size(), 2u);
    EXPECT_EQ(k.guard.tensors[0], (TensorGuard{"in0", "float16", {8, 512}, {512, 1}, 16}));
    EXPECT_EQ(k.guard.tensors[1], (TensorGuard{"in1", "float16", {1, 512}, {512, 1}, 16}));
    ASSERT_EQ(result.package.auditNotes.size(), 2u); // not sanitizer-checked, and the region note
    EXPECT_NE(
        result.package.auditNotes[1].find("fused-region kernels k0: served where a model's graph runs their chain"),
        std::string::npos)
        << result.package.auditNotes[1];

    // The package reads back with the chain.
    auto bytes = CastWriter::build(result.package);
    ASSERT_TRUE(bytes.ok()) << bytes.error().toString();
    auto read = readCast(bytes.value(), "region.cast");
    ASSERT_TRUE(read.ok()) << read.error().toString();
    EXPECT_EQ(read->kernels[0].region, k.region);
}

TEST_F(CastExportTest, UnknownCardIdIsAnError)
{
    Project project;
    project.cards = {makeCard("aten::relu", "")};
    options.cardIds = {"0123456789abcdef"};
    auto result = buildCastExport(project, {}, options);
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().toString().find("--cards 0123456789abcdef"), std::string::npos);
}

TEST(CastExportGuard, TensorListsAndCapabilities)
{
    OperatorCard card = makeCard("aten::cat", "");
    ArgSpec list;
    list.name = "tensors";
    list.type = "Tensor[]";
    list.kind = ArgKind::TensorList;
    list.tensors = {TensorSpec{"float32", {2, 3}, {3, 1}, "cuda:0"}, TensorSpec{"float32", {4, 3}, {3, 1}, "cuda:0"}};
    card.args.push_back(list);
    ArgSpec none;
    none.name = "out";
    none.kind = ArgKind::None;
    card.args.push_back(none);
    const KernelGuard guard = guardForCard(card, "sm_120", 16);
    ASSERT_EQ(guard.tensors.size(), 3u);
    EXPECT_EQ(guard.tensors[0].arg, "self");
    EXPECT_EQ(guard.tensors[1].arg, "tensors[0]");
    EXPECT_EQ(guard.tensors[2].arg, "tensors[1]");
    EXPECT_EQ(guard.tensors[2].sizes, (std::vector<std::int64_t>{4, 3}));
    EXPECT_EQ(guard.capabilityMajor, 12);
    EXPECT_EQ(guard.capabilityMinor, 0);
}

TEST(CastExportTrees, MissingTreesAreAbsentAndADamagedOneIsAnError)
{
    const auto dir = std::filesystem::temp_directory_path() / ("kforge_export_trees_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    Project project;
    const OperatorCard a = makeCard("aten::relu", "");
    const OperatorCard b = makeCard("aten::gelu", "");
    project.cards = {a, b};
    ASSERT_TRUE(TreeStore(TreeStore::defaultPath(dir, a.id)).save(makeTree(a, {{NodeStatus::Passed, 5, 10}})).ok());
    auto trees = loadProjectTrees(dir, project);
    ASSERT_TRUE(trees.ok()) << trees.error().toString();
    EXPECT_EQ(trees->size(), 1u);
    EXPECT_EQ(trees->at(a.id).size(), 1u);

    const auto damaged = TreeStore::defaultPath(dir, b.id);
    std::filesystem::create_directories(damaged.parent_path());
    ASSERT_TRUE(writeFileAtomically(damaged, "{\"format\": ").ok());
    trees = loadProjectTrees(dir, project);
    ASSERT_FALSE(trees.ok());
    EXPECT_NE(trees.error().toString().find(damaged.string()), std::string::npos) << trees.error().toString();
    std::filesystem::remove_all(dir);
}

} // namespace
} // namespace kforge::core
