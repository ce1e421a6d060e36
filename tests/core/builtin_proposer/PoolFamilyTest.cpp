// PoolFamily (avg_pool1d/2d/3d, max_pool1d/3d): every op and dtype compiles with NVRTC along a
// search chain; the divisor eager uses; the refusals. Numbers: emulation/emulate_builtin_families.py
// (host emulation against eager) and the `gpu` tests.

#include "CandidateChecks.h"

#include "builtin_proposer/BuiltinProposer.h"

#include <gtest/gtest.h>

using namespace kforge::core;
using namespace kforge::core::test_candidates;
using nlohmann::json;

namespace {

TensorSpec contiguousTensor(const std::string& dtype, const std::vector<std::int64_t>& sizes)
{
    std::vector<std::int64_t> strides(sizes.size(), 1);
    for (int d = static_cast<int>(sizes.size()) - 2; d >= 0; --d)
        strides[d] = strides[d + 1] * sizes[d + 1];
    return TensorSpec{dtype, sizes, strides, "cuda:0"};
}

struct Window {
    json kernel, stride, padding, dilation = nullptr;
    bool ceil = false;
    bool countIncludePad = true;
    json divisor = nullptr;
};

// aten::avg_poolNd / max_poolNd of `sizes` to `outSizes`, as TorchScript records the call.
OperatorCard poolCard(const std::string& op, const std::string& dtype, const std::vector<std::int64_t>& sizes,
                      const std::vector<std::int64_t>& outSizes, const Window& w)
{
    OperatorCard card;
    card.op = op;
    card.id = "card-" + op.substr(6) + "-" + dtype;
    card.args.push_back(ArgSpec{"self", "Tensor", ArgKind::Tensor, {contiguousTensor(dtype, sizes)}, nullptr});
    card.args.push_back(ArgSpec{"kernel_size", "int[]", ArgKind::Value, {}, w.kernel});
    card.args.push_back(ArgSpec{"stride", "int[]", ArgKind::Value, {}, w.stride});
    card.args.push_back(ArgSpec{"padding", "int[]", ArgKind::Value, {}, w.padding});
    if (op.find("max") != std::string::npos)
        card.args.push_back(ArgSpec{"dilation", "int[]", ArgKind::Value, {}, w.dilation});
    card.args.push_back(ArgSpec{"ceil_mode", "bool", ArgKind::Value, {}, w.ceil});
    if (op.find("avg") != std::string::npos) {
        card.args.push_back(ArgSpec{"count_include_pad", "bool", ArgKind::Value, {}, w.countIncludePad});
        if (op != "aten::avg_pool1d")
            card.args.push_back(ArgSpec{
                "divisor_override", "int?", w.divisor.is_null() ? ArgKind::None : ArgKind::Value, {}, w.divisor});
    }
    card.outputs = {contiguousTensor(dtype, outSizes)};
    return card;
}

Candidate root(const OperatorCard& card)
{
    BuiltinProposer proposer(card);
    std::atomic<bool> stop{false};
    auto r = proposer.proposeRoot(SearchTree(card.id, 1), stop);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().toString());
    if (!r.ok())
        return {};
    EXPECT_EQ(r->provenance.details["family"], "pool");
    return r->candidate;
}

std::string refusalOf(const OperatorCard& card)
{
    auto supported = BuiltinProposer::supports(card);
    EXPECT_FALSE(supported);
    return supported ? "" : supported.error().message;
}

const Window k3s2p1{json::array({3}), json::array({2}), json::array({1}), json::array({1})};

} // namespace

