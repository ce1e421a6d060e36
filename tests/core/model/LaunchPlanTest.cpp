#include "model/LaunchPlan.h"

#include <gtest/gtest.h>

using namespace kforge::core;
using nlohmann::json;

namespace {

// aten::softmax.int on bfloat16[64,1000] (dim -1), as captured.
OperatorCard softmaxCard()
{
    OperatorCard card;
    card.op = "aten::softmax";
    card.overload = "int";
    ArgSpec self{"self", "Tensor", ArgKind::Tensor, {TensorSpec{"bfloat16", {64, 1000}, {1000, 1}, "cuda:0"}}, nullptr};
    ArgSpec dim{"dim", "int", ArgKind::Value, {}, -1};
    ArgSpec dtype{"dtype", "ScalarType?", ArgKind::None, {}, nullptr};
    card.args = {self, dim, dtype};
    card.outputs = {TensorSpec{"bfloat16", {64, 1000}, {1000, 1}, "cuda:0"}};
    return card;
}

json twoPassPlan()
{
    return json::parse(R"({
      "launches": [
        {"kernel": "row_max", "grid": [64], "block": [256], "args": ["ptr:self", "ptr:scratch.max", "i32:1000"]},
        {"kernel": "normalize", "grid": 64, "block": [32, 8], "shared_bytes": 1024,
         "args": ["ptr:self", "ptr:scratch.max", "ptr:out0", "i32:1000", "i64:dim", "f32:0.5"]}
      ],
      "scratch": [{"name": "max", "bytes": 256, "zero": true}]
    })");
}

std::string planErrorOf(const json& j, const OperatorCard& card)
{
    auto plan = parseLaunchPlan(j, card);
    if (!plan)
        return plan.error().toString();
    auto valid = validateLaunchPlan(plan.value(), card);
    return valid ? std::string() : valid.error().toString();
}

} // namespace

TEST(LaunchPlan, ParsesAMultiKernelPlan)
{
    const OperatorCard card = softmaxCard();
    auto plan = parseLaunchPlan(twoPassPlan(), card);
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    ASSERT_EQ(plan->launches.size(), 2u);
    const KernelLaunch& second = plan->launches[1];
    EXPECT_EQ(second.kernel, "normalize");
    EXPECT_EQ(second.grid, (std::array<std::uint32_t, 3>{64, 1, 1}));
    EXPECT_EQ(second.block, (std::array<std::uint32_t, 3>{32, 8, 1}));
    EXPECT_EQ(second.sharedBytes, 1024u);
    ASSERT_EQ(second.params.size(), 6u);
    EXPECT_EQ(second.params[0].source, ParamSource::TensorArg);
    EXPECT_EQ(second.params[1].source, ParamSource::Scratch);
    EXPECT_EQ(second.params[2].source, ParamSource::Output);
    EXPECT_EQ(second.params[2].index, 0);
    EXPECT_EQ(second.params[3].source, ParamSource::Literal);
    EXPECT_EQ(second.params[3].literal, 1000);
    EXPECT_EQ(second.params[4].source, ParamSource::CardValue);
    EXPECT_EQ(second.params[4].type, ParamType::I64);
    EXPECT_EQ(second.params[5].type, ParamType::F32);
    EXPECT_EQ(plan->outputs, card.outputs); // omitted outputs default to eager's
    ASSERT_EQ(plan->scratch.size(), 1u);
    EXPECT_TRUE(plan->scratch[0].zeroed);
    EXPECT_TRUE(validateLaunchPlan(plan.value(), card).ok());
    // Round trip through JSON.
    auto again = parseLaunchPlan(toJson(plan.value()), card);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(toJson(again.value()), toJson(plan.value()));
}

TEST(LaunchPlan, BindingAMissingArgumentIsRefusedWithItsPath)
{
    json plan = twoPassPlan();
    plan["launches"][1]["args"][0] = "ptr:input";
    const std::string error = planErrorOf(plan, softmaxCard());
    EXPECT_NE(error.find("launches[1].args[0]"), std::string::npos) << error;
    EXPECT_NE(error.find("no argument 'input'"), std::string::npos) << error;
    EXPECT_NE(error.find("tensor arguments: self"), std::string::npos) << error;
}

TEST(LaunchPlan, BindingANoneArgumentOrAMissingOutputOrScratchIsRefused)
{
    json plan = twoPassPlan();
    plan["launches"][0]["args"][0] = "ptr:dtype";
    EXPECT_NE(planErrorOf(plan, softmaxCard()).find("is None in this card"), std::string::npos);
    plan = twoPassPlan();
    plan["launches"][1]["args"][2] = "ptr:out1";
    EXPECT_NE(planErrorOf(plan, softmaxCard()).find("1 output(s)"), std::string::npos);
    plan = twoPassPlan();
    plan["launches"][0]["args"][1] = "ptr:scratch.sum";
    EXPECT_NE(planErrorOf(plan, softmaxCard()).find("no scratch buffer named 'sum'"), std::string::npos);
    plan = twoPassPlan();
    plan["launches"][0]["args"][2] = "i32:self";
    EXPECT_NE(planErrorOf(plan, softmaxCard()).find("is not a number"), std::string::npos);
}

