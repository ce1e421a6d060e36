// PointwiseRegionFamily on hand-made region cards (RegionChainBuilder.h): every layout path compiles
// with NVRTC along a search chain, the operand modes and plan, and the refusals the coverage check
// reports. Numbers: emulation/emulate_pointwise_regions.py.

#include "CandidateChecks.h"
#include "RegionChainBuilder.h"

#include "builtin_proposer/BuiltinProposer.h"
#include "builtin_proposer/PointwiseRegionFamily.h"

#include <gtest/gtest.h>

#include <map>

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
        // A group_norm region is not pointwise.
        RegionChainBuilder b;
        const TensorSpec t = spec("float32", {2, 8, 4});
        const Value x = b.input(t);
        const Value m = b.binary("aten::mul", x, json(0.125), t);
        b.output(b.call("aten::group_norm", "",
                        {{"input", m},
                         {"num_groups", json(2)},
                         {"weight", std::monostate{}},
                         {"bias", std::monostate{}},
                         {"eps", json(1e-5)},
                         {"cudnn_enabled", json(true)}},
                        t));
        // Not a pointwise region: the row-region generator takes it (a row per group).
        EXPECT_TRUE(BuiltinProposer::supports(b.card()).ok());
        EXPECT_FALSE(PointwiseRegionFamily::create(b.card()).ok());
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

namespace {

// batch_norm(x, weight, bias, mean, var, training, 0.1, 1e-5) in the chain over x [2, 4, 3, 4]:
// statistics [4] (one per channel, dim 1), `weight` and `mean` given by the caller.
Value batchNormOf(RegionChainBuilder& b, const Value& x, const Value& weight, const Value& mean, bool training)
{
    const TensorSpec channel = spec("float32", {4});
    return b.call("aten::batch_norm", "",
                  {{"input", x},
                   {"weight", weight},
                   {"bias", b.input(channel)},
                   {"running_mean", mean},
                   {"running_var", b.input(channel)},
                   {"training", json(training)},
                   {"momentum", json(0.1)},
                   {"eps", json(1e-5)},
                   {"cudnn_enabled", json(true)}},
                  x.spec);
}

std::string refusalOf(const OperatorCard& card)
{
    auto supported = BuiltinProposer::supports(card);
    EXPECT_FALSE(supported);
    return supported ? "" : supported.error().message;
}

} // namespace

TEST(PointwiseRegionFamily, BatchNormRegionsRefuseWhatAPerChannelOperandCannotBe)
{
    const TensorSpec t = spec("float32", {2, 4, 3, 4});
    const TensorSpec channel = spec("float32", {4});
    { // training: batch statistics are a reduction, not a pointwise row
        RegionChainBuilder b;
        const Value x = b.input(t);
        b.output(b.unary("aten::relu", batchNormOf(b, x, b.input(channel), b.input(channel), true)));
        EXPECT_NE(refusalOf(b.card()).find("training"), std::string::npos) << refusalOf(b.card());
    }
    { // a statistic computed inside the region
        RegionChainBuilder b;
        const Value x = b.input(t);
        const Value weight = b.unary("aten::exp", b.input(channel));
        b.output(b.unary("aten::relu", batchNormOf(b, x, weight, b.input(channel), false)));
        EXPECT_EQ(refusalOf(b.card()), "batch_norm's weight is computed in the region");
    }
    { // one input read per channel by batch_norm and element by element (broadcast on the last dim)
        RegionChainBuilder b;
        const Value x = b.input(t);
        const Value mean = b.input(channel);
        b.output(b.binary("aten::add", batchNormOf(b, x, b.input(channel), mean, false), mean, t));
        EXPECT_NE(refusalOf(b.card()).find("is read per channel by batch_norm and element by element"),
                  std::string::npos)
            << refusalOf(b.card());
    }
    { // a statistic that is not one value per channel
        RegionChainBuilder b;
        const Value x = b.input(t);
        b.output(b.unary("aten::relu", batchNormOf(b, x, b.input(spec("float32", {2})), b.input(channel), false)));
        EXPECT_NE(refusalOf(b.card()).find("is not one value per channel (dim 1)"), std::string::npos)
            << refusalOf(b.card());
    }
    { // the same chain with proper statistics is covered
        RegionChainBuilder b;
        const Value x = b.input(t);
        b.output(b.unary("aten::relu", batchNormOf(b, x, b.input(channel), b.input(channel), false)));
        auto supported = BuiltinProposer::supports(b.card());
        EXPECT_TRUE(supported) << supported.error().toString();
    }
}

