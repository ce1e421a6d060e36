// Region kernels in TorchScript graphs: each place a chain runs becomes a guarded call whose
// fallback is the original ops, only where that cannot change what the model computes.

#include "region_rewrite/RegionRewrite.h"
#include "RegionChainBuilder.h"

#include <gtest/gtest.h>
#include <torch/csrc/jit/ir/irparser.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/library.h>
#include <torch/torch.h>

#include <sstream>

namespace kforge::core {
namespace {

using namespace test_regions;

// The test's stand-in for the runtime's call op: serves mul -> add -> relu and counts its calls.
struct CallLog {
    bool serve = true;
    int served = 0;
    int declined = 0;
    std::vector<std::string> lastIds;
};
CallLog& callLog()
{
    static CallLog log;
    return log;
}

std::tuple<bool, std::vector<at::Tensor>> testRegionCall(std::vector<std::string> ids, std::vector<at::Tensor> inputs)
{
    CallLog& log = callLog();
    log.lastIds = ids;
    if (!log.serve || (inputs.size() != 2 && inputs.size() != 5)) {
        ++log.declined;
        return {false, {}};
    }
    ++log.served;
    if (inputs.size() == 5) // rotary: in0, in1 the halves, in2 q, in3 cos, in4 sin
        return {true, {inputs[2] * inputs[3] + at::cat({-inputs[0], inputs[1]}, -1) * inputs[4]}};
    return {true, {at::relu(inputs[0] * inputs[1] + inputs[0])}};
}

TORCH_LIBRARY(kforge_test, m)
{
    m.def("region_call(str[] kernels, Tensor[] inputs) -> (bool, Tensor[])", &testRegionCall);
}

const std::string kCallOp = "kforge_test::region_call";

TensorSpec f32()
{
    return spec("float32", {4, 8});
}

/// relu(x * y + x): in0 = x, in1 = y.
RegionChain mulAddRelu(int alpha = 1)
{
    RegionChainBuilder b;
    const auto x = b.input(f32());
    const auto y = b.input(f32());
    const auto product = b.binary("aten::mul", x, y, f32());
    const auto sum =
        b.call("aten::add", "Tensor", {{"self", product}, {"other", x}, {"alpha", nlohmann::json(alpha)}}, f32());
    b.output(b.unary("aten::relu", sum));
    return *b.card().region;
}

std::shared_ptr<torch::jit::Graph> parse(const std::string& ir)
{
    auto graph = std::make_shared<torch::jit::Graph>();
    torch::jit::parseIR(ir, graph.get());
    return graph;
}

std::vector<at::Tensor> run(const std::shared_ptr<torch::jit::Graph>& graph, const std::vector<at::Tensor>& inputs)
{
    torch::jit::Code code(graph, "test");
    torch::jit::Stack stack(inputs.begin(), inputs.end());
    torch::jit::InterpreterState(code).run(stack);
    std::vector<at::Tensor> outputs;
    for (const c10::IValue& value : stack)
        outputs.push_back(value.toTensor());
    return outputs;
}

int countKind(const torch::jit::Block* block, const std::string& kind)
{
    int count = 0;
    for (const torch::jit::Node* node : block->nodes()) {
        if (node->kind().toQualString() == kind)
            ++count;
        for (const torch::jit::Block* inner : node->blocks())
            count += countKind(inner, kind);
    }
    return count;
}

const char* kChainIr = R"IR(
graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::add(%a, %x, %one)
  %c : Tensor = aten::relu(%b)
  return (%c)
)IR";

class RegionRewriteTest : public ::testing::Test {
protected:
    void SetUp() override { callLog() = CallLog{}; }
    const at::Tensor x = torch::randn({4, 8});
    const at::Tensor y = torch::randn({4, 8});
};

TEST_F(RegionRewriteTest, TheChainBecomesACallThatServesIt)
{
    auto graph = parse(kChainIr);
    const at::Tensor expected = run(parse(kChainIr), {x, y})[0];
    const auto groups = rewriteRegions(graph, {{"k0", mulAddRelu()}}, kCallOp);
    graph->lint();
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].replaced, 1);
    EXPECT_EQ(groups[0].note, "");
    EXPECT_EQ(countKind(graph->block(), kCallOp), 1);
    EXPECT_EQ(countKind(graph->block(), "prim::If"), 1);
    // The original ops are kept, inside the fallback branch only.
    EXPECT_EQ(countKind(graph->block(), "aten::relu"), 1);
    for (const torch::jit::Node* node : graph->nodes())
        EXPECT_NE(node->kind().toQualString(), std::string("aten::relu"));

    const std::vector<at::Tensor> got = run(graph, {x, y});
    EXPECT_EQ(callLog().served, 1);
    EXPECT_EQ(callLog().lastIds, std::vector<std::string>{"k0"});
    EXPECT_TRUE(torch::equal(got[0], expected));
}

