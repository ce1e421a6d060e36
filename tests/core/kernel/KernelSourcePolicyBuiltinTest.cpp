// Every source the built-in proposer writes passes the source policy (KernelSourcePolicy.h): the root
// candidate and the next revisions of cards of each family, in every dtype. Policy only (no NVRTC),
// so the whole walk takes milliseconds; tests/core/builtin compiles the same families through
// NvrtcCompiler, where a refusal is a failed compile.

#include "builtin_proposer/BuiltinProposer.h"
#include "kernel/KernelSourcePolicy.h"
#include "model/SearchTree.h"

#include <gtest/gtest.h>

#include <atomic>

namespace kforge::core {
namespace {

using nlohmann::json;

std::vector<std::int64_t> contiguousStrides(const std::vector<std::int64_t>& sizes)
{
    std::vector<std::int64_t> strides(sizes.size(), 1);
    for (int d = static_cast<int>(sizes.size()) - 2; d >= 0; --d)
        strides[d] = strides[d + 1] * sizes[d + 1];
    return strides;
}

TensorSpec tensor(const std::string& dtype, const std::vector<std::int64_t>& sizes)
{
    return TensorSpec{dtype, sizes, contiguousStrides(sizes), "cuda:0"};
}

ArgSpec tensorArg(const std::string& name, const TensorSpec& t)
{
    return ArgSpec{name, "Tensor", ArgKind::Tensor, {t}, nullptr};
}

OperatorCard card(const std::string& op, const std::string& overload, std::vector<ArgSpec> args, TensorSpec out)
{
    OperatorCard c;
    c.op = op;
    c.overload = overload;
    c.args = std::move(args);
    c.outputs = {std::move(out)};
    c.id = "card-" + op + "-" + c.outputs[0].dtype;
    return c;
}

std::vector<OperatorCard> cardsOfEveryFamily(const std::string& dtype)
{
    const TensorSpec rows = tensor(dtype, {64, 1000});
    const TensorSpec image = tensor(dtype, {2, 64, 16, 16});
    std::vector<OperatorCard> cards;
    cards.push_back(card("aten::_softmax", "",
                         {tensorArg("self", rows), ArgSpec{"dim", "int", ArgKind::Value, {}, -1},
                          ArgSpec{"half_to_float", "bool", ArgKind::Value, {}, false}},
                         rows));
    for (const char* op : {"aten::relu", "aten::rsqrt", "aten::sigmoid", "aten::tanh", "aten::silu", "aten::cos"})
        cards.push_back(card(op, "", {tensorArg("self", rows)}, rows));
    cards.push_back(card("aten::gelu", "",
                         {tensorArg("self", rows), ArgSpec{"approximate", "str", ArgKind::Value, {}, "tanh"}}, rows));
    for (const char* op : {"aten::add", "aten::mul"}) {
        std::vector<ArgSpec> args = {tensorArg("self", rows), tensorArg("other", tensor(dtype, {1000}))};
        if (std::string(op) == "aten::add")
            args.push_back(ArgSpec{"alpha", "Scalar", ArgKind::Value, {}, 1});
        cards.push_back(card(op, "Tensor", std::move(args), rows));
    }
    cards.push_back(card(
        "aten::layer_norm", "",
        {tensorArg("input", rows), ArgSpec{"normalized_shape", "int[]", ArgKind::Value, {}, json::array({1000})},
         tensorArg("weight", tensor(dtype, {1000})), tensorArg("bias", tensor(dtype, {1000})),
         ArgSpec{"eps", "float", ArgKind::Value, {}, 1e-5}, ArgSpec{"cudnn_enable", "bool", ArgKind::Value, {}, true}},
        rows));
    cards.push_back(card("aten::group_norm", "",
                         {tensorArg("input", image), ArgSpec{"num_groups", "int", ArgKind::Value, {}, 8},
                          tensorArg("weight", tensor(dtype, {64})), tensorArg("bias", tensor(dtype, {64})),
                          ArgSpec{"eps", "float", ArgKind::Value, {}, 1e-5},
                          ArgSpec{"cudnn_enabled", "bool", ArgKind::Value, {}, true}},
                         image));
    cards.push_back(card("aten::mean", "dim",
                         {tensorArg("self", rows), ArgSpec{"dim", "int[1]?", ArgKind::Value, {}, json::array({-1})},
                          ArgSpec{"keepdim", "bool", ArgKind::Value, {}, true},
                          ArgSpec{"dtype", "ScalarType?", ArgKind::None, {}, nullptr}},
                         tensor(dtype, {64, 1})));
    cards.push_back(
        card("aten::adaptive_avg_pool2d", "",
             {tensorArg("self", image), ArgSpec{"output_size", "SymInt[2]", ArgKind::Value, {}, json::array({1, 1})}},
             tensor(dtype, {2, 64, 1, 1})));
    return cards;
}

TEST(KernelSourcePolicyBuiltin, EveryFamilysCandidatesAreAccepted)
{
    int checked = 0;
    for (const std::string dtype : {"float32", "float16", "bfloat16"}) {
        for (const OperatorCard& c : cardsOfEveryFamily(dtype)) {
            SCOPED_TRACE(c.id);
            ASSERT_TRUE(BuiltinProposer::supports(c).ok()) << BuiltinProposer::supports(c).error().toString();
            BuiltinProposer proposer(c);
            const SearchTree tree(c.id, 1);
            const std::atomic<bool> stop{false};
            auto root = proposer.proposeRoot(tree, stop);
            ASSERT_TRUE(root.ok()) << root.error().toString();
            std::vector<Candidate> candidates = {root->candidate};
            for (Candidate& next : proposer.likelyNext(tree, root.value(), 200))
                candidates.push_back(std::move(next));
            for (const Candidate& candidate : candidates) {
                const std::optional<SourcePolicyViolation> violation = checkKernelSource(candidate.source);
                EXPECT_FALSE(violation.has_value()) << "line " << violation->line << ": " << violation->reason << "\n"
                                                    << candidate.source;
                ++checked;
            }
        }
    }
    EXPECT_GT(checked, 100);
}

} // namespace
} // namespace kforge::core