namespace {

// Every activation, rounding, interpolation, rounding-division, comparison and logical row over
// one input of `dtype`, with a bool mask and a per-column operand: outputs of the input's dtype and
// bool.
OperatorCard everyNewRow(const std::string& dtype)
{
    RegionChainBuilder b;
    const TensorSpec t = spec(dtype, {16, 24});
    const TensorSpec mask = spec("bool", {16, 24});
    const Value x = b.input(t);
    const Value y = b.input(spec(dtype, {24}));
    const Value m = b.input(spec("bool", {1, 24}));
    Value v = x;
    const auto unary = [&](const char* op, std::vector<Arg> scalars = {}) {
        std::vector<Arg> args{{"self", v}};
        args.insert(args.end(), scalars.begin(), scalars.end());
        v = b.call(op, "", args, t);
    };
    unary("aten::elu", {{"alpha", json(1.5)}, {"scale", json(1.0)}, {"input_scale", json(0.5)}});
    unary("aten::selu");
    unary("aten::celu", {{"alpha", json(0.7)}});
    unary("aten::softplus", {{"beta", json(2)}, {"threshold", json(10)}});
    unary("aten::hardtanh_", {{"min_val", json(-2.0)}, {"max_val", json(2.0)}});
    unary("aten::relu6");
    unary("aten::mish");
    unary("aten::softshrink", {{"lambd", json(0.3)}});
    unary("aten::hardshrink", {{"lambd", json(0.1)}});
    unary("aten::threshold", {{"threshold", json(0.1)}, {"value", json(-1)}});
    for (const char* op :
         {"aten::erfinv", "aten::expm1", "aten::log1p", "aten::log2", "aten::log10", "aten::exp2", "aten::square",
          "aten::sign", "aten::floor", "aten::ceil", "aten::round", "aten::trunc", "aten::frac"})
        unary(op);
    v = b.call("aten::lerp", "Scalar", {{"self", v}, {"end", y}, {"weight", json(0.25)}}, t);
    v = b.call("aten::lerp", "Tensor", {{"self", v}, {"end", x}, {"weight", y}}, t);
    v = b.call("aten::addcmul", "", {{"self", v}, {"tensor1", x}, {"tensor2", y}, {"value", json(0.5)}}, t);
    v = b.call("aten::addcdiv", "", {{"self", v}, {"tensor1", x}, {"tensor2", y}, {"value", json(2)}}, t);
    v = b.call("aten::masked_fill", "Scalar", {{"self", v}, {"mask", m}, {"value", json("-inf")}}, t);
    v = b.call("aten::div", "Tensor_mode", {{"self", v}, {"other", y}, {"rounding_mode", json("floor")}}, t);
    v = b.call("aten::div", "Scalar_mode", {{"self", v}, {"other", json(3)}, {"rounding_mode", json("trunc")}}, t);
    v = b.call("aten::div", "Scalar_mode", {{"self", v}, {"other", json(-0.5)}, {"rounding_mode", json("floor")}}, t);
    b.output(v);
    const Value lt = b.call("aten::lt", "Tensor", {{"self", v}, {"other", y}}, mask);
    const Value ge = b.call("aten::ge", "Scalar", {{"self", x}, {"other", json(0.1)}}, mask);
    const Value both = b.call("aten::logical_and", "", {{"self", lt}, {"other", ge}}, mask);
    b.output(b.call("aten::logical_xor", "", {{"self", both}, {"other", m}}, mask));
    b.output(b.call("aten::bitwise_not", "", {{"self", b.call("aten::logical_not", "", {{"self", v}}, mask)}}, mask));
    return b.card();
}

ArgSpec scalarArg(const std::string& name, json value)
{
    return ArgSpec{name, "Scalar", ArgKind::Value, {}, std::move(value)};
}

// A single-op card of `op` with tensor arguments `tensors` (schema order first) and then `values`.
OperatorCard opCard(const std::string& op, const std::string& overload,
                    const std::vector<std::pair<std::string, TensorSpec>>& tensors, std::vector<ArgSpec> values,
                    const TensorSpec& out)
{
    OperatorCard card;
    card.op = op;
    card.overload = overload;
    for (const auto& [name, t] : tensors)
        card.args.push_back(ArgSpec{name, "Tensor", ArgKind::Tensor, {t}, nullptr});
    for (ArgSpec& v : values)
        card.args.push_back(std::move(v));
    card.outputs = {out};
    card.id = "card-" + op + "-" + overload;
    return card;
}

std::string familyOf(const OperatorCard& card)
{
    BuiltinProposer proposer(card);
    std::atomic<bool> stop{false};
    auto root = proposer.proposeRoot(SearchTree(card.id, 1), stop);
    EXPECT_TRUE(root) << root.error().toString();
    return root ? root->provenance.details.value("family", std::string()) : std::string();
}

} // namespace