/// q * cos + cat(-x2, x1) * sin over [2, 16] halves of 8: in0 = x2, in1 = x1, in2 = q, in3 = cos, in4 = sin.
RegionChain rotary()
{
    RegionChainBuilder b;
    const TensorSpec half = spec("float32", {2, 8}, {16, 1});
    const TensorSpec whole = spec("float32", {2, 16});
    const auto second = b.input(half);
    const auto first = b.input(half);
    const auto q = b.input(whole);
    const auto cos = b.input(whole);
    const auto sin = b.input(whole);
    const auto negated = b.unary("aten::neg", second);
    const auto rotated =
        b.call("aten::cat", "", {{"tensors", std::vector<Value>{negated, first}}, {"dim", nlohmann::json(-1)}}, whole);
    const auto sum = b.call("aten::add", "Tensor",
                            {{"self", b.binary("aten::mul", q, cos, whole)},
                             {"other", b.binary("aten::mul", rotated, sin, whole)},
                             {"alpha", nlohmann::json(1)}},
                            whole);
    b.output(sum);
    return *b.card().region;
}

const char* kRotaryIr = R"IR(
graph(%q : Tensor, %cos : Tensor, %sin : Tensor):
  %one : int = prim::Constant[value=1]()
  %dim : int = prim::Constant[value=-1]()
  %zero : int = prim::Constant[value=0]()
  %eight : int = prim::Constant[value=8]()
  %sixteen : int = prim::Constant[value=16]()
  %x1 : Tensor = aten::slice(%q, %dim, %zero, %eight, %one)
  %x2 : Tensor = aten::slice(%q, %dim, %eight, %sixteen, %one)
  %n : Tensor = aten::neg(%x2)
  %halves : Tensor[] = prim::ListConstruct(%n, %x1)
  %r : Tensor = aten::cat(%halves, %dim)
  %a : Tensor = aten::mul(%q, %cos)
  %b : Tensor = aten::mul(%r, %sin)
  %c : Tensor = aten::add(%a, %b, %one)
  return (%c)
)IR";

TEST_F(RegionRewriteTest, ACatOfAListIsReplacedWithItsList)
{
    const at::Tensor q = torch::randn({2, 16}), cos = torch::randn({2, 16}), sin = torch::randn({2, 16});
    const at::Tensor expected = run(parse(kRotaryIr), {q, cos, sin})[0];
    auto graph = parse(kRotaryIr);
    const auto groups = rewriteRegions(graph, {{"k0", rotary()}}, kCallOp);
    graph->lint();
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].replaced, 1) << groups[0].note;
    EXPECT_EQ(countKind(graph->block(), kCallOp), 1);
    // The cat and its list are in the fallback branch only.
    EXPECT_EQ(countKind(graph->block(), "aten::cat"), 1);
    for (const torch::jit::Node* node : graph->nodes())
        EXPECT_NE(node->kind().toQualString(), std::string("aten::cat"));
    EXPECT_TRUE(torch::allclose(run(graph, {q, cos, sin})[0], expected));
    EXPECT_EQ(callLog().served, 1);
    callLog().serve = false;
    EXPECT_TRUE(torch::equal(run(graph, {q, cos, sin})[0], expected));
    EXPECT_EQ(callLog().declined, 1);
}

TEST_F(RegionRewriteTest, AListReadOutsideTheRegionKeepsTheOriginalOps)
{
    std::string ir = kRotaryIr;
    ir.replace(ir.find("return (%c)"), 11, "%other : Tensor = aten::cat(%halves, %zero)\n  return (%c, %other)");
    auto graph = parse(ir);
    const auto groups = rewriteRegions(graph, {{"k0", rotary()}}, kCallOp);
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].replaced, 0);
    EXPECT_EQ(countKind(graph->block(), kCallOp), 0);
}

TEST_F(RegionRewriteTest, ADeclinedCallRunsTheOriginalOps)
{
    auto graph = parse(kChainIr);
    rewriteRegions(graph, {{"k0", mulAddRelu()}}, kCallOp);
    callLog().serve = false;
    const std::vector<at::Tensor> got = run(graph, {x, y});
    EXPECT_EQ(callLog().declined, 1);
    EXPECT_TRUE(torch::equal(got[0], at::relu(x * y + x)));
}

