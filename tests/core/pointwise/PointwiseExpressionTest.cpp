// Expression DAGs of hand-made region chains: operands from inputs, members and Python scalars,
// shared subexpressions, promotion checked against eager's dtypes, 16-bit rounding, refusals.

#include "pointwise/PointwiseExpression.h"
#include "RegionChainBuilder.h"

#include <gtest/gtest.h>

using namespace kforge::core;
using namespace kforge::core::test_regions;

namespace {

int countOf(const std::string& text, const std::string& what)
{
    int n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

} // namespace

TEST(PointwiseExpression, GeluWrittenOutIsOneDagWithSharedInput)
{
    // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))): 8 ops over one input.
    RegionChainBuilder b;
    const TensorSpec t = spec("float32", {4, 8});
    const Value x = b.input(t);
    const Value half = b.binary("aten::mul", x, nlohmann::json(0.5), t);
    const Value cube = b.call("aten::pow", "Tensor_Scalar", {{"self", x}, {"exponent", nlohmann::json(3)}}, t);
    const Value scaled = b.binary("aten::mul", cube, nlohmann::json(0.044715), t);
    const Value inner = b.binary("aten::add", x, scaled, t);
    const Value k = b.binary("aten::mul", inner, nlohmann::json(0.7978845608028654), t);
    const Value th = b.unary("aten::tanh", k);
    const Value one = b.binary("aten::add", th, nlohmann::json(1.0), t);
    b.output(b.binary("aten::mul", half, one, t));
    const OperatorCard card = b.card();
    ASSERT_EQ(card.region->problem({t}), "");
    auto e = PointwiseExpression::fromRegion(card);
    ASSERT_TRUE(e) << e.error().message;
    EXPECT_EQ(e->liveOps(), 8);
    EXPECT_EQ(e->outputs().size(), 1u);
    EXPECT_TRUE(e->inputUsed(0));
    // One node for x, read by three members.
    int inputs = 0;
    for (const PointwiseNode& n : e->nodes())
        inputs += n.kind == PointwiseNode::Kind::Input;
    EXPECT_EQ(inputs, 1);
    const std::string code = e->elementFunction("kfRegion");
    EXPECT_NE(code.find("void kfRegion(const float x0, float& y0)"), std::string::npos) << code;
    EXPECT_NE(code.find("tanhf("), std::string::npos);
    EXPECT_EQ(countOf(code, "kfRoundBfloat16("), 0); // float32: nothing to round
}

TEST(PointwiseExpression, EqualCallsAreComputedOnce)
{
    // sigmoid(x) computed by two members (as a traced SiLU twice) is one node.
    RegionChainBuilder b;
    const TensorSpec t = spec("float16", {16});
    const Value x = b.input(t);
    const Value s1 = b.unary("aten::sigmoid", x);
    const Value s2 = b.unary("aten::sigmoid", x);
    b.output(b.binary("aten::mul", s1, s2, t));
    auto e = PointwiseExpression::fromRegion(b.card());
    ASSERT_TRUE(e) << e.error().message;
    EXPECT_EQ(e->liveOps(), 2);
    const std::string code = e->elementFunction("f");
    EXPECT_EQ(countOf(code, "expf(-"), 1) << code; // sigmoid's; helpers such as kfMish have their own
    // float16 results are rounded where eager materializes them.
    EXPECT_EQ(countOf(code, "kfRoundHalf("), 3) << code;
    EXPECT_TRUE(e->needsHalf());
}

TEST(PointwiseExpression, PromotionFollowsEagerAndCastsRound)
{
    // bf16 x * float32 0-dim scale stays bf16; .to(float32); + float32 mask gives float32.
    RegionChainBuilder b;
    const TensorSpec x16 = spec("bfloat16", {2, 3});
    const TensorSpec x32 = spec("float32", {2, 3});
    const Value x = b.input(x16);
    const Value scale = b.input(spec("float32", {}));
    const Value mask = b.input(x32);
    const Value scaled = b.binary("aten::mul", x, scale, x16);
    const Value wide = b.call("aten::to", "dtype", {{"self", scaled}, {"dtype", nlohmann::json(6)}}, x32);
    b.output(b.binary("aten::add", wide, mask, x32));
    auto e = PointwiseExpression::fromRegion(b.card());
    ASSERT_TRUE(e) << e.error().message;
    const std::vector<PointwiseNode>& nodes = e->nodes();
    const PointwiseNode& out = nodes[static_cast<std::size_t>(e->outputs()[0])];
    EXPECT_EQ(out.dtype, "float32");
    EXPECT_FALSE(out.round);
    int rounded = 0;
    for (const PointwiseNode& n : nodes)
        rounded += n.round;
    EXPECT_EQ(rounded, 2); // the float32 0-dim scale read as bf16 (eager's common dtype), the bf16 product
    const std::string code = e->elementFunction("f");
    EXPECT_NE(code.find("kfRoundBfloat16(v1); // _to_copy -> bfloat16"), std::string::npos) << code;
    auto unrounded = PointwiseExpression::fromRegion(b.card(), PointwiseOptions{false});
    ASSERT_TRUE(unrounded);
    EXPECT_EQ(unrounded->elementFunction("f").find("kfRoundBfloat16(("), std::string::npos);
}

TEST(PointwiseExpression, InPlaceResultKeepsSelfDtype)
{
    RegionChainBuilder b;
    const TensorSpec t = spec("bfloat16", {8});
    const Value x = b.input(t);
    const Value y = b.input(spec("float32", {8}));
    b.output(b.call("aten::add_", "Tensor", {{"self", x}, {"other", y}, {"alpha", nlohmann::json(1)}}, t));
    auto e = PointwiseExpression::fromRegion(b.card());
    ASSERT_TRUE(e) << e.error().message;
    EXPECT_EQ(e->nodes()[static_cast<std::size_t>(e->outputs()[0])].dtype, "bfloat16");
}

TEST(PointwiseExpression, NonFiniteScalarsAsTheCaptureSpellsThem)
{
    // clamp(x, min=-inf, max=6): the capture writes -inf as the JSON string "-inf".
    RegionChainBuilder b;
    const TensorSpec t = spec("float32", {8});
    const Value x = b.input(t);
    b.output(b.call("aten::clamp", "", {{"self", x}, {"min", nlohmann::json("-inf")}, {"max", nlohmann::json(6)}}, t));
    auto e = PointwiseExpression::fromRegion(b.card());
    ASSERT_TRUE(e) << e.error().message;
    const std::string code = e->elementFunction("f");
    EXPECT_NE(
        code.find(
            "kfClampMax(kfClampMin(v0, static_cast<float>((-__int_as_float(0x7f800000)))), static_cast<float>(6.0))"),
        std::string::npos)
        << code;
}

TEST(PointwiseExpression, BoolResultsAreZeroOrOne)
{
    // (x > 0) + m (bool + bool is true in eager, 2 in fp32) times x: every bool node is 0 / 1.
    RegionChainBuilder b;
    const TensorSpec t = spec("float32", {8});
    const TensorSpec mask = spec("bool", {8});
    const Value x = b.input(t);
    const Value m = b.input(mask);
    const Value positive = b.binary("aten::gt", x, nlohmann::json(0), mask);
    const Value either = b.binary("aten::add", positive, m, mask);
    b.output(either);
    b.output(b.binary("aten::mul", x, either, t));
    auto e = PointwiseExpression::fromRegion(b.card());
    ASSERT_TRUE(e) << e.error().message;
    EXPECT_EQ(e->nodes()[static_cast<std::size_t>(e->outputs()[0])].dtype, "bool");
    const std::string code = e->elementFunction("f");
    EXPECT_NE(code.find("= (v0 > static_cast<float>(0.0) ? 1.0f : 0.0f); // gt -> bool"), std::string::npos) << code;
    EXPECT_NE(code.find("= ((v2 + v3) != 0.0f ? 1.0f : 0.0f); // add -> bool"), std::string::npos) << code;
}

TEST(PointwiseExpression, ScalarsInTheTensorsDtypeAreRounded)
{
    // bfloat16 x <= 0.1 compares with bfloat16(0.1), as eager's CUDA kernel (scalar_t); a float32
    // tensor with the same scalar needs no rounding, and mul's scalar stays in opmath.
    const auto code = [](const std::string& dtype, const std::string& op, const std::string& overload,
                         const std::vector<Arg>& scalars, const std::string& outDtype) {
        RegionChainBuilder b;
        const Value x = b.input(spec(dtype, {8}));
        std::vector<Arg> args{{"self", x}};
        args.insert(args.end(), scalars.begin(), scalars.end());
        b.output(b.call(op, overload, args, spec(outDtype, {8})));
        auto e = PointwiseExpression::fromRegion(b.card());
        EXPECT_TRUE(e) << e.error().message;
        return e ? e->elementFunction("f") : std::string();
    };
    const std::string le = code("bfloat16", "aten::le", "Scalar", {{"other", nlohmann::json(0.1)}}, "bool");
    EXPECT_NE(le.find("kfRoundBfloat16(static_cast<float>(0.10000000000000001)); // _to_copy -> bfloat16"),
              std::string::npos)
        << le;
    EXPECT_EQ(code("float32", "aten::le", "Scalar", {{"other", nlohmann::json(0.1)}}, "bool").find("kfRound"),
              std::string::npos);
    const std::string shrink = code("float16", "aten::softshrink", "", {{"lambd", nlohmann::json(0.3)}}, "float16");
    EXPECT_NE(shrink.find("kfRoundHalf(static_cast<float>(0.29999999999999999)); // _to_copy -> float16"),
              std::string::npos)
        << shrink;
    const std::string threshold = code("bfloat16", "aten::threshold", "",
                                       {{"threshold", nlohmann::json(0.1)}, {"value", nlohmann::json(20)}}, "bfloat16");
    EXPECT_EQ(countOf(threshold, "// _to_copy -> bfloat16"), 2) << threshold;
    EXPECT_EQ(code("bfloat16", "aten::mul", "Scalar", {{"other", nlohmann::json(0.1)}}, "bfloat16")
                  .find("kfRoundBfloat16(static_cast"),
              std::string::npos);
}

TEST(PointwiseExpression, RefusesWithOneLine)
{
    {
        RegionChainBuilder b;
        const TensorSpec t = spec("float32", {4, 8});
        const Value x = b.input(t);
        const Value m = b.binary("aten::mul", x, nlohmann::json(2.0), t);
        b.output(b.call("aten::_softmax", "", {{"self", m}, {"dim", nlohmann::json(-1)}}, t));
        auto e = PointwiseExpression::fromRegion(b.card());
        ASSERT_FALSE(e);
        EXPECT_EQ(e.error().message,
                  "member 1: aten::_softmax: a reduction, norm or softmax, not pointwise (not covered yet)");
    }
    {
        // Eager says float32 where promotion gives bf16: not what the table models.
        RegionChainBuilder b;
        const Value x = b.input(spec("bfloat16", {4}));
        b.output(b.binary("aten::mul", x, nlohmann::json(2.0), spec("float32", {4})));
        auto e = PointwiseExpression::fromRegion(b.card());
        ASSERT_FALSE(e);
        EXPECT_EQ(e.error().message, "member 0 (mul.Scalar): promotion gives bfloat16 where eager produced float32");
    }
    {
        // mul reads add's result after relu_ overwrote it: eager sees the written value.
        RegionChainBuilder b;
        const TensorSpec t = spec("float32", {4});
        const Value a = b.binary("aten::add", b.input(t), b.input(t), t);
        const Value r = b.unary("aten::relu_", a);
        b.output(b.binary("aten::mul", a, r, t));
        auto e = PointwiseExpression::fromRegion(b.card());
        ASSERT_FALSE(e);
        EXPECT_EQ(e.error().message, "member 2 (mul.Tensor): reads a value member 1 overwrote in place");
    }
    {
        RegionChainBuilder b;
        const Value x = b.input(spec("int64", {4}));
        b.output(b.unary("aten::neg", x));
        auto e = PointwiseExpression::fromRegion(b.card());
        ASSERT_FALSE(e);
        EXPECT_NE(e.error().message.find("region input in0: int64 tensor not covered"), std::string::npos)
            << e.error().message;
    }
    {
        // bool * 2 is an int64 result in eager: integers are not covered.
        RegionChainBuilder b;
        const Value m = b.input(spec("bool", {4}));
        b.output(b.binary("aten::mul", m, nlohmann::json(2), spec("int64", {4})));
        auto e = PointwiseExpression::fromRegion(b.card());
        ASSERT_FALSE(e);
        EXPECT_EQ(e.error().message,
                  "member 0 (mul.Scalar): result dtype int64 not covered (float32, float16, bfloat16, bool)");
    }
    {
        // threshold without its threshold: no default to fall back on.
        RegionChainBuilder b;
        const TensorSpec t = spec("float32", {4});
        b.output(b.call("aten::threshold", "", {{"self", b.input(t)}, {"value", nlohmann::json(1)}}, t));
        auto e = PointwiseExpression::fromRegion(b.card());
        ASSERT_FALSE(e);
        EXPECT_EQ(e.error().message, "member 0 (threshold): no argument 'threshold'");
    }
}

namespace {

PointwiseOptions withIntegers()
{
    PointwiseOptions options;
    options.integers = true;
    return options;
}

// The element code of `card` with integers covered (what PointwiseRegionFamily generates).
std::string integerCode(const OperatorCard& card)
{
    auto e = PointwiseExpression::fromRegion(card, withIntegers());
    EXPECT_TRUE(e) << e.error().message;
    return e ? e->elementFunction("f") : std::string();
}

} // namespace

TEST(PointwiseExpression, IntegersComputeExactlyInTheirOwnType)
{
    // (x + y) * 3 == 16777217 over int32 / int64: never through fp32 (16777217 is not a float).
    RegionChainBuilder b;
    const TensorSpec t32 = spec("int32", {8});
    const TensorSpec t64 = spec("int64", {8});
    const Value x = b.input(t32);
    const Value y = b.input(t64);
    const Value sum = b.binary("aten::add", x, y, t64);
    const Value product = b.binary("aten::mul", sum, nlohmann::json(3), t64);
    b.output(product);
    b.output(b.binary("aten::eq", product, nlohmann::json(16777217), spec("bool", {8})));
    auto e = PointwiseExpression::fromRegion(b.card(), withIntegers());
    ASSERT_TRUE(e) << e.error().message;
    EXPECT_TRUE(e->hasIntegers());
    const std::string code = e->elementFunction("f");
    EXPECT_NE(code.find("void f(const int x0, const long long x1, long long& y0, float& y1)"), std::string::npos)
        << code;
    // x is read in the common dtype int64, then added modulo 2^64.
    EXPECT_NE(code.find("= static_cast<long long>(kfIntAdd(static_cast<long long>(v0), v1)); // add -> int64"),
              std::string::npos)
        << code;
    EXPECT_NE(code.find("kfIntMul(v3, 3LL)"), std::string::npos) << code;
    EXPECT_NE(code.find("(v5 == 16777217LL ? 1.0f : 0.0f); // eq -> bool"), std::string::npos) << code;
    EXPECT_NE(code.find("__device__ __forceinline__ long long kfIntAdd("), std::string::npos);
    // Without options.integers the same card is refused, as before.
    auto refused = PointwiseExpression::fromRegion(b.card());
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("region input in0: int32 tensor not covered"), std::string::npos);
}