TEST(PoolFamily, EveryOpAndDtypeCompilesAlongASearchChain)
{
    for (const std::string dtype : {"float32", "float16", "bfloat16"}) {
        SCOPED_TRACE(dtype);
        std::vector<OperatorCard> cards = {
            poolCard("aten::avg_pool1d", dtype, {2, 4, 97}, {2, 4, 49}, k3s2p1),
            poolCard("aten::max_pool1d", dtype, {4, 97}, {4, 49}, k3s2p1),
            poolCard("aten::avg_pool2d", dtype, {2, 8, 15, 15}, {2, 8, 8, 8},
                     {json::array({3, 3}), json::array({2, 2}), json::array({1, 1}), nullptr, true, false}),
            poolCard("aten::avg_pool3d", dtype, {2, 3, 6, 7, 9}, {2, 3, 3, 4, 5},
                     {json::array({2, 3, 3}), json::array({2, 2, 2}), json::array({0, 1, 1}), nullptr, false, true, 5}),
            poolCard("aten::max_pool3d", dtype, {3, 6, 7, 9}, {3, 5, 4, 4},
                     {json::array({2, 2, 3}), json::array({1, 2, 2}), json::array({0, 1, 1}), json::array({1, 1, 2})})};
        for (const OperatorCard& card : cards) {
            SCOPED_TRACE(card.op);
            EXPECT_GE(growChain(card, 5, true).size(), 3u);
        }
    }
}

TEST(PoolFamily, AveragesDivideAsEagerDoes)
{
    const Candidate included = root(poolCard("aten::avg_pool1d", "float32", {2, 4, 97}, {2, 4, 49}, k3s2p1));
    EXPECT_NE(included.source.find("padding counted"), std::string::npos);
    EXPECT_NE(included.source.find("return end - start;"), std::string::npos);
    EXPECT_EQ(included.source.find("start > 0"), std::string::npos); // the padded window is the count
    Window excluded = k3s2p1;
    excluded.countIncludePad = false;
    const Candidate clipped = root(poolCard("aten::avg_pool1d", "float32", {2, 4, 97}, {2, 4, 49}, excluded));
    EXPECT_NE(clipped.source.find("start = start > 0 ? start : 0;"), std::string::npos);
    EXPECT_NE(clipped.source.find("count > 0"), std::string::npos); // a window wholly in the padding is 0
    const Candidate divisor = root(
        poolCard("aten::avg_pool3d", "float16", {2, 3, 6, 7, 9}, {2, 3, 3, 4, 5},
                 {json::array({2, 3, 3}), json::array({2, 2, 2}), json::array({0, 1, 1}), nullptr, false, true, 5}));
    EXPECT_NE(divisor.source.find("m[o] / static_cast<float>(5.0)"), std::string::npos);
    EXPECT_EQ(divisor.source.find("kfCount"), std::string::npos);
}

TEST(PoolFamily, AStrideOfNoneIsTheKernelAndOneIntServesEveryDim)
{
    // F.avg_pool2d(x, 2): stride [] in the trace, the window for every dim.
    const Candidate c = root(poolCard("aten::avg_pool2d", "float32", {1, 2, 8, 8}, {1, 2, 4, 4},
                                      {json::array({2}), json::array(), json::array({0})}));
    EXPECT_NE(c.source.find("SD = 1, SH = 2, SW = 2"), std::string::npos);
    EXPECT_NE(c.source.find("KD = 1, KH = 2, KW = 2"), std::string::npos);
}

TEST(PoolFamily, RefusesWithTheReason)
{
    OperatorCard strided = poolCard("aten::avg_pool1d", "float32", {2, 4, 97}, {2, 4, 49}, k3s2p1);
    strided.args[0].tensors[0].strides = {1, 2, 8};
    EXPECT_NE(refusalOf(strided).find("non-contiguous"), std::string::npos);
    EXPECT_NE(refusalOf(poolCard("aten::avg_pool1d", "float32", {97}, {49}, k3s2p1)).find("expected 2 or 3 dims"),
              std::string::npos);
    Window big{json::array({17, 17}), json::array({1, 1}), json::array({0, 0})};
    EXPECT_NE(refusalOf(poolCard("aten::avg_pool2d", "float32", {1, 1, 32, 32}, {1, 1, 16, 16}, big))
                  .find("a window of 289 elements"),
              std::string::npos);
    Window wide{json::array({3}), json::array({1}), json::array({2})}; // padding over half the window
    EXPECT_NE(refusalOf(poolCard("aten::avg_pool1d", "float32", {2, 4, 9}, {2, 4, 11}, wide)).find("out of range"),
              std::string::npos);
    // The output the card records must be the pooled size.
    EXPECT_NE(refusalOf(poolCard("aten::max_pool1d", "float32", {4, 97}, {4, 48}, k3s2p1)).find("pooled size"),
              std::string::npos);
}