TEST_F(RegionRewriteTest, KernelsOfOneChainShareTheCall)
{
    auto graph = parse(kChainIr);
    const auto groups = rewriteRegions(graph, {{"k0", mulAddRelu()}, {"k4", mulAddRelu()}}, kCallOp);
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].kernelIds, (std::vector<std::string>{"k0", "k4"}));
    run(graph, {x, y});
    EXPECT_EQ(callLog().lastIds, (std::vector<std::string>{"k0", "k4"}));
}

TEST_F(RegionRewriteTest, AnotherConstantIsAnotherChain)
{
    auto graph = parse(kChainIr);
    const auto groups = rewriteRegions(graph, {{"k0", mulAddRelu(2)}}, kCallOp);
    EXPECT_EQ(groups[0].replaced, 0);
    EXPECT_EQ(groups[0].note, "its chain does not occur in the model's graph");
    EXPECT_EQ(countKind(graph->block(), kCallOp), 0);
}

TEST_F(RegionRewriteTest, AValueReadOutsideTheRegionMustBeAnOutput)
{
    auto graph = parse(R"IR(
graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::add(%a, %x, %one)
  %c : Tensor = aten::relu(%b)
  return (%c, %a)
)IR");
    const auto groups = rewriteRegions(graph, {{"k0", mulAddRelu()}}, kCallOp);
    EXPECT_EQ(groups[0].replaced, 0);
}

TEST_F(RegionRewriteTest, ASecondOutputIsHandedOnFromTheCall)
{
    RegionChainBuilder b;
    const auto in0 = b.input(f32());
    const auto in1 = b.input(f32());
    const auto product = b.binary("aten::mul", in0, in1, f32());
    const auto sum =
        b.call("aten::add", "Tensor", {{"self", product}, {"other", in0}, {"alpha", nlohmann::json(1)}}, f32());
    b.output(b.unary("aten::relu", sum));
    b.output(sum);
    const std::string ir = R"IR(
graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::add(%a, %x, %one)
  %c : Tensor = aten::relu(%b)
  %d : Tensor = aten::neg(%b)
  return (%c, %d)
)IR";
    auto graph = parse(ir);
    const auto groups = rewriteRegions(graph, {{"k0", *b.card().region}}, kCallOp);
    graph->lint();
    ASSERT_EQ(groups[0].replaced, 1);
    callLog().serve = false; // the stand-in serves one output only
    const std::vector<at::Tensor> got = run(graph, {x, y});
    const std::vector<at::Tensor> expected = run(parse(ir), {x, y});
    EXPECT_TRUE(torch::equal(got[0], expected[0]));
    EXPECT_TRUE(torch::equal(got[1], expected[1]));
}

TEST_F(RegionRewriteTest, EveryPlaceTheChainRunsIsReplaced)
{
    const std::string ir = R"IR(
graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::add(%a, %x, %one)
  %c : Tensor = aten::relu(%b)
  %a2 : Tensor = aten::mul(%c, %y)
  %b2 : Tensor = aten::add(%a2, %c, %one)
  %c2 : Tensor = aten::relu(%b2)
  return (%c2)
)IR";
    auto graph = parse(ir);
    const auto groups = rewriteRegions(graph, {{"k0", mulAddRelu()}}, kCallOp);
    graph->lint();
    EXPECT_EQ(groups[0].replaced, 2);
    const std::vector<at::Tensor> got = run(graph, {x, y});
    EXPECT_EQ(callLog().served, 2);
    EXPECT_TRUE(torch::allclose(got[0], run(parse(ir), {x, y})[0]));
}

TEST_F(RegionRewriteTest, AnUnrelatedOpInBetweenIsMovedOutOfTheWay)
{
    const std::string ir = R"IR(
graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %s : Tensor = aten::sin(%y)
  %b : Tensor = aten::add(%a, %x, %one)
  %c : Tensor = aten::relu(%b)
  %d : Tensor = aten::add(%c, %s, %one)
  return (%d)
)IR";
    auto graph = parse(ir);
    const auto groups = rewriteRegions(graph, {{"k0", mulAddRelu()}}, kCallOp);
    graph->lint();
    EXPECT_EQ(groups[0].replaced, 1);
    EXPECT_TRUE(torch::equal(run(graph, {x, y})[0], run(parse(ir), {x, y})[0]));
}