TEST(PointwiseRegionFamily, EveryNewRowCompilesForEveryDtype)
{
    for (const std::string dtype : {"float32", "float16", "bfloat16"}) {
        SCOPED_TRACE(dtype);
        const OperatorCard card = everyNewRow(dtype);
        const std::string source = rootSource(card);
        EXPECT_NE(source.find("//   out1 bool flat"), std::string::npos) << source;
        EXPECT_NE(source.find("kfDivFloorScalar("), std::string::npos);
        EXPECT_NE(source.find("erfinvf("), std::string::npos);
        growChain(card, 2, true);
    }
}

TEST(PointwiseRegionFamily, SingleOpCardsRunAsOneMemberChains)
{
    const TensorSpec t = spec("float32", {8, 33});
    std::atomic<bool> stop{false};
    // Out of place: the plan names the card's own arguments.
    const OperatorCard elu =
        opCard("aten::elu", "", {{"self", t}},
               {scalarArg("alpha", 1.0), scalarArg("scale", 1.0), scalarArg("input_scale", 1.0)}, t);
    auto root = BuiltinProposer(elu).proposeRoot(SearchTree(elu.id, 1), stop);
    ASSERT_TRUE(root) << root.error().toString();
    EXPECT_EQ(root->provenance.details["family"], "pointwise_region");
    EXPECT_EQ(root->candidate.launchPlan["launches"][0]["args"], json({"ptr:self", "ptr:out0"}));
    EXPECT_NE(root->candidate.source.find("const t_in0* __restrict__ in0"), std::string::npos);
    expectGoodCandidate(elu, root->candidate, "elu");
    growChain(elu, 3, true);

    const OperatorCard fill =
        opCard("aten::masked_fill", "Scalar", {{"self", spec("bfloat16", {4, 33})}, {"mask", spec("bool", {33})}},
               {scalarArg("value", -1e4)}, spec("bfloat16", {4, 33}));
    root = BuiltinProposer(fill).proposeRoot(SearchTree(fill.id, 1), stop);
    ASSERT_TRUE(root) << root.error().toString();
    EXPECT_EQ(root->candidate.launchPlan["launches"][0]["args"], json({"ptr:self", "ptr:mask", "ptr:out0"}));
    expectGoodCandidate(fill, root->candidate, "masked_fill");

    // In place: out0 is self, so no pointer promises __restrict__.
    const TensorSpec h = spec("float16", {2, 50});
    const OperatorCard hardtanh =
        opCard("aten::hardtanh_", "", {{"self", h}}, {scalarArg("min_val", 0.0), scalarArg("max_val", 6.0)}, h);
    root = BuiltinProposer(hardtanh).proposeRoot(SearchTree(hardtanh.id, 1), stop);
    ASSERT_TRUE(root) << root.error().toString();
    EXPECT_EQ(root->candidate.launchPlan["launches"][0]["args"], json({"ptr:self", "ptr:out0"}));
    EXPECT_EQ(root->candidate.source.find("__restrict__"), std::string::npos) << root->candidate.source;
    EXPECT_NE(root->candidate.source.find("in-place op hardtanh_"), std::string::npos);
    expectGoodCandidate(hardtanh, root->candidate, "hardtanh_");

    // The tuned families keep their ops; what they refuse and the table holds comes here.
    EXPECT_EQ(familyOf(opCard("aten::relu", "", {{"self", t}}, {}, t)), "unary");
    EXPECT_EQ(familyOf(opCard("aten::div", "Tensor_mode", {{"self", t}, {"other", t}},
                              {ArgSpec{"rounding_mode", "str?", ArgKind::Value, {}, "floor"}}, t)),
              "pointwise_region");
    EXPECT_EQ(familyOf(opCard("aten::pow", "Tensor_Scalar", {{"self", t}}, {scalarArg("exponent", 3)}, t)),
              "pointwise_region");
    EXPECT_EQ(familyOf(opCard("aten::pow", "Tensor_Scalar", {{"self", t}}, {scalarArg("exponent", 2)}, t)), "unary");
    EXPECT_EQ(familyOf(opCard("aten::lt", "Scalar", {{"self", t}}, {scalarArg("other", 0)}, spec("bool", {8, 33}))),
              "pointwise_region");
}