TEST(PointwiseExpression, IntegerScalarsAreConvertedToTheCommonDtype)
{
    // int8 x < 300 compares with int8(300) = 44, as eager; uint8 - 5 wraps; masked_fill's float value
    // is truncated toward zero into the tensor's dtype.
    RegionChainBuilder b;
    const TensorSpec t8 = spec("int8", {8});
    const TensorSpec u8 = spec("uint8", {8});
    const Value x = b.input(t8);
    const Value u = b.input(u8);
    const Value m = b.input(spec("bool", {8}));
    b.output(b.binary("aten::lt", x, nlohmann::json(300), spec("bool", {8})));
    b.output(b.binary("aten::sub", u, nlohmann::json(5), u8));
    b.output(b.call("aten::masked_fill", "Scalar", {{"self", x}, {"mask", m}, {"value", nlohmann::json(-2.7)}}, t8));
    const std::string code = integerCode(b.card());
    EXPECT_NE(code.find("(static_cast<long long>(v0) < 44LL ? 1.0f : 0.0f)"), std::string::npos) << code;
    EXPECT_NE(code.find("= static_cast<unsigned char>(kfIntSub(static_cast<long long>(v3), 5LL)); // sub -> uint8"),
              std::string::npos)
        << code;
    EXPECT_NE(
        code.find("static_cast<signed char>((v7 != 0.0f ? -2LL : static_cast<long long>(v0))); // masked_fill -> int8"),
        std::string::npos)
        << code;
}