TEST_F(RegionRewriteTest, AWriteInBetweenKeepsTheOriginalOps)
{
    // mul_ changes y after the chain's mul read it: running the chain as one call after it would
    // read the new y.
    auto graph = parse(R"IR(
graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %a : Tensor = aten::mul(%x, %y)
  %w : Tensor = aten::mul_(%y, %two)
  %b : Tensor = aten::add(%a, %x, %one)
  %c : Tensor = aten::relu(%b)
  return (%c, %w)
)IR");
    const auto groups = rewriteRegions(graph, {{"k0", mulAddRelu()}}, kCallOp);
    EXPECT_EQ(groups[0].replaced, 0);
    EXPECT_NE(groups[0].note.find("cannot be brought together"), std::string::npos) << groups[0].note;
}

/// relu_(in0) -> mul(., in1): the in-place member writes a region input.
RegionChain reluInPlaceThenMul()
{
    RegionChainBuilder b;
    const auto in0 = b.input(f32());
    const auto in1 = b.input(f32());
    const auto relu = b.unary("aten::relu_", in0);
    b.output(b.binary("aten::mul", relu, in1, f32()));
    return *b.card().region;
}

TEST_F(RegionRewriteTest, AnInPlaceWriteOfAnInputNobodyElseReadsIsFused)
{
    auto graph = parse(R"IR(
graph(%x : Tensor, %y : Tensor):
  %s : Tensor = aten::sin(%x)
  %r : Tensor = aten::relu_(%s)
  %m : Tensor = aten::mul(%r, %y)
  return (%m)
)IR");
    const auto groups = rewriteRegions(graph, {{"k0", reluInPlaceThenMul()}}, kCallOp);
    EXPECT_EQ(groups[0].replaced, 1) << groups[0].note;
}

TEST_F(RegionRewriteTest, AnInPlaceWriteOfAnInputReadLaterKeepsTheOriginalOps)
{
    for (const char* ir : {R"IR(
graph(%x : Tensor, %y : Tensor):
  %s : Tensor = aten::sin(%x)
  %r : Tensor = aten::relu_(%s)
  %m : Tensor = aten::mul(%r, %y)
  return (%m, %s)
)IR",
                           R"IR(
graph(%x : Tensor, %y : Tensor):
  %r : Tensor = aten::relu_(%x)
  %m : Tensor = aten::mul(%r, %y)
  return (%m)
)IR"}) {
        auto graph = parse(ir);
        const auto groups = rewriteRegions(graph, {{"k0", reluInPlaceThenMul()}}, kCallOp);
        EXPECT_EQ(groups[0].replaced, 0) << ir;
        EXPECT_NE(groups[0].note.find("writes in place a tensor that is read outside"), std::string::npos)
            << groups[0].note;
    }
}

TEST_F(RegionRewriteTest, AModuleIsInlinedSoAChainAcrossSubmodulesIsFound)
{
    torch::jit::Module inner("Inner");
    inner.define(R"(
def forward(self, b):
    return torch.relu(b)
)");
    torch::jit::Module outer("Outer");
    outer.register_module("act", inner);
    outer.define(R"(
def forward(self, x, y):
    return self.act.forward(x * y + x)
)");
    const at::Tensor expected = outer.forward({x, y}).toTensor();
    const auto groups = addRegionMethod(outer, {{"k0", mulAddRelu()}}, kCallOp, "regions_forward");
    ASSERT_TRUE(groups) << groups.error().message;
    EXPECT_EQ(groups.value()[0].replaced, 1) << groups.value()[0].note;
    EXPECT_TRUE(torch::equal(outer.get_method("regions_forward")({x, y}).toTensor(), expected));
    EXPECT_EQ(callLog().served, 1);
    // Forward is as it was: no call of the region op.
    EXPECT_TRUE(torch::equal(outer.forward({x, y}).toTensor(), expected));
    EXPECT_EQ(callLog().served, 1);
    // The method is part of the module: it survives saving and loading.
    std::stringstream saved;
    outer.save(saved);
    torch::jit::Module loaded = torch::jit::load(saved);
    EXPECT_TRUE(torch::equal(loaded.get_method("regions_forward")({x, y}).toTensor(), expected));
    EXPECT_EQ(callLog().served, 2);
    // A second method of that name is refused.
    const auto again = addRegionMethod(outer, {{"k0", mulAddRelu()}}, kCallOp, "regions_forward");
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code, ErrorCode::AlreadyExists);
}

} // namespace
} // namespace kforge::core