TEST(PointwiseRegionFamily, SingleOpCardsRefuseWithTheReason)
{
    const TensorSpec ints = spec("int64", {12});
    EXPECT_EQ(BuiltinProposer::supports(opCard("aten::hardtanh", "", {{"self", ints}},
                                               {scalarArg("min_val", -1), scalarArg("max_val", 1)}, ints))
                  .error()
                  .toString(),
              "built-in proposer, aten::hardtanh: member 0 (hardtanh): int64 operands not covered (hardtanh has no "
              "integer form)");
    const TensorSpec unsigned16 = spec("uint16", {12});
    EXPECT_NE(BuiltinProposer::supports(opCard("aten::abs", "", {{"self", unsigned16}}, {}, unsigned16))
                  .error()
                  .message.find("uint16 tensor not covered"),
              std::string::npos);
    const TensorSpec t = spec("float16", {12});
    const OperatorCard toItself = opCard("aten::to", "dtype_layout", {{"self", t}}, {scalarArg("dtype", 5)}, t);
    EXPECT_NE(BuiltinProposer::supports(toItself).error().message.find("returns the tensor itself"), std::string::npos);
    EXPECT_NE(BuiltinProposer::supports(opCard("aten::atan2", "", {{"self", t}, {"other", t}}, {}, t))
                  .error()
                  .message.find("not covered by the built-in proposer yet"),
              std::string::npos);
    EXPECT_NE(BuiltinProposer::supports(opCard("aten::round", "decimals", {{"self", t}}, {scalarArg("decimals", 1)}, t))
                  .error()
                  .message.find("not covered by the built-in proposer yet"),
              std::string::npos);
}