TEST(PointwiseExpression, CastsBetweenIntegersAndFloatsConvertAsC10)
{
    // float32 -> int32 truncates toward zero (through int64, as c10 into uint8); int64 -> bfloat16
    // rounds to float, then to bfloat16; bool -> int16 is 0 / 1; int64 -> bool is non-zero.
    RegionChainBuilder b;
    const Value f = b.input(spec("float32", {8}));
    const Value i = b.input(spec("int64", {8}));
    const Value m = b.input(spec("bool", {8}));
    const auto to = [&](const Value& v, int code, const std::string& dtype) {
        return b.call("aten::to", "dtype", {{"self", v}, {"dtype", nlohmann::json(code)}}, spec(dtype, {8}));
    };
    b.output(to(f, 3, "int32"));
    b.output(to(i, 15, "bfloat16"));
    b.output(to(m, 2, "int16"));
    b.output(to(i, 11, "bool"));
    const std::string code = integerCode(b.card());
    EXPECT_NE(code.find("= static_cast<int>(static_cast<long long>(v0)); // to -> int32"), std::string::npos) << code;
    EXPECT_NE(code.find("= kfRoundBfloat16(static_cast<float>(v2)); // to -> bfloat16"), std::string::npos) << code;
    EXPECT_NE(code.find("= static_cast<short>(static_cast<long long>(v4)); // to -> int16"), std::string::npos) << code;
    EXPECT_NE(code.find("(static_cast<float>(v2) != 0.0f ? 1.0f : 0.0f); // to -> bool"), std::string::npos) << code;
}