TEST(LaunchPlan, AHostNumberIsPassedByValueNeverByPointer)
{
    // `x * 0.5` on the GPU: the number is a 0-dim CPU tensor the kernel cannot address.
    OperatorCard card;
    card.op = "aten::mul";
    card.overload = "Tensor";
    const TensorSpec x{"float32", {4, 8}, {8, 1}, "cuda:0"};
    card.args = {ArgSpec{"self", "Tensor", ArgKind::Tensor, {x}, nullptr},
                 ArgSpec{"other", "Tensor", ArgKind::Tensor, {TensorSpec{"float64", {}, {}, "cpu"}}, nullptr}};
    card.outputs = {x};
    EXPECT_TRUE(card.isHostNumberArg(card.args[1]));
    EXPECT_FALSE(card.isHostNumberArg(card.args[0]));
    const json byValue = json::parse(
        R"({"launches": [{"kernel": "k", "grid": 1, "block": 32, "args": ["ptr:self", "f64:other", "ptr:out0"]}]})");
    auto plan = parseLaunchPlan(byValue, card);
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    EXPECT_EQ(plan->launches[0].params[1].source, ParamSource::CardValue);
    EXPECT_TRUE(validateLaunchPlan(plan.value(), card).ok());
    json byPointer = byValue;
    byPointer["launches"][0]["args"][1] = "ptr:other";
    const std::string error = planErrorOf(byPointer, card);
    EXPECT_NE(error.find("launches[0].args[1]"), std::string::npos) << error;
    EXPECT_NE(error.find("a number on the host (a 0-dim CPU tensor): pass its value, e.g. 'f64:other'"),
              std::string::npos)
        << error;
    // A dense tensor is never a number; a 0-dim CPU tensor of a call on the CPU is read from memory.
    json denseByValue = byValue;
    denseByValue["launches"][0]["args"][1] = "f64:self";
    EXPECT_NE(planErrorOf(denseByValue, card).find("is not a number"), std::string::npos);
    OperatorCard onHost = card;
    onHost.args[0].tensors[0].device = "cpu";
    onHost.outputs[0].device = "cpu";
    EXPECT_FALSE(onHost.isHostNumberArg(onHost.args[1]));
    EXPECT_TRUE(planErrorOf(byPointer, onHost).empty());
}

TEST(LaunchPlan, ZeroOrTooManyThreadsAreRefused)
{
    json plan = twoPassPlan();
    plan["launches"][0]["block"] = json::array({0});
    EXPECT_NE(planErrorOf(plan, softmaxCard()).find("launches[0].block[0]"), std::string::npos);
    plan["launches"][0]["block"] = json::array({64, 32});
    const std::string error = planErrorOf(plan, softmaxCard());
    EXPECT_NE(error.find("2048 threads per block"), std::string::npos) << error;
    plan = twoPassPlan();
    plan["launches"][0]["grid"] = json::array({1, 70000});
    EXPECT_NE(planErrorOf(plan, softmaxCard()).find("grid"), std::string::npos);
    plan = twoPassPlan();
    plan["launches"][0]["shared_bytes"] = 300000;
    EXPECT_NE(planErrorOf(plan, softmaxCard()).find("shared_bytes"), std::string::npos);
}

TEST(LaunchPlan, OutputsMustEqualEagers)
{
    json plan = twoPassPlan();
    plan["outputs"] = json::parse(R"([{"dtype": "float32", "sizes": [64, 1000], "strides": [1000, 1]}])");
    std::string error = planErrorOf(plan, softmaxCard());
    EXPECT_NE(error.find("eager returns bfloat16[64,1000]"), std::string::npos) << error;
    plan["outputs"] = json::parse(R"([{"dtype": "bfloat16", "sizes": [64, 1000], "strides": [1, 64]}])");
    error = planErrorOf(plan, softmaxCard());
    EXPECT_NE(error.find("{1,64}"), std::string::npos) << error;
    plan["outputs"] = json::array();
    EXPECT_NE(planErrorOf(plan, softmaxCard()).find("declares 0 output(s)"), std::string::npos);
}

TEST(LaunchPlan, MalformedTokensAndShapes)
{
    const OperatorCard card = softmaxCard();
    for (const char* token : {"self", "vec4:self", "ptr:", "i32:1.5", "u32:-3", "ptr:self.x"}) {
        json plan = twoPassPlan();
        plan["launches"][0]["args"][0] = token;
        EXPECT_FALSE(planErrorOf(plan, card).empty()) << token;
    }
    EXPECT_NE(planErrorOf(json::parse("{}"), card).find("launches"), std::string::npos);
    EXPECT_NE(planErrorOf(json::parse(R"({"launches": [{"grid": 1, "block": 1, "args": []}]})"), card).find("kernel"),
              std::string::npos);
    EXPECT_NE(planErrorOf(json::parse("[1,2]"), card).find("JSON object"), std::string::npos);
}

TEST(LaunchPlan, EmbeddedPlanComment)
{
    const std::string source =
        "// softmax\n/*kforge-plan\n{\"launches\": []}\n*/\nextern \"C\" __global__ void k() {}\n";
    auto text = embeddedPlanText(source);
    ASSERT_TRUE(text.has_value());
    EXPECT_EQ(json::parse(*text), json::parse(R"({"launches": []})"));
    EXPECT_FALSE(embeddedPlanText("extern \"C\" __global__ void k() {}").has_value());
    EXPECT_FALSE(embeddedPlanText("/*kforge-plan {\"launches\": [] ").has_value()); // unterminated
}