namespace {

// Every integer form over `dtype` [16, 40] with a per-column operand of the same dtype and a bool
// mask: integer, bool and (through a cast) float outputs.
OperatorCard everyIntegerRow(const std::string& dtype)
{
    RegionChainBuilder b;
    const TensorSpec t = spec(dtype, {16, 40});
    const TensorSpec mask = spec("bool", {16, 40});
    const Value x = b.input(t);
    const Value y = b.input(spec(dtype, {40}));
    const Value m = b.input(spec("bool", {1, 40}));
    Value v = b.binary("aten::add", x, y, t);
    v = b.binary("aten::mul", v, json(3), t);
    v = b.binary("aten::sub", v, y, t);
    v = b.call("aten::rsub", "Scalar", {{"self", v}, {"other", json(7)}, {"alpha", json(2)}}, t);
    for (const char* op : {"aten::abs", "aten::sign", "aten::square", "aten::floor", "aten::relu"})
        v = b.unary(op, b.binary("aten::add", v, x, t));
    if (dtype != "uint8")
        v = b.unary("aten::neg", v);
    v = b.call("aten::clamp", "", {{"self", v}, {"min", json(-3)}, {"max", json(100)}}, t);
    v = b.call("aten::maximum", "", {{"self", v}, {"other", x}}, t);
    v = b.call("aten::minimum", "", {{"self", v}, {"other", y}}, t);
    v = b.call("aten::div", "Tensor_mode", {{"self", v}, {"other", y}, {"rounding_mode", json("floor")}}, t);
    v = b.call("aten::div", "Scalar_mode", {{"self", v}, {"other", json(-3)}, {"rounding_mode", json("trunc")}}, t);
    v = b.call("aten::remainder", "Tensor", {{"self", v}, {"other", x}}, t);
    v = b.call("aten::fmod", "Scalar", {{"self", v}, {"other", json(5)}}, t);
    v = b.call("aten::where", "ScalarOther", {{"condition", m}, {"self", v}, {"other", json(1)}}, t);
    v = b.call("aten::masked_fill", "Scalar", {{"self", v}, {"mask", m}, {"value", json(-1)}}, t);
    v = b.unary("aten::bitwise_not", v);
    b.output(v);
    const Value lt = b.call("aten::lt", "Tensor", {{"self", v}, {"other", y}}, mask);
    const Value eq = b.call("aten::eq", "Scalar", {{"self", x}, {"other", json(16777217)}}, mask);
    b.output(b.call("aten::logical_xor", "", {{"self", lt}, {"other", eq}}, mask));
    const Value wide = b.call("aten::to", "dtype", {{"self", v}, {"dtype", json(6)}}, spec("float32", {16, 40}));
    b.output(b.binary("aten::div", wide, x, spec("float32", {16, 40})));
    return b.card();
}

} // namespace

TEST(PointwiseRegionFamily, IntegerChainsCompileForEveryIntegerDtype)
{
    // Vectors of at most 16 bytes of any flat operand: int64 and a float32 output give 2, int32 4.
    const std::map<std::string, int> widest = {{"int64", 2}, {"int32", 4}, {"int16", 4}, {"int8", 4}, {"uint8", 4}};
    for (const auto& [dtype, width] : widest) {
        SCOPED_TRACE(dtype);
        const OperatorCard card = everyIntegerRow(dtype);
        json params;
        const std::string source = rootSource(card, &params);
        EXPECT_EQ(params["vector_width"], width);
        EXPECT_NE(source.find("kfIntDivFloor("), std::string::npos) << source;
        EXPECT_NE(source.find("//   out0 " + dtype + " flat"), std::string::npos) << source;
        growChain(card, 3, true);
    }
}