TEST(PointwiseExpression, IntegerValuesOfFloatOpsConvertAsC10)
{
    // An attention mask: (1 - mask.to(float32)) * -1e9 with mask int64; and int64 + float16, which
    // eager reads in float16: the integer is rounded to float16 first (2049 + 0.5 is 2048, not 2050).
    RegionChainBuilder b;
    const TensorSpec f32 = spec("float32", {8});
    const TensorSpec f16 = spec("float16", {8});
    const Value mask = b.input(spec("int64", {8}));
    const Value h = b.input(f16);
    const Value wide = b.call("aten::to", "dtype", {{"self", mask}, {"dtype", nlohmann::json(6)}}, f32);
    const Value inverted = b.call("aten::rsub", "Scalar",
                                  {{"self", wide}, {"other", nlohmann::json(1.0)}, {"alpha", nlohmann::json(1)}}, f32);
    b.output(b.binary("aten::mul", inverted, nlohmann::json(-1e9), f32));
    b.output(b.binary("aten::add", mask, h, f16));
    b.output(b.call("aten::exp", "", {{"self", mask}}, f32)); // exp of an integer: float32
    const std::string code = integerCode(b.card());
    EXPECT_NE(code.find("const float v1 = static_cast<float>(v0); // to -> float32"), std::string::npos) << code;
    EXPECT_NE(code.find("kfRoundHalf(static_cast<float>(v0)); // _to_copy -> float16"), std::string::npos) << code;
    EXPECT_NE(code.find("expf(static_cast<float>(v0))"), std::string::npos) << code;
}

