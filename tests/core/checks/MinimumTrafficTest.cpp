// The evaluator's lower bound on a kernel's memory traffic (core/checks/MinimumTraffic.h), which its
// timing plausibility check divides by the candidate's time: cases from real cards that an
// "every input read in full" count over-stated (Gemma's type_as, an embedding with a real vocab,
// an expanded key) and the ones it must keep counting.

#include "checks/MinimumTraffic.h"

#include <gtest/gtest.h>

using namespace kforge::core;
using nlohmann::json;

namespace {

TensorSpec contiguous(const std::string& dtype, std::vector<std::int64_t> sizes)
{
    std::vector<std::int64_t> strides(sizes.size(), 1);
    for (std::size_t d = sizes.size(); d-- > 1;)
        strides[d - 1] = strides[d] * sizes[d];
    return TensorSpec{dtype, std::move(sizes), std::move(strides), "cuda:0"};
}

ArgSpec tensorArg(const std::string& name, const TensorSpec& spec)
{
    return ArgSpec{name, "Tensor", ArgKind::Tensor, {spec}, nullptr};
}

LaunchPlan planPassing(const OperatorCard& card, const std::vector<std::string>& args)
{
    json launch{{"kernel", "k"}, {"grid", 1}, {"block", 32}, {"args", args}};
    auto plan = parseLaunchPlan(json{{"launches", json::array({launch})}}, card);
    EXPECT_TRUE(plan) << plan.error().toString();
    return plan ? plan.value() : LaunchPlan{};
}

} // namespace

TEST(MinimumTraffic, ElementBytesOfCapturedDtypes)
{
    EXPECT_EQ(dtypeElementBytes("float32"), 4);
    EXPECT_EQ(dtypeElementBytes("bfloat16"), 2);
    EXPECT_EQ(dtypeElementBytes("float16"), 2);
    EXPECT_EQ(dtypeElementBytes("int64"), 8);
    EXPECT_EQ(dtypeElementBytes("float64"), 8);
    EXPECT_EQ(dtypeElementBytes("bool"), 1);
    EXPECT_EQ(dtypeElementBytes("no-such-dtype"), 0); // counts nothing: still a lower bound
}

TEST(MinimumTraffic, ABroadcastDimCountsOnceAndOverlapsNeverExceedTheStorage)
{
    // repeat_kv's expanded keys: [4, 8, 2048, 256] over a [4, 1, 2048, 256] storage.
    const TensorSpec expanded{"bfloat16", {4, 8, 2048, 256}, {524288, 0, 256, 1}, "cuda:0"};
    EXPECT_EQ(distinctElements(expanded), 4LL * 2048 * 256);
    EXPECT_EQ(distinctElements(contiguous("float32", {3, 5})), 15);
    // unfold-like sliding windows: 4 windows of 3 over a storage of 6 elements.
    const TensorSpec windows{"float32", {4, 3}, {1, 1}, "cuda:0"};
    EXPECT_EQ(distinctElements(windows), 6);
    EXPECT_EQ(distinctElements(contiguous("float32", {0, 7})), 0);
}

TEST(MinimumTraffic, TypeAsReadsOnlyTheDtypeOfOther)
{
    // Gemma's RMSNorm: output.type_as(x), float32 -> bfloat16 [4, 2048, 2048]. Counting `other`
    // as read made a correct kernel "faster than copy bandwidth" (suite run 11).
    OperatorCard card;
    card.op = "aten::type_as";
    card.args = {tensorArg("self", contiguous("float32", {4, 2048, 2048})),
                 tensorArg("other", contiguous("bfloat16", {4, 2048, 2048}))};
    card.outputs = {contiguous("bfloat16", {4, 2048, 2048})};
    const std::int64_t n = 4LL * 2048 * 2048;
    EXPECT_EQ(minimumBytesMoved(card, planPassing(card, {"ptr:self", "ptr:out0"})), n * 4 + n * 2);
    // Even a plan that passes `other` need not read its elements.
    EXPECT_EQ(minimumBytesMoved(card, planPassing(card, {"ptr:self", "ptr:other", "ptr:out0"})), n * 4 + n * 2);
}

TEST(MinimumTraffic, AnEmbeddingCountsTheIndicesAndTheOutputNotTheWholeTable)
{
    // A 256000-token vocabulary of 2048 bfloat16s (1 GiB) looked up by 8192 token ids: the table
    // counted in full would call any kernel impossible.
    OperatorCard card;
    card.op = "aten::embedding";
    card.args = {tensorArg("weight", contiguous("bfloat16", {256000, 2048})),
                 tensorArg("indices", contiguous("int64", {4, 2048}))};
    card.outputs = {contiguous("bfloat16", {4, 2048, 2048})};
    const LaunchPlan plan = planPassing(card, {"ptr:weight", "ptr:indices", "ptr:out0"});
    EXPECT_EQ(minimumBytesMoved(card, plan), 8192LL * 8 + 8192LL * 2048 * 2);
    EXPECT_TRUE(readsArgumentOnlyInPart("aten::index_select", "self"));
    EXPECT_FALSE(readsArgumentOnlyInPart("aten::index_select", "index"));
    EXPECT_FALSE(readsArgumentOnlyInPart("aten::add.Tensor", "other"));
}

TEST(MinimumTraffic, EveryPassedInputAndListElementIsReadAndEveryOutputWritten)
{
    OperatorCard add;
    add.op = "aten::add";
    add.overload = "Tensor";
    add.args = {tensorArg("self", contiguous("float16", {2, 512, 64, 64})),
                tensorArg("other", contiguous("float16", {512, 1, 1})),
                ArgSpec{"alpha", "Scalar", ArgKind::Value, {}, 1}};
    add.outputs = {contiguous("float16", {2, 512, 64, 64})};
    const std::int64_t n = 2LL * 512 * 64 * 64;
    EXPECT_EQ(minimumBytesMoved(add, planPassing(add, {"ptr:self", "ptr:other", "ptr:out0"})), n * 2 + 512 * 2 + n * 2);
    // A tensor argument no kernel receives is not read (a plan cannot reach it).
    EXPECT_EQ(minimumBytesMoved(add, planPassing(add, {"ptr:self", "ptr:out0"})), n * 2 + n * 2);

    OperatorCard cat;
    cat.op = "aten::cat";
    cat.args = {ArgSpec{"tensors",
                        "Tensor[]",
                        ArgKind::TensorList,
                        {contiguous("bfloat16", {4, 8, 16}), contiguous("bfloat16", {4, 8, 48})},
                        nullptr},
                ArgSpec{"dim", "int", ArgKind::Value, {}, -1}};
    cat.outputs = {contiguous("bfloat16", {4, 8, 64})};
    EXPECT_EQ(minimumBytesMoved(cat, planPassing(cat, {"ptr:tensors.0", "ptr:tensors.1", "ptr:out0"})),
              (4 * 8 * 16 + 4 * 8 * 48) * 2 + 4 * 8 * 64 * 2);
    EXPECT_EQ(minimumBytesMoved(cat, planPassing(cat, {"ptr:tensors.1", "ptr:out0"})), 4 * 8 * 48 * 2 + 4 * 8 * 64 * 2);
}
