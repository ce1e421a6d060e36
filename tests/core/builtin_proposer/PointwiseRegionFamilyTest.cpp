// PointwiseRegionFamily on hand-made region cards (RegionChainBuilder.h): every layout path compiles
// with NVRTC along a search chain, the operand modes and plan, and the refusals the coverage check
// reports. Numbers: emulation/emulate_pointwise_regions.py.

#include "CandidateChecks.h"
#include "RegionChainBuilder.h"

#include "builtin_proposer/BuiltinProposer.h"

#include <gtest/gtest.h>

using namespace kforge::core;
using namespace kforge::core::test_candidates;
using namespace kforge::core::test_regions;
using nlohmann::json;

namespace {

// x * sigmoid(x) * y over [rows, cols] of `dtype`, y broadcast per column when `perColumn`.
OperatorCard siluGate(const std::string& dtype, std::int64_t rows, std::int64_t cols, bool perColumn)
{
    RegionChainBuilder b;
    const TensorSpec t = spec(dtype, {rows, cols});
    const Value x = b.input(t);
    const Value y = b.input(perColumn ? spec(dtype, {cols}) : t);
    const Value s = b.unary("aten::sigmoid", x);
    b.output(b.binary("aten::mul", b.binary("aten::mul", x, s, t), y, t));
    return b.card();
}

std::string rootSource(const OperatorCard& card, json* params = nullptr)
{
    BuiltinProposer proposer(card);
    SearchTree tree(card.id, 1);
    std::atomic<bool> stop{false};
    auto root = proposer.proposeRoot(tree, stop);
    EXPECT_TRUE(root) << root.error().toString();
    if (!root)
        return "";
    if (params)
        *params = root->provenance.details["params"];
    EXPECT_EQ(root->provenance.details["family"], "pointwise_region");
    return root->candidate.source;
}

} // namespace

TEST(PointwiseRegionFamily, FlatAndBroadcastChainsCompileForEveryDtype)
{
    for (const std::string dtype : {"float32", "float16", "bfloat16"})
        for (const bool perColumn : {false, true})
            for (const std::int64_t cols : {96, 197}) {
                SCOPED_TRACE(dtype + (perColumn ? " per-column" : " full") + " cols " + std::to_string(cols));
                growChain(siluGate(dtype, 33, cols, perColumn), 5, true);
            }
}

TEST(PointwiseRegionFamily, TransposedInputZeroDimScalarAndConditionCompile)
{
    RegionChainBuilder b;
    const TensorSpec out = spec("bfloat16", {48, 40});
    const Value a = b.input(spec("bfloat16", {48, 40}, {1, 48})); // a transposed view
    const Value y = b.input(out);
    const Value s = b.input(spec("float32", {}));
    const Value cond = b.input(spec("bool", {48, 40}));
    const Value m = b.binary("aten::mul", y, a, out); // eager's output follows y: a is strided
    const Value scaled = b.binary("aten::mul", m, s, out);
    const Value g = b.call("aten::gelu", "", {{"self", scaled}, {"approximate", json("tanh")}}, out);
    b.output(b.call("aten::where", "ScalarOther", {{"condition", cond}, {"self", g}, {"other", json(0.0)}}, out));
    const OperatorCard card = b.card();
    json params;
    const std::string source = rootSource(card, &params);
    EXPECT_NE(source.find("//   in0 bfloat16 strided"), std::string::npos) << source;
    EXPECT_NE(source.find("//   in2 float32 scalar"), std::string::npos) << source;
    EXPECT_NE(source.find("//   in3 bool flat"), std::string::npos) << source;
    EXPECT_NE(source.find("kfOffset_in0"), std::string::npos);
    EXPECT_EQ(source.find("TAIL"), std::string::npos); // strided: vectors divide the innermost dim
    EXPECT_EQ(params["vector_width"], 8);
    growChain(card, 6, true);
}

TEST(PointwiseRegionFamily, PlanPassesEveryInputAndOutput)
{
    RegionChainBuilder b;
    const TensorSpec t = spec("float16", {1001});
    const Value x = b.input(t);
    const Value unused = b.input(t); // read only by a member whose result nobody uses
    b.unary("aten::neg", unused);
    const Value r = b.unary("aten::relu", x);
    b.output(r);
    b.output(b.unary("aten::exp", r));
    const OperatorCard card = b.card();
    BuiltinProposer proposer(card);
    SearchTree tree(card.id, 1);
    std::atomic<bool> stop{false};
    auto root = proposer.proposeRoot(tree, stop);
    ASSERT_TRUE(root) << root.error().toString();
    const json& launch = root->candidate.launchPlan["launches"][0];
    EXPECT_EQ(launch["args"], json({"ptr:in0", "ptr:in1", "ptr:out0", "ptr:out1"}));
    EXPECT_EQ(launch["kernel"], "kf_pointwise_region");
    EXPECT_NE(root->candidate.source.find("//   in1 float16 unused"), std::string::npos);
    EXPECT_NE(root->candidate.source.find("TAIL"), std::string::npos); // 1001 = 125 vectors of 8 + 1
    expectGoodCandidate(card, root->candidate, "root");
}

TEST(PointwiseRegionFamily, RefusesRegionsItCannotCoverWithTheReason)
{
    {
        RegionChainBuilder b;
        const TensorSpec t = spec("float32", {4, 8});
        const Value x = b.input(t);
        const Value m = b.binary("aten::mul", x, json(0.125), t);
        b.output(b.call("aten::_softmax", "", {{"self", m}, {"dim", json(-1)}, {"half_to_float", json(false)}}, t));
        auto supported = BuiltinProposer::supports(b.card());
        ASSERT_FALSE(supported);
        EXPECT_EQ(supported.error().code, ErrorCode::Unsupported);
        EXPECT_EQ(supported.error().toString(),
                  "built-in proposer, kforge::region: member 1: aten::_softmax: a reduction, norm or softmax, not "
                  "pointwise (not covered yet)");
    }
    {
        RegionChainBuilder b;
        const Value x = b.input(spec("float32", {4, 8}));
        const Value s = b.input(spec("float32", {8}));
        b.output(b.unary("aten::exp", s));
        b.output(b.binary("aten::mul", x, s, spec("float32", {4, 8})));
        auto supported = BuiltinProposer::supports(b.card());
        ASSERT_FALSE(supported);
        EXPECT_NE(supported.error().message.find("region outputs of different sizes"), std::string::npos)
            << supported.error().message;
    }
    {
        RegionChainBuilder b;
        const TensorSpec t = spec("float32", {4, 8});
        TensorSpec host = spec("float32", {});
        host.device = "cpu";
        const Value x = b.input(t);
        const Value s = b.input(host);
        b.output(b.binary("aten::mul", x, s, t));
        auto supported = BuiltinProposer::supports(b.card());
        ASSERT_FALSE(supported);
        EXPECT_EQ(supported.error().message, "input in1 float32[] is on the CPU (the kernel reads device memory)");
    }
}