TEST(PointwiseExpression, IntegerOpsWithoutAnIntegerFormAreRefused)
{
    const auto refusal = [](const std::string& op, const std::string& dtype, std::vector<Arg> scalars) {
        RegionChainBuilder b;
        const TensorSpec t = spec(dtype, {4});
        std::vector<Arg> args{{"self", b.input(t)}};
        args.insert(args.end(), scalars.begin(), scalars.end());
        b.output(b.call(op, op == "aten::pow" ? "Tensor_Scalar" : "", args, t));
        auto e = PointwiseExpression::fromRegion(b.card(), withIntegers());
        return e ? std::string("covered") : e.error().message;
    };
    EXPECT_EQ(refusal("aten::hardtanh", "int64", {{"min_val", nlohmann::json(-1)}, {"max_val", nlohmann::json(1)}}),
              "member 0 (hardtanh): int64 operands not covered (hardtanh has no integer form)");
    EXPECT_EQ(refusal("aten::pow", "int32", {{"exponent", nlohmann::json(3)}}),
              "member 0 (pow.Tensor_Scalar): int32 operands not covered (pow has no integer form)");
    EXPECT_EQ(refusal("aten::leaky_relu", "uint8", {{"negative_slope", nlohmann::json(1)}}),
              "member 0 (leaky_relu): uint8 operands not covered (leaky_relu has no integer form)");
    EXPECT_EQ(refusal("aten::relu", "int16", {}), "covered");
    {
        // masked_fill of an integer tensor with NaN: no integer value (eager refuses the call too).
        RegionChainBuilder b;
        const TensorSpec t = spec("int32", {4});
        const Value x = b.input(t);
        const Value m = b.input(spec("bool", {4}));
        b.output(
            b.call("aten::masked_fill", "Scalar", {{"self", x}, {"mask", m}, {"value", nlohmann::json("nan")}}, t));
        auto e = PointwiseExpression::fromRegion(b.card(), withIntegers());
        ASSERT_FALSE(e);
        EXPECT_EQ(e.error().message, "member 0 (masked_fill.Scalar): scalar nan has no int32 value");
    }
}