TEST(PointwiseRegionFamily, IntegerSingleOpCardsComeHere)
{
    const TensorSpec i64 = spec("int64", {3, 41});
    const TensorSpec i32 = spec("int32", {3, 41});
    std::atomic<bool> stop{false};
    const auto expectPointwise = [&](const OperatorCard& card, const std::string& what) {
        SCOPED_TRACE(what);
        auto root = BuiltinProposer(card).proposeRoot(SearchTree(card.id, 1), stop);
        ASSERT_TRUE(root) << root.error().toString();
        EXPECT_EQ(root->provenance.details["family"], "pointwise_region");
        expectGoodCandidate(card, root->candidate, what);
    };
    // add.Tensor and mul_.Tensor are BinaryFamily's ops, to.dtype UnaryFamily's: integer cards fall through.
    expectPointwise(opCard("aten::add", "Tensor", {{"self", i64}, {"other", i64}}, {scalarArg("alpha", 1)}, i64),
                    "add int64");
    expectPointwise(
        opCard("aten::add_", "Tensor", {{"self", i32}, {"other", spec("int32", {41})}}, {scalarArg("alpha", 2)}, i32),
        "add_ int32");
    expectPointwise(opCard("aten::to", "dtype", {{"self", spec("float32", {3, 41})}}, {scalarArg("dtype", 4)}, i64),
                    "to float32 -> int64");
    expectPointwise(opCard("aten::to", "dtype", {{"self", i64}}, {scalarArg("dtype", 5)}, spec("float16", {3, 41})),
                    "to int64 -> float16");
    expectPointwise(opCard("aten::to", "dtype", {{"self", spec("bool", {3, 41})}}, {scalarArg("dtype", 3)}, i32),
                    "to bool -> int32");
    expectPointwise(opCard("aten::eq", "Scalar", {{"self", i32}}, {scalarArg("other", 5)}, spec("bool", {3, 41})),
                    "eq.Scalar int32");
    expectPointwise(opCard("aten::div", "Tensor", {{"self", i64}, {"other", i64}}, {}, spec("float32", {3, 41})),
                    "true division of int64");
    // A float card stays with its tuned family.
    const TensorSpec f = spec("float32", {3, 41});
    EXPECT_EQ(familyOf(opCard("aten::add", "Tensor", {{"self", f}, {"other", f}}, {scalarArg("alpha", 1)}, f)),
              "binary");
}

namespace {

// Rotary on q [2, heads, seq, dim] (a transposed projection, contiguous [2, seq, heads, dim]):
// q * cos + cat(-q2, q1) * sin, the halves slices of q. in0 = q2, in1 = q1, in2 = q, in3 = cos, in4 = sin.
OperatorCard rotary(const std::string& dtype, std::int64_t heads, std::int64_t seq, std::int64_t dim)
{
    RegionChainBuilder b;
    const std::vector<std::int64_t> strides = {seq * heads * dim, dim, heads * dim, 1};
    const TensorSpec q = spec(dtype, {2, heads, seq, dim}, strides);
    const TensorSpec half = spec(dtype, {2, heads, seq, dim / 2}, strides);
    const TensorSpec angle = spec(dtype, {2, 1, seq, dim});
    const Value second = b.input(half);
    const Value first = b.input(half);
    const Value x = b.input(q);
    const Value cos = b.input(angle);
    const Value sin = b.input(angle);
    const Value rotated = b.call(
        "aten::cat", "", {{"tensors", std::vector<Value>{b.unary("aten::neg", second), first}}, {"dim", json(-1)}}, q);
    b.output(b.call("aten::add", "Tensor",
                    {{"self", b.binary("aten::mul", x, cos, q)},
                     {"other", b.binary("aten::mul", rotated, sin, q)},
                     {"alpha", json(1)}},
                    q));
    return b.card();
}

} // namespace