TEST(PointwiseExpression, BoolScalarsAreOneAndZero)
{
    // `m | True`, `m & False`, `m ^ True` as a capture writes them: JSON booleans, never numbers
    // (reading one as a number threw, and the proposer with it).
    RegionChainBuilder b;
    const TensorSpec mask = spec("bool", {8});
    const Value m = b.input(mask);
    b.output(b.binary("aten::__or__", m, nlohmann::json(true), mask));
    b.output(b.binary("aten::__and__", m, nlohmann::json(false), mask));
    b.output(b.binary("aten::bitwise_xor", m, nlohmann::json(true), mask));
    auto e = PointwiseExpression::fromRegion(b.card(), withIntegers());
    ASSERT_TRUE(e) << e.error().message;
    const std::string code = e->elementFunction("f");
    EXPECT_NE(code.find("(v0 != 0.0f) || (static_cast<float>(1.0) != 0.0f) ? 1.0f : 0.0f"), std::string::npos) << code;
    EXPECT_NE(code.find("(v0 != 0.0f) && (static_cast<float>(0.0) != 0.0f) ? 1.0f : 0.0f"), std::string::npos) << code;
    EXPECT_NE(code.find("(v0 != 0.0f) != (static_cast<float>(1.0) != 0.0f) ? 1.0f : 0.0f"), std::string::npos) << code;
}

TEST(PointwiseExpression, CatBranchesAreComputedInTheirOwnContexts)
{
    // relu(cat(-x, y)) along dim 1 of [4, 8] + [4, 8]: x is read only in branch 0, y in branch 1.
    const auto chain = [](bool concatenation) {
        RegionChainBuilder b;
        const TensorSpec half = spec("bfloat16", {4, 8});
        const Value x = b.input(half);
        const Value y = b.input(half);
        const Value joined = b.call(
            "aten::cat", "", {{"tensors", std::vector<Value>{b.unary("aten::neg", x), y}}, {"dim", nlohmann::json(-1)}},
            spec("bfloat16", {4, 16}));
        b.output(b.unary("aten::relu", joined));
        PointwiseOptions options;
        options.concatenation = concatenation;
        return PointwiseExpression::fromRegion(b.card(), options);
    };
    // Without the option a cat is not a row of the table.
    const auto refused = chain(false);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("member 1"), std::string::npos) << refused.error().message;

    const auto e = chain(true);
    ASSERT_TRUE(e.ok()) << e.error().message;
    ASSERT_EQ(e->cats().size(), 1u);
    EXPECT_EQ(e->cats()[0].dim, 1u);
    EXPECT_EQ(e->cats()[0].bounds, (std::vector<std::int64_t>{0, 8, 16}));
    EXPECT_TRUE(e->catUsed(0));
    ASSERT_EQ(e->branchContexts().size(), 2u);
    // Neither input is read where the element is: each is read in its branch's context only.
    EXPECT_FALSE(e->inputUsed(0));
    EXPECT_FALSE(e->inputUsed(1));
    EXPECT_EQ(e->inputReads(), (std::vector<PointwiseInputRead>{{0, 0}, {1, 1}}));
    const std::string code = e->elementFunction("kfRegion");
    EXPECT_NE(code.find("kfRegion(const float x0_b0, const float x1_b1, const long long kfc0, float& y0)"),
              std::string::npos)
        << code;
    EXPECT_NE(code.find("kfc0 < 8LL ?"), std::string::npos) << code;
}