TEST(PointwiseRegionFamily, CatBranchesReadTheirInputsWhereTheCatPutsThem)
{
    json params;
    const std::string source = rootSource(rotary("bfloat16", 4, 16, 64), &params);
    EXPECT_EQ(params["vector_width"], 8);
    // Each half is an operand of its own, shifted back by its branch's start, read only in its branch.
    EXPECT_NE(source.find("//   in0_b0 bfloat16 strided, a cat's branch: cat coordinates 0 to 32"), std::string::npos);
    EXPECT_NE(source.find("//   in1_b1 bfloat16 strided, a cat's branch: cat coordinates 32 to 64"), std::string::npos);
    EXPECT_NE(source.find("kfOffset_in1_b1(i) + (-32LL)"), std::string::npos);
    EXPECT_NE(source.find("kfCat0(long long i) { return (i / 1LL) % 64LL; }"), std::string::npos);
    EXPECT_NE(source.find("kfc0 < 32LL ?"), std::string::npos);
    // The halves are not read where the element is (they have half q's size).
    EXPECT_NE(source.find("//   in0 bfloat16 unused"), std::string::npos);
    BuiltinProposer proposer(rotary("bfloat16", 4, 16, 64));
    SearchTree tree("rotary", 1);
    std::atomic<bool> stop{false};
    auto root = proposer.proposeRoot(tree, stop);
    ASSERT_TRUE(root) << root.error().toString();
    EXPECT_EQ(root->candidate.launchPlan["launches"][0]["args"],
              json({"ptr:in0", "ptr:in1", "ptr:in2", "ptr:in3", "ptr:in4", "ptr:in0", "ptr:in1", "ptr:out0"}));
    for (const std::string dtype : {"float32", "float16", "bfloat16"})
        for (const std::int64_t dim : {64, 6}) { // 6: halves of 3, no vector fits a branch
            SCOPED_TRACE(dtype + " dim " + std::to_string(dim));
            growChain(rotary(dtype, 3, 5, dim), 4, true);
        }
}

TEST(PointwiseRegionFamily, CatsItCannotReadAreRefusedWithTheReason)
{
    {
        // A cat of a cat's result: the inner cat is computed in each branch of the outer one, its
        // inputs read where both cats put them.
        RegionChainBuilder b;
        const TensorSpec h = spec("float32", {4, 8});
        const TensorSpec w = spec("float32", {4, 16});
        const Value x = b.input(h);
        const Value inner =
            b.call("aten::cat", "", {{"tensors", std::vector<Value>{b.unary("aten::neg", x), x}}, {"dim", json(1)}}, w);
        const Value outer = b.call("aten::cat", "", {{"tensors", std::vector<Value>{inner, inner}}, {"dim", json(0)}},
                                   spec("float32", {8, 16}));
        b.output(b.unary("aten::relu", outer));
        const auto f = PointwiseRegionFamily::create(b.card());
        ASSERT_TRUE(f.ok()) << f.error().message;
        auto source = f.value()->generate(f.value()->rootParams());
        ASSERT_TRUE(source.ok()) << source.error().message;
        EXPECT_NE(source->source.find("a cat's branch: cat coordinates 8 to 16 and cat 1's 4 to 8"), std::string::npos)
            << source->source;
    }
    {
        // A cat of float32 and float16 (eager promotes): not covered.
        RegionChainBuilder b;
        const Value x = b.input(spec("float32", {4, 8}));
        const Value y = b.input(spec("float16", {4, 8}));
        const Value joined =
            b.call("aten::cat", "", {{"tensors", std::vector<Value>{b.unary("aten::exp", x), y}}, {"dim", json(1)}},
                   spec("float32", {4, 16}));
        b.output(b.unary("aten::relu", joined));
        const auto f = PointwiseRegionFamily::create(b.card());
        ASSERT_FALSE(f.ok());
        EXPECT_NE(f.error().message.find("a cat of float16 into float32 is not covered"), std::string::npos)
            << f.error().message;
    }
    {
        // A cat with one non-empty tensor (eager skips the empty one) is a copy of it, broadcast on.
        RegionChainBuilder b;
        const Value x = b.input(spec("float32", {4, 1}));
        const Value y = b.input(spec("float32", {4, 6}));
        const Value joined = b.call(
            "aten::cat", "",
            {{"tensors", std::vector<Value>{b.unary("aten::exp", x), b.input(spec("float32", {0}))}}, {"dim", json(1)}},
            spec("float32", {4, 1}));
        b.output(b.binary("aten::mul", joined, y, spec("float32", {4, 6})));
        EXPECT_TRUE(PointwiseRegionFamily::create(b.card()).ok());
    }
}
