#include "builtin_proposer/BuiltinProposer.h"
#include "builtin_proposer/BinaryFamily.h"
#include "builtin_proposer/UnaryFamily.h"

#include "CandidateChecks.h"

#include "model/LaunchPlan.h"
#include "model/SearchTree.h"

#include <gtest/gtest.h>

#include <map>

#include <set>

using namespace kforge::core;
using namespace kforge::core::test_candidates;
using nlohmann::json;

namespace {

std::vector<std::int64_t> contiguousStrides(const std::vector<std::int64_t>& sizes)
{
    std::vector<std::int64_t> strides(sizes.size(), 1);
    for (int d = static_cast<int>(sizes.size()) - 2; d >= 0; --d)
        strides[d] = strides[d + 1] * sizes[d + 1];
    return strides;
}

// aten::softmax.int / log_softmax.int (dim -1, dtype None) or _softmax / _log_softmax.
OperatorCard softmaxCard(const std::string& op, const std::string& overload, const std::string& dtype,
                         std::vector<std::int64_t> sizes)
{
    OperatorCard card;
    card.op = op;
    card.overload = overload;
    const TensorSpec t{dtype, sizes, contiguousStrides(sizes), "cuda:0"};
    card.args.push_back(ArgSpec{"self", "Tensor", ArgKind::Tensor, {t}, nullptr});
    card.args.push_back(ArgSpec{"dim", "int", ArgKind::Value, {}, -1});
    if (overload == "int")
        card.args.push_back(ArgSpec{"dtype", "ScalarType?", ArgKind::None, {}, nullptr});
    else
        card.args.push_back(ArgSpec{"half_to_float", "bool", ArgKind::Value, {}, false});
    card.outputs = {t};
    card.id = "card-" + op + "-" + dtype;
    return card;
}

OperatorCard unaryCard(const std::string& op, const std::string& dtype, std::int64_t numel,
                       const std::string& approximate = {})
{
    OperatorCard card;
    card.op = op;
    const TensorSpec t{dtype, {numel}, {1}, "cuda:0"};
    card.args.push_back(ArgSpec{"self", "Tensor", ArgKind::Tensor, {t}, nullptr});
    if (!approximate.empty())
        card.args.push_back(ArgSpec{"approximate", "str", ArgKind::Value, {}, approximate});
    card.outputs = {t};
    card.id = "card-" + op + "-" + dtype;
    return card;
}

const std::vector<std::string> kDtypes = {"float32", "float16", "bfloat16"};

} // namespace

TEST(BuiltinProposer, SoftmaxFamiliesCompileForEveryDtypeAndRowLength)
{
    for (const auto& [op, overload] :
         std::vector<std::pair<std::string, std::string>>{{"aten::softmax", "int"}, {"aten::log_softmax", "int"}})
        for (const std::string& dtype : kDtypes)
            for (std::int64_t n : {1, 7, 197, 1000, 4097}) {
                SCOPED_TRACE(op + " " + dtype + " n=" + std::to_string(n));
                const SearchTree tree = growChain(softmaxCard(op, overload, dtype, {5, n}), 3, true);
                EXPECT_EQ(tree.size(), 4u);
            }
    // The underscore overloads (half_to_float=false) and a rank-3 input.
    growChain(softmaxCard("aten::_softmax", "", "bfloat16", {2, 3, 512}), 2, true);
    growChain(softmaxCard("aten::_log_softmax", "", "float16", {2, 3, 1000}), 2, true);
}

TEST(BuiltinProposer, SoftmaxWithDtypeFloat32ReadsTheInputAndWritesFloat32)
{
    // transformers' eager attention: softmax(bf16, dim=-1, dtype=torch.float32). ScalarType 6 is
    // float32, 5 float16.
    for (const std::string& in : {std::string("bfloat16"), std::string("float16")}) {
        SCOPED_TRACE(in);
        OperatorCard card = softmaxCard("aten::softmax", "int", in, {64, 512});
        card.args[2] = ArgSpec{"dtype", "ScalarType?", ArgKind::Value, {}, 6};
        card.outputs[0].dtype = "float32";
        ASSERT_TRUE(BuiltinProposer::supports(card).ok());
        const SearchTree tree = growChain(card, 4, true);
        EXPECT_EQ(tree.size(), 5u);
        EXPECT_NE(tree.root()->candidate.source.find("typedef float out_t;"), std::string::npos);
    }
    // A conversion that rounds (bfloat16 to float16) is not what the kernel computes.
    OperatorCard rounding = softmaxCard("aten::softmax", "int", "bfloat16", {64, 512});
    rounding.args[2] = ArgSpec{"dtype", "ScalarType?", ArgKind::Value, {}, 5};
    rounding.outputs[0].dtype = "float16";
    auto refused = BuiltinProposer::supports(rounding);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("only to float32"), std::string::npos);
}

TEST(BuiltinProposer, SoftmaxRowsPerWarpAndFastMathVariantsCompile)
{
    // A warp holding two rows of 7 x 64 values (the last warp's second row is past the end) and
    // one of 512 bf16 values; every neighbour compiles cleanly, rows-per-warp steps both ways.
    for (const auto& [dtype, sizes] : std::vector<std::pair<std::string, std::vector<std::int64_t>>>{
             {"float32", {7, 64}}, {"bfloat16", {64, 512}}, {"float16", {5, 197}}}) {
        SCOPED_TRACE(dtype);
        const OperatorCard card = softmaxCard("aten::softmax", "int", dtype, sizes);
        BuiltinProposer proposer(card);
        std::atomic<bool> stop{false};
        SearchTree tree(card.id, 1);
        auto root = proposer.proposeRoot(tree, stop);
        ASSERT_TRUE(root.ok());
        json params = root->provenance.details["params"];
        ASSERT_GT(params["rows_per_block"].get<int>(), 1) << params.dump();
        params["rows_per_warp"] = 2;
        params["fast_math"] = true;
        Provenance provenance = root->provenance;
        provenance.details["params"] = params;
        const std::string rootId = tree.addRoot(root->candidate, provenance, 0).value();
        ASSERT_TRUE(tree.recordEvaluation(rootId, passed(10)).ok());
        std::set<std::string> steps;
        for (int i = 0; i < 12; ++i) {
            auto p = proposer.propose(tree, *tree.find(rootId), stop);
            ASSERT_TRUE(p.ok());
            if (!p->failureReason.empty())
                break;
            expectGoodCandidate(card, p->candidate, p->provenance.transformation);
            steps.insert(p->provenance.transformation);
            const std::string id = tree.addChild(rootId, p->candidate, p->provenance, 0).value();
            ASSERT_TRUE(tree.recordEvaluation(id, passed(11)).ok());
        }
        EXPECT_TRUE(steps.count("rows-per-warp 2->1")) << "steps: " << steps.size();
        EXPECT_TRUE(steps.count("accurate-exp"));
    }
}

TEST(BuiltinProposer, SoftmaxWalkCoversEveryVariantAndCompiles)
{
    // A longer walk visits block-per-row, warp-per-row, online, two-pass and register variants.
    const OperatorCard card = softmaxCard("aten::softmax", "int", "float16", {16, 1024});
    const SearchTree tree = growChain(card, 24, true, 3);
    std::set<std::string> kinds;
    for (const SearchNode& node : tree.nodes()) {
        const json& p = node.provenance.details["params"];
        kinds.insert(p["rows_per_block"] == 1 ? "block" : "warp");
        kinds.insert(p["registers"] ? "registers" : (p["online"] ? "online" : "two-pass"));
    }
    EXPECT_GE(tree.size(), 10u);
    EXPECT_GE(kinds.size(), 4u) << "variants seen: " << kinds.size();
}

TEST(BuiltinProposer, UnaryOpsCompileForEveryDtypeAndSize)
{
    const std::vector<std::pair<std::string, std::string>> ops = {
        {"aten::relu", ""}, {"aten::gelu", "none"}, {"aten::gelu", "tanh"}, {"aten::silu", ""}, {"aten::sigmoid", ""},
        {"aten::tanh", ""}, {"aten::neg", ""},      {"aten::rsqrt", ""},    {"aten::cos", ""},  {"aten::sin", ""}};
    for (const auto& [op, approximate] : ops)
        for (const std::string& dtype : kDtypes)
            for (std::int64_t n : {1, 7, 1000, 4097, 1 << 20}) {
                SCOPED_TRACE(op + " " + approximate + " " + dtype + " n=" + std::to_string(n));
                const SearchTree tree = growChain(unaryCard(op, dtype, n, approximate), n == 4097 ? 3 : 1, true);
                EXPECT_GE(tree.size(), 2u);
            }
}

TEST(BuiltinProposer, InPlaceAndChannelsLastUnaryOpsRunOverStorageOrder)
{
    // torchvision's ReLU(inplace=True) in ResNet-50, fp32 NCHW and fp16 channels-last; silu_ too.
    auto nhwc = [](OperatorCard card, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
        const TensorSpec t{card.args[0].tensors[0].dtype, {n, c, h, w}, {h * w * c, 1, w * c, c}, "cuda:0"};
        card.args[0].tensors = {t};
        card.outputs = {t};
        return card;
    };
    for (const std::string op : {"aten::relu_", "aten::silu_"})
        for (const std::string& dtype : kDtypes) {
            SCOPED_TRACE(op + " " + dtype);
            const SearchTree flat = growChain(unaryCard(op, dtype, 4097), 2, true);
            ASSERT_GE(flat.size(), 2u);
            const SearchNode& root = *flat.root();
            EXPECT_EQ(root.candidate.launchPlan["launches"][0]["kernel"], "kf_" + op.substr(6));
            EXPECT_NE(root.candidate.source.find("_ (in place)"), std::string::npos);
            // y is x: no __restrict__ on either pointer.
            EXPECT_EQ(root.candidate.source.find("__restrict__"), std::string::npos);
            const SearchTree cl = growChain(nhwc(unaryCard(op, dtype, 1), 2, 64, 7, 7), 2, true);
            ASSERT_GE(cl.size(), 2u);
            EXPECT_NE(cl.root()->candidate.source.find("channels-last (in storage order)"), std::string::npos);
        }
    // Out of place, a channels-last input with its output laid out the same runs flat; into an
    // output of another layout (to(memory_format=contiguous) of a channels-last tensor) it gathers.
    OperatorCard relu = nhwc(unaryCard("aten::relu", "float16", 1), 2, 8, 3, 3);
    EXPECT_TRUE(BuiltinProposer::supports(relu).ok());
    OperatorCard mixed = relu;
    mixed.outputs[0].strides = {72, 9, 3, 1};
    EXPECT_TRUE(BuiltinProposer::supports(mixed).ok());
    // Any dense layout shared by input and output runs flat, in place too.
    OperatorCard transposed = unaryCard("aten::relu_", "float32", 1);
    transposed.args[0].tensors[0] = TensorSpec{"float32", {4, 6}, {1, 4}, "cuda:0"};
    transposed.outputs = transposed.args[0].tensors;
    const SearchTree dense = growChain(transposed, 1, true);
    ASSERT_GE(dense.size(), 2u);
    EXPECT_NE(dense.root()->candidate.source.find("dense (in storage order)"), std::string::npos);
    // An output with gaps is not what eager allocates: refused.
    OperatorCard gaps = unaryCard("aten::relu", "float32", 1);
    gaps.args[0].tensors[0] = TensorSpec{"float32", {4, 6}, {8, 1}, "cuda:0"};
    gaps.outputs = gaps.args[0].tensors;
    EXPECT_NE(BuiltinProposer::supports(gaps).error().message.find("dense layouts only"), std::string::npos);
}

TEST(BuiltinProposer, UnaryOpsOfASliceGatherIntoADenseOutput)
{
    // rotate_half's -x[..., 16:] of a transposed [4, 64, 8, 32] query: a slice (gaps between rows)
    // whose result eager lays out densely in the slice's dim order (0, 2, 1, 3).
    for (const std::string& dtype : kDtypes) {
        SCOPED_TRACE(dtype);
        OperatorCard neg = unaryCard("aten::neg", dtype, 1);
        neg.args[0].tensors[0] = TensorSpec{dtype, {4, 8, 64, 16}, {16384, 32, 256, 1}, "cuda:0"};
        neg.outputs = {TensorSpec{dtype, {4, 8, 64, 16}, {8192, 16, 128, 1}, "cuda:0"}};
        const SearchTree tree = growChain(neg, 3, true);
        ASSERT_GE(tree.size(), 2u);
        const std::string& source = tree.root()->candidate.source;
        EXPECT_NE(source.find("gathered from a strided input"), std::string::npos);
        // Batch, positions and heads merge into one dim (the slice steps 32 per head, 256 per
        // position, 16384 per batch), the 16 elements of a row into the other.
        EXPECT_NE(source.find("[2048: 32] [16: 1]"), std::string::npos) << source;
        EXPECT_NE(source.find("reinterpret_cast<const InVec*>(x + o)"), std::string::npos)
            << "aligned rows load as vectors";
    }
    // An odd row (7 of a 9-element row): scalar loads, vectors only where they divide the row.
    OperatorCard odd = unaryCard("aten::gelu", "float32", 1, "none");
    odd.args[0].tensors[0] = TensorSpec{"float32", {3, 7}, {9, 1}, "cuda:0"};
    odd.outputs = {TensorSpec{"float32", {3, 7}, {7, 1}, "cuda:0"}};
    const SearchTree tree = growChain(odd, 3, true);
    ASSERT_GE(tree.size(), 2u);
    EXPECT_EQ(tree.root()->provenance.details["params"]["vector_width"], 1);
    // In place the output is self: never gathered.
    OperatorCard inPlace = unaryCard("aten::relu_", "float32", 1);
    inPlace.args[0].tensors[0] = TensorSpec{"float32", {3, 7}, {9, 1}, "cuda:0"};
    inPlace.outputs = {TensorSpec{"float32", {3, 7}, {7, 1}, "cuda:0"}};
    EXPECT_NE(
        BuiltinProposer::supports(inPlace).error().message.find("in-place op whose output is laid out unlike self"),
        std::string::npos);
}

// aten::to.dtype(self, dtype, non_blocking, copy, memory_format) of a contiguous [numel] tensor.
OperatorCard castCard(const std::string& from, const std::string& to, std::int64_t numel, json memoryFormat = nullptr)
{
    static const std::map<std::string, int> scalarType = {
        {"float16", 5}, {"float32", 6}, {"float64", 7}, {"bfloat16", 15}};
    OperatorCard card;
    card.op = "aten::to";
    card.overload = "dtype";
    card.args.push_back(
        ArgSpec{"self", "Tensor", ArgKind::Tensor, {TensorSpec{from, {numel}, {1}, "cuda:0"}}, nullptr});
    card.args.push_back(ArgSpec{"dtype", "ScalarType", ArgKind::Value, {}, scalarType.at(to)});
    card.args.push_back(ArgSpec{"non_blocking", "bool", ArgKind::Value, {}, false});
    card.args.push_back(ArgSpec{"copy", "bool", ArgKind::Value, {}, false});
    card.args.push_back(memoryFormat.is_null()
                            ? ArgSpec{"memory_format", "MemoryFormat?", ArgKind::None, {}, nullptr}
                            : ArgSpec{"memory_format", "MemoryFormat?", ArgKind::Value, {}, memoryFormat});
    card.outputs = {TensorSpec{to, {numel}, {1}, "cuda:0"}};
    card.id = "card-to-" + from + "-" + to;
    return card;
}

TEST(BuiltinProposer, PowOfExponentTwoSquaresAsEagerDoes)
{
    std::atomic<bool> stop{false};
    for (const std::string& dtype : kDtypes) {
        OperatorCard card = unaryCard("aten::pow", dtype, 4097);
        card.overload = "Tensor_Scalar";
        card.args.push_back(ArgSpec{"exponent", "Scalar", ArgKind::Value, {}, 2});
        SCOPED_TRACE(dtype);
        auto root = BuiltinProposer(card).proposeRoot(SearchTree("c", 1), stop);
        ASSERT_TRUE(root.ok()) << root.error().toString();
        EXPECT_NE(root->candidate.source.find("kfOp(float x) { return (x * x); }"), std::string::npos);
        EXPECT_GE(growChain(card, 3, true).size(), 2u);
        card.args.back().value = 2.0; // pow(2.0) is the same special case
        EXPECT_TRUE(BuiltinProposer::supports(card).ok());
    }
    // rsqrt and neg have no fast-math variant to offer.
    auto rsqrt = BuiltinProposer(unaryCard("aten::rsqrt", "float32", 1024)).proposeRoot(SearchTree("c", 1), stop);
    ASSERT_TRUE(rsqrt.ok());
    EXPECT_NE(rsqrt->candidate.source.find("rsqrtf(x)"), std::string::npos);
    EXPECT_FALSE(rsqrt->provenance.details["params"]["fast_math"].get<bool>());
    // Nor have cos and sin (the rotary tables): none of the root's neighbours uses __cosf / __sinf,
    // where silu's include its fast-math form.
    const auto fastMathNeighbours = [&stop](const std::string& op) {
        const OperatorCard card = unaryCard(op, "float32", 1 << 20);
        BuiltinProposer proposer(card);
        SearchTree tree(card.id, 1);
        auto root = proposer.proposeRoot(tree, stop);
        const std::string rootId = tree.addRoot(root->candidate, root->provenance, 0).value();
        EXPECT_TRUE(tree.recordEvaluation(rootId, passed(10)).ok());
        int fast = 0;
        for (int i = 0; i < 50; ++i) {
            auto next = proposer.propose(tree, *tree.find(rootId), stop);
            if (!next.ok() || !next->failureReason.empty())
                break;
            fast += next->provenance.details["params"]["fast_math"].get<bool>() ? 1 : 0;
            EXPECT_TRUE(
                tree.recordEvaluation(tree.addChild(rootId, next->candidate, next->provenance, 0).value(), passed(9))
                    .ok());
        }
        return fast;
    };
    EXPECT_EQ(fastMathNeighbours("aten::cos"), 0);
    EXPECT_EQ(fastMathNeighbours("aten::sin"), 0);
    EXPECT_EQ(fastMathNeighbours("aten::silu"), 1);
    auto cosRoot = BuiltinProposer(unaryCard("aten::cos", "bfloat16", 4097)).proposeRoot(SearchTree("c", 1), stop);
    ASSERT_TRUE(cosRoot.ok());
    EXPECT_NE(cosRoot->candidate.source.find("cosf(x)"), std::string::npos);
}

TEST(BuiltinProposer, DtypeConversionsCompileBetweenEveryPairOfDtypes)
{
    std::atomic<bool> stop{false};
    for (const std::string& from : kDtypes)
        for (const std::string& to : kDtypes) {
            if (from == to)
                continue;
            for (std::int64_t n : {7, 4097, 1 << 20}) {
                SCOPED_TRACE(from + " -> " + to + " n=" + std::to_string(n));
                const OperatorCard card = castCard(from, to, n);
                auto root = BuiltinProposer(card).proposeRoot(SearchTree("c", 1), stop);
                ASSERT_TRUE(root.ok()) << root.error().toString();
                EXPECT_NE(root->candidate.source.find(" into " + to), std::string::npos);
                EXPECT_NE(root->candidate.source.find("kfOp(float x) { return x; }"), std::string::npos);
                // 16 bytes of the wider dtype per vector: float32 on either side limits it to 4.
                if (n >= 8) {
                    EXPECT_EQ(root->provenance.details["params"]["vector_width"],
                              from == "float32" || to == "float32" ? 4 : 8);
                }
                EXPECT_FALSE(root->provenance.details["params"]["fast_math"].get<bool>());
                EXPECT_GE(growChain(card, 2, true).size(), 2u);
            }
        }
    // preserve_format (1) and contiguous_format (0) keep a contiguous tensor contiguous.
    EXPECT_TRUE(BuiltinProposer::supports(castCard("bfloat16", "float32", 64, 1)).ok());
    EXPECT_TRUE(BuiltinProposer::supports(castCard("bfloat16", "float32", 64, 0)).ok());
}

// aten::type_as(self, other): self converted to other's dtype (a decoder RMSNorm's `output.type_as(x)`).
OperatorCard typeAsCard(const std::string& from, const std::string& to, const std::string& otherDevice = "cuda:0")
{
    OperatorCard card;
    card.op = "aten::type_as";
    card.args.push_back(
        ArgSpec{"self", "Tensor", ArgKind::Tensor, {TensorSpec{from, {4, 512}, {512, 1}, "cuda:0"}}, nullptr});
    card.args.push_back(
        ArgSpec{"other", "Tensor", ArgKind::Tensor, {TensorSpec{to, {4, 512}, {512, 1}, otherDevice}}, nullptr});
    card.outputs = {TensorSpec{to, {4, 512}, {512, 1}, otherDevice}};
    card.id = "card-type-as-" + from + "-" + to;
    return card;
}

TEST(BuiltinProposer, TypeAsConvertsLikeToDtype)
{
    std::atomic<bool> stop{false};
    const OperatorCard card = typeAsCard("float32", "bfloat16");
    auto root = BuiltinProposer(card).proposeRoot(SearchTree("c", 1), stop);
    ASSERT_TRUE(root.ok()) << root.error().toString();
    // The same kernel as to(bfloat16) of the same tensor.
    auto cast = BuiltinProposer(castCard("float32", "bfloat16", 2048)).proposeRoot(SearchTree("c", 1), stop);
    ASSERT_TRUE(cast.ok()) << cast.error().toString();
    EXPECT_EQ(root->candidate.source, cast->candidate.source);
    expectGoodCandidate(card, root->candidate, "root");
    EXPECT_GE(growChain(card, 2, true).size(), 2u);

    // Into its own dtype type_as returns self; onto another device it copies across devices.
    EXPECT_NE(BuiltinProposer::supports(typeAsCard("bfloat16", "bfloat16")).error().message.find("its own dtype"),
              std::string::npos);
    EXPECT_NE(
        BuiltinProposer::supports(typeAsCard("float32", "bfloat16", "cpu")).error().message.find("another device"),
        std::string::npos);
}

TEST(BuiltinProposer, ContiguousOfAStridedTensorIsAnIdentityGather)
{
    // The decoders' attention output: [4, 8, 512, 256] transposed back to [4, 512, 8, 256] and made
    // contiguous before the output projection (1.1% of Gemma s512's model time in run 7).
    auto contiguousCard = [](const TensorSpec& in, json format) {
        OperatorCard card;
        card.op = "aten::contiguous";
        card.args.push_back(ArgSpec{"self", "Tensor", ArgKind::Tensor, {in}, nullptr});
        card.args.push_back(ArgSpec{"memory_format", "MemoryFormat", ArgKind::Value, {}, format});
        card.outputs = {TensorSpec{in.dtype, in.sizes, {}, "cuda:0"}};
        std::int64_t stride = 1;
        card.outputs[0].strides.assign(in.sizes.size(), 1);
        for (std::size_t d = in.sizes.size(); d-- > 0;) {
            card.outputs[0].strides[d] = stride;
            stride *= in.sizes[d];
        }
        card.id = "card-contiguous-" + in.dtype;
        return card;
    };
    for (const std::string& dtype : kDtypes) {
        SCOPED_TRACE(dtype);
        const OperatorCard card = contiguousCard(TensorSpec{dtype, {4, 64, 8, 32}, {16384, 32, 2048, 1}, "cuda:0"}, 0);
        const SearchTree tree = growChain(card, 2, true);
        ASSERT_GE(tree.size(), 2u);
        const std::string& source = tree.root()->candidate.source;
        EXPECT_NE(source.find("gathered from a strided input"), std::string::npos);
        EXPECT_NE(source.find("kfOp(float x) { return x; }"), std::string::npos);
    }
    EXPECT_NE(BuiltinProposer::supports(contiguousCard(TensorSpec{"float32", {4, 8}, {8, 1}, "cuda:0"}, 0))
                  .error()
                  .message.find("returns the tensor itself"),
              std::string::npos);
    // channels_last asked of a 2-D tensor: the output the card records is not that layout.
    EXPECT_NE(BuiltinProposer::supports(contiguousCard(TensorSpec{"float32", {4, 8}, {1, 4}, "cuda:0"}, 2))
                  .error()
                  .message.find("not the layout asked for"),
              std::string::npos);
    EXPECT_NE(BuiltinProposer::supports(contiguousCard(TensorSpec{"float32", {4, 8}, {1, 4}, "cuda:0"}, 3))
                  .error()
                  .message.find("only contiguous_format and channels_last"),
              std::string::npos);
    // NCHW into channels-last (ResNet's input conversion): a gather into an NHWC output; a [2, 4, 1, 1]
    // tensor is both layouts at once and comes back itself.
    OperatorCard toNhwc = contiguousCard(TensorSpec{"float16", {2, 4, 3, 5}, {60, 15, 5, 1}, "cuda:0"}, 2);
    toNhwc.outputs[0].strides = {60, 1, 20, 4};
    EXPECT_GE(growChain(toNhwc, 1, true).size(), 2u);
    OperatorCard both = contiguousCard(TensorSpec{"float16", {2, 4, 1, 1}, {4, 1, 1, 1}, "cuda:0"}, 2);
    EXPECT_NE(BuiltinProposer::supports(both).error().message.find("returns the tensor itself"), std::string::npos);
}

TEST(BuiltinProposer, FlattenIsAReshapeIntoTheFlattenedSizes)
{
    // A ViT-style x.flatten(2) of a transposed [B, C, H, W] (the bundled example's): eager copies.
    auto flattenCard = [](const TensorSpec& in, std::int64_t startDim, const std::vector<std::int64_t>& sizes) {
        OperatorCard card;
        card.op = "aten::flatten";
        card.overload = "using_ints";
        card.args.push_back(ArgSpec{"self", "Tensor", ArgKind::Tensor, {in}, nullptr});
        card.args.push_back(ArgSpec{"start_dim", "int", ArgKind::Value, {}, startDim});
        card.args.push_back(ArgSpec{"end_dim", "int", ArgKind::Value, {}, -1});
        card.outputs = {TensorSpec{in.dtype, sizes, contiguousStrides(sizes), "cuda:0"}};
        card.id = "card-flatten-" + in.dtype;
        return card;
    };
    for (const std::string& dtype : kDtypes) {
        SCOPED_TRACE(dtype);
        const OperatorCard card =
            flattenCard(TensorSpec{dtype, {4, 256, 4, 16}, {16384, 16, 4096, 1}, "cuda:0"}, 2, {4, 256, 64});
        const SearchTree tree = growChain(card, 2, true);
        ASSERT_GE(tree.size(), 2u);
        EXPECT_NE(tree.root()->candidate.source.find("gathered from a strided input"), std::string::npos);
    }
    // The pooled head's flatten(1) of [N, C, 1, 1] views its input: no kernel to run.
    const std::string refusal =
        BuiltinProposer::supports(
            flattenCard(TensorSpec{"float32", {4, 64, 1, 1}, {64, 1, 1, 1}, "cuda:0"}, 1, {4, 64}))
            .error()
            .message;
    EXPECT_NE(refusal.find("flatten of a tensor it can view returns a view"), std::string::npos) << refusal;
}

TEST(BuiltinProposer, ReshapeThatCopiesIsAGatherAndOneThatViewsIsRefused)
{
    // repeat_kv: k[:, :, None].expand(B, KV, n_rep, S, D).reshape(B, KV * n_rep, S, D) of a transposed
    // projection (Qwen s512: 2.45% of its model time in run 8): not viewable, eager copies.
    auto reshapeCard = [](const TensorSpec& in, const std::vector<std::int64_t>& sizes) {
        OperatorCard card;
        card.op = "aten::reshape";
        card.args.push_back(ArgSpec{"self", "Tensor", ArgKind::Tensor, {in}, nullptr});
        card.args.push_back(ArgSpec{"shape", "SymInt[]", ArgKind::Value, {}, json(sizes)});
        TensorSpec out{in.dtype, sizes, std::vector<std::int64_t>(sizes.size(), 1), "cuda:0"};
        for (std::size_t d = sizes.size() - 1; d-- > 0;)
            out.strides[d] = out.strides[d + 1] * sizes[d + 1];
        card.outputs = {out};
        card.id = "card-reshape-" + in.dtype;
        return card;
    };
    for (const std::string& dtype : kDtypes) {
        SCOPED_TRACE(dtype);
        const OperatorCard card =
            reshapeCard(TensorSpec{dtype, {4, 2, 8, 64, 32}, {4096, 32, 0, 64, 1}, "cuda:0"}, {4, 16, 64, 32});
        const SearchTree tree = growChain(card, 2, true);
        ASSERT_GE(tree.size(), 2u);
        const std::string& source = tree.root()->candidate.source;
        EXPECT_NE(source.find("gathered from a strided input"), std::string::npos);
        EXPECT_NE(source.find("kfOp(float x) { return x; }"), std::string::npos);
    }
    // Gemma's one KV head: [4,1,8,S,D] with the expanded dim next to the batch views as [4,8,S,D].
    EXPECT_NE(
        BuiltinProposer::supports(
            reshapeCard(TensorSpec{"bfloat16", {4, 1, 8, 64, 32}, {2048, 2048, 0, 32, 1}, "cuda:0"}, {4, 8, 64, 32}))
            .error()
            .message.find("returns a view"),
        std::string::npos);
    // A transposed tensor merged across its transposed dims, or across a transposed and an
    // untouched one, copies; splitting its last dim views it.
    const TensorSpec transposed{"float32", {4, 6, 5, 8}, {240, 8, 48, 1}, "cuda:0"};
    EXPECT_TRUE(BuiltinProposer::supports(reshapeCard(transposed, {4, 30, 8})).ok());
    EXPECT_TRUE(BuiltinProposer::supports(reshapeCard(transposed, {4, 6, 40})).ok());
    EXPECT_NE(
        BuiltinProposer::supports(reshapeCard(transposed, {4, 6, 5, 2, 4})).error().message.find("returns a view"),
        std::string::npos);
    OperatorCard strided = reshapeCard(transposed, {4, 30, 8});
    strided.outputs[0].strides = {1, 4, 120};
    EXPECT_NE(BuiltinProposer::supports(strided).error().message.find("returns a view of its input (no kernel to run)"),
              std::string::npos);
    // The expanded keys of repeat_kv reshaped into another expanded layout (a decoder's card).
    OperatorCard expanded = reshapeCard(
        TensorSpec{"bfloat16", {4, 1, 8, 512, 256}, {131072, 131072, 0, 256, 1}, "cuda:0"}, {4, 8, 512, 256});
    expanded.outputs[0].strides = {131072, 0, 256, 1};
    EXPECT_NE(BuiltinProposer::supports(expanded).error().message.find("returns a view"), std::string::npos);
    OperatorCard fewer = reshapeCard(transposed, {4, 30, 8});
    fewer.outputs[0].sizes = {4, 30, 4};
    fewer.outputs[0].strides = {120, 4, 1};
    EXPECT_NE(BuiltinProposer::supports(fewer).error().message.find("as many elements"), std::string::npos);
}

TEST(BuiltinProposer, CatCopiesEachInputIntoItsSlab)
{
    // rotate_half: torch.cat((-x2, x1), dim=-1) where -x2 is dense in the transposed order and x1 a
    // slice of the transposed query (Qwen s512: 1.8% of its model time in run 8).
    auto catCard = [](const std::vector<TensorSpec>& inputs, const TensorSpec& out, json dim) {
        OperatorCard card;
        card.op = "aten::cat";
        card.args.push_back(ArgSpec{"tensors", "Tensor[]", ArgKind::TensorList, inputs, nullptr});
        card.args.push_back(ArgSpec{"dim", "int", ArgKind::Value, {}, dim});
        card.outputs = {out};
        card.id = "card-cat-" + out.dtype;
        return card;
    };
    for (const std::string& dtype : kDtypes) {
        SCOPED_TRACE(dtype);
        const OperatorCard card = catCard({TensorSpec{dtype, {4, 16, 64, 32}, {32768, 32, 512, 1}, "cuda:0"},
                                           TensorSpec{dtype, {4, 16, 64, 32}, {65536, 64, 1024, 1}, "cuda:0"}},
                                          TensorSpec{dtype, {4, 16, 64, 64}, {65536, 4096, 64, 1}, "cuda:0"}, -1);
        const SearchTree tree = growChain(card, 2, true);
        ASSERT_GE(tree.size(), 2u);
        const Candidate& root = tree.root()->candidate;
        // One launch: input k's copy runs in its own range of the grid's blocks.
        ASSERT_EQ(root.launchPlan["launches"].size(), 1u);
        const json& launch = root.launchPlan["launches"][0];
        EXPECT_EQ(launch["kernel"], "kf_cat");
        EXPECT_EQ(launch["args"], json::array({"ptr:tensors.0", "ptr:tensors.1", "ptr:out0"}));
        // Each input's rows of 32 land at column 0 or 32 of the output's rows of 64: whole vectors.
        const int width = dtype == "float32" ? 4 : 8;
        EXPECT_EQ(tree.root()->provenance.details["params"]["vector_width"], width);
        EXPECT_NE(root.source.find("slab at output element 32"), std::string::npos);
        const std::int64_t blocksEach = 4 * 16 * 64 * 32 / width / 256;
        EXPECT_EQ(launch["grid"], json::array({2 * blocksEach}));
        EXPECT_NE(root.source.find("if (b < " + std::to_string(blocksEach) + "LL) {\n        kfCopy0(x0, y, b - 0LL);"),
                  std::string::npos);
        EXPECT_NE(root.source.find("if (b < " + std::to_string(2 * blocksEach) + "LL) {\n        kfCopy1(x1, y, b - " +
                                   std::to_string(blocksEach) + "LL);"),
                  std::string::npos);
    }
    // A slab that starts off a vector boundary copies element by element.
    const OperatorCard odd =
        catCard({TensorSpec{"float32", {3, 5}, {5, 1}, "cuda:0"}, TensorSpec{"float32", {3, 4}, {4, 1}, "cuda:0"}},
                TensorSpec{"float32", {3, 9}, {9, 1}, "cuda:0"}, 1);
    EXPECT_EQ(growChain(odd, 1, true).root()->provenance.details["params"]["vector_width"], 1);
    EXPECT_NE(BuiltinProposer::supports(catCard({TensorSpec{"float32", {3, 5}, {5, 1}, "cuda:0"},
                                                 TensorSpec{"float16", {3, 5}, {5, 1}, "cuda:0"}},
                                                TensorSpec{"float32", {6, 5}, {5, 1}, "cuda:0"}, 0))
                  .error()
                  .message.find("another dtype"),
              std::string::npos);
    EXPECT_NE(BuiltinProposer::supports(catCard({TensorSpec{"float32", {3, 5}, {5, 1}, "cuda:0"},
                                                 TensorSpec{"float32", {3, 5}, {5, 1}, "cuda:0"}},
                                                TensorSpec{"float32", {7, 5}, {5, 1}, "cuda:0"}, 0))
                  .error()
                  .message.find("do not add up"),
              std::string::npos);
}

TEST(BuiltinProposer, GeluExactUsesErfAndTanhFormUsesTanh)
{
    std::atomic<bool> stop{false};
    SearchTree tree("c", 1);
    auto exact = BuiltinProposer(unaryCard("aten::gelu", "float32", 64, "none")).proposeRoot(tree, stop);
    auto tanhForm = BuiltinProposer(unaryCard("aten::gelu", "float32", 64, "tanh")).proposeRoot(tree, stop);
    ASSERT_TRUE(exact.ok());
    ASSERT_TRUE(tanhForm.ok());
    EXPECT_NE(exact->candidate.source.find("erff("), std::string::npos);
    EXPECT_EQ(exact->candidate.source.find("tanhf("), std::string::npos);
    EXPECT_NE(tanhForm->candidate.source.find("tanhf("), std::string::npos);
    EXPECT_EQ(tanhForm->candidate.source.find("erff("), std::string::npos);
}

TEST(BuiltinProposer, FastGeluUsesTheShortFitOnlyFor16BitOutputsAndPairsConvert)
{
    // fast_math gelu: float32 keeps the ten-term erfc fit (its tolerance is tighter than the short
    // fit's tail error); float16 / bfloat16 use the five-term fit. 16-bit dtypes convert in pairs.
    for (const std::string& dtype : kDtypes) {
        SCOPED_TRACE(dtype);
        const OperatorCard card = unaryCard("aten::gelu", dtype, 4097, "none");
        auto family = UnaryFamily::create(card);
        ASSERT_TRUE(family.ok()) << family.error().toString();
        json params = family.value()->rootParams();
        auto accurate = family.value()->generate(params);
        params["fast_math"] = true;
        auto fast = family.value()->generate(params);
        ASSERT_TRUE(accurate.ok());
        ASSERT_TRUE(fast.ok());
        const bool half = dtype != "float32";
        EXPECT_EQ(accurate->source.find("kfLoad2(") != std::string::npos, half);
        EXPECT_NE(accurate->source.find("erff("), std::string::npos);
        EXPECT_EQ(fast->source.find("kfGeluShortErfc(x)") != std::string::npos, half);
        EXPECT_EQ(fast->source.find("kfGeluErfc(x)") != std::string::npos, !half);
        expectGoodCandidate(card, accurate.value(), "accurate");
        expectGoodCandidate(card, fast.value(), "fast");
    }
}

TEST(BuiltinProposer, VectorWidthOnlyWhenTheRowLengthAllowsIt)
{
    // Rows of 7: never vectorized. Rows of 1000 in float16: up to 8 (16 bytes), never above 16 bytes.
    const SearchTree seven = growChain(softmaxCard("aten::softmax", "int", "float32", {4, 7}), 30, false);
    EXPECT_GE(seven.size(), 3u);
    for (const SearchNode& node : seven.nodes())
        EXPECT_EQ(node.provenance.details["params"]["vector_width"], 1);
    const SearchTree tree = growChain(softmaxCard("aten::softmax", "int", "float32", {4, 1000}), 30, false);
    EXPECT_EQ(tree.root()->provenance.details["params"]["vector_width"], 4);
    for (const SearchNode& node : tree.nodes())
        EXPECT_LE(node.provenance.details["params"]["vector_width"].get<int>(), 4);
    const SearchTree half = growChain(softmaxCard("aten::softmax", "int", "float16", {4, 1000}), 0, false);
    EXPECT_EQ(half.root()->provenance.details["params"]["vector_width"], 8);
}

TEST(BuiltinProposer, SameTreeAndSeedGiveTheSameProposals)
{
    const OperatorCard card = softmaxCard("aten::softmax", "int", "bfloat16", {64, 4096});
    const SearchTree a = growChain(card, 12, false, 42);
    const SearchTree b = growChain(card, 12, false, 42);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a.nodes()[i].candidate, b.nodes()[i].candidate);
        EXPECT_EQ(a.nodes()[i].provenance, b.nodes()[i].provenance);
    }
    // The seed matters: some other seed takes a different path.
    bool differs = false;
    for (std::uint64_t seed = 1; seed < 10 && !differs; ++seed) {
        const SearchTree c = growChain(card, 12, false, seed);
        for (std::size_t i = 0; i < std::min(a.size(), c.size()); ++i)
            differs = differs || a.nodes()[i].provenance != c.nodes()[i].provenance;
    }
    EXPECT_TRUE(differs);
}

TEST(BuiltinProposer, NeverRepeatsParamsAndSaysWhenNothingIsLeft)
{
    for (const OperatorCard& card :
         {softmaxCard("aten::softmax", "int", "float32", {8, 197}), unaryCard("aten::silu", "bfloat16", 4097)}) {
        BuiltinProposer proposer(card);
        std::atomic<bool> stop{false};
        SearchTree tree(card.id, 5);
        auto root = proposer.proposeRoot(tree, stop);
        ASSERT_TRUE(root.ok());
        const std::string rootId = tree.addRoot(root->candidate, root->provenance, 0).value();
        ASSERT_TRUE(tree.recordEvaluation(rootId, passed(10)).ok());
        std::string reason;
        for (int i = 0; i < 50 && reason.empty(); ++i) {
            // exhaustedNodes() names the root exactly when propose() can only fail on it.
            const bool predicted = proposer.exhaustedNodes(tree).contains(rootId);
            auto p = proposer.propose(tree, *tree.find(rootId), stop);
            ASSERT_TRUE(p.ok());
            reason = p->failureReason;
            EXPECT_EQ(predicted, !reason.empty()) << "after " << i << " children";
            if (reason.empty()) {
                const std::string id = tree.addChild(rootId, p->candidate, p->provenance, 0).value();
                ASSERT_TRUE(tree.recordEvaluation(id, passed(9)).ok());
            }
        }
        EXPECT_EQ(reason, "no untried transformation");
        EXPECT_GE(tree.root()->childIds.size(), 3u);
        std::set<std::string> params;
        std::set<std::string> names;
        for (const SearchNode& node : tree.nodes()) {
            EXPECT_TRUE(params.insert(node.provenance.details["params"].dump()).second)
                << "repeated " << node.provenance.details["params"].dump();
            if (node.parentId) {
                EXPECT_TRUE(names.insert(node.provenance.transformation).second);
                EXPECT_EQ(node.provenance.details["from"], tree.root()->provenance.details["params"]);
            }
        }
        // Recorded last (the checks above read every node's params): a node without this family's
        // template parameters (a manual edit) cannot be revised either.
        Provenance edit;
        edit.kind = ProvenanceKind::ManualEdit;
        const std::string edited = tree.addChild(rootId, root->candidate, edit, 0).value();
        EXPECT_TRUE(proposer.exhaustedNodes(tree).contains(edited));
        EXPECT_FALSE(proposer.propose(tree, *tree.find(edited), stop)->failureReason.empty());
    }
}

TEST(BuiltinProposer, TransformationNamesDescribeTheStep)
{
    const SearchTree tree = growChain(unaryCard("aten::relu", "float32", 1 << 20), 20, false, 11);
    std::set<std::string> prefixes;
    for (const SearchNode& node : tree.nodes()) {
        if (!node.parentId) {
            EXPECT_EQ(node.provenance.kind, ProvenanceKind::Root);
            continue;
        }
        const std::string& name = node.provenance.transformation;
        prefixes.insert(name.substr(0, name.find(' ')));
        // "threads-per-block 256->512": the from-value is the parent's parameter.
        const json& from = node.provenance.details["from"];
        const json& to = node.provenance.details["params"];
        EXPECT_NE(from, to);
        EXPECT_EQ(from, tree.find(*node.parentId)->provenance.details["params"]);
    }
    for (const std::string& prefix : prefixes)
        EXPECT_TRUE(prefix == "threads-per-block" || prefix == "vector-width" || prefix == "items-per-thread")
            << prefix;
    EXPECT_GE(prefixes.size(), 2u);
}

TEST(BuiltinProposer, RefusesUncoveredCardsWithTheReason)
{
    auto reasonOf = [](const OperatorCard& card) {
        auto supported = BuiltinProposer::supports(card);
        EXPECT_FALSE(supported.ok());
        std::atomic<bool> stop{false};
        auto root = BuiltinProposer(card).proposeRoot(SearchTree(card.id, 1), stop);
        EXPECT_FALSE(root.ok());
        if (root.ok())
            return std::string();
        EXPECT_EQ(root.error().code, ErrorCode::Unsupported);
        return root.error().toString();
    };

    OperatorCard mm = unaryCard("aten::mm", "float32", 64);
    EXPECT_NE(reasonOf(mm).find("op not covered by the built-in proposer yet"), std::string::npos);

    // softmax over dim 0: not the softmax family's, the row-region generator's (rows at a stride).
    OperatorCard dim0 = softmaxCard("aten::softmax", "int", "float32", {64, 128});
    dim0.args[1].value = 0;
    EXPECT_TRUE(BuiltinProposer::supports(dim0).ok());

    // Integer tensors go to the pointwise generator, which refuses an op without an integer form.
    OperatorCard ints = unaryCard("aten::gelu", "int64", 64);
    EXPECT_NE(reasonOf(ints).find("int64 operands not covered (gelu has no integer form)"), std::string::npos);

    // A strided input into a contiguous output gathers (UnaryOpsOfASliceGatherIntoADenseOutput);
    // an output with gaps is refused.
    OperatorCard strided = unaryCard("aten::tanh", "float32", 64);
    strided.args[0].tensors[0].strides = {2};
    strided.outputs[0].strides = {2};
    EXPECT_NE(reasonOf(strided).find("(dense layouts only)"), std::string::npos);

    OperatorCard erfc = unaryCard("aten::gelu", "float32", 64, "sigmoid");
    EXPECT_NE(reasonOf(erfc).find("approximate='sigmoid'"), std::string::npos);

    EXPECT_TRUE(BuiltinProposer::supports(softmaxCard("aten::softmax", "int", "float32", {3, 5})).ok());

    // An op only the row-region generator covers, over rows of one element: its reason, not "not
    // covered" (argmax over a dim of size 1).
    OperatorCard argmax;
    argmax.op = "aten::argmax";
    argmax.args.push_back(
        ArgSpec{"self", "Tensor", ArgKind::Tensor, {TensorSpec{"float32", {3, 1}, {1, 1}, "cuda:0"}}, nullptr});
    argmax.args.push_back(ArgSpec{"dim", "int?", ArgKind::Value, {}, 1});
    argmax.args.push_back(ArgSpec{"keepdim", "bool", ArgKind::Value, {}, false});
    argmax.outputs = {TensorSpec{"int64", {3}, {1}, "cuda:0"}};
    argmax.id = "card-argmax-one-element-rows";
    EXPECT_NE(reasonOf(argmax).find("rows of fewer than two elements"), std::string::npos) << reasonOf(argmax);
    argmax.args[0].tensors[0] = TensorSpec{"float32", {3, 5}, {5, 1}, "cuda:0"};
    EXPECT_TRUE(BuiltinProposer::supports(argmax).ok());
}

TEST(BuiltinProposer, AParentWithoutTemplateParametersIsAFailedProposal)
{
    const OperatorCard card = unaryCard("aten::sigmoid", "float16", 1000);
    BuiltinProposer proposer(card);
    std::atomic<bool> stop{false};
    SearchTree tree(card.id, 1);
    Provenance manual;
    manual.kind = ProvenanceKind::ManualEdit;
    const std::string id = tree.addRoot(Candidate{"// hand written", json::object()}, manual, 0).value();
    ASSERT_TRUE(tree.recordEvaluation(id, passed(5)).ok());
    auto p = proposer.propose(tree, *tree.find(id), stop);
    ASSERT_TRUE(p.ok());
    EXPECT_NE(p->failureReason.find("no unary template parameters"), std::string::npos) << p->failureReason;
}

namespace {

TensorSpec cudaTensor(const std::string& dtype, std::vector<std::int64_t> sizes)
{
    return TensorSpec{dtype, sizes, contiguousStrides(sizes), "cuda:0"};
}

// An [n, c, h, w] CUDA tensor stored channels-last (NHWC), with the strides PyTorch gives it.
TensorSpec channelsLastTensor(const std::string& dtype, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w)
{
    return TensorSpec{dtype, {n, c, h, w}, {h * w * c, 1, w * c, c}, "cuda:0"};
}

ArgSpec tensorArg(const std::string& name, const TensorSpec& t)
{
    return ArgSpec{name, "Tensor", ArgKind::Tensor, {t}, nullptr};
}

ArgSpec noneArg(const std::string& name)
{
    return ArgSpec{name, "Tensor?", ArgKind::None, {}, nullptr};
}

// aten::layer_norm / aten::rms_norm over the last dim, with or without weight (and bias).
OperatorCard normCard(const std::string& op, const std::string& dtype, std::vector<std::int64_t> sizes, bool affine,
                      bool epsNone = false)
{
    OperatorCard card;
    card.op = op;
    const TensorSpec t = cudaTensor(dtype, sizes);
    const std::int64_t n = sizes.back();
    card.args.push_back(tensorArg("input", t));
    card.args.push_back(ArgSpec{"normalized_shape", "int[]", ArgKind::Value, {}, json::array({n})});
    card.args.push_back(affine ? tensorArg("weight", cudaTensor(dtype, {n})) : noneArg("weight"));
    if (op == "aten::layer_norm") {
        card.args.push_back(affine ? tensorArg("bias", cudaTensor("float32", {n})) : noneArg("bias"));
        card.args.push_back(ArgSpec{"eps", "float", ArgKind::Value, {}, 1e-5});
        card.args.push_back(ArgSpec{"cudnn_enable", "bool", ArgKind::Value, {}, true});
    } else {
        card.args.push_back(epsNone ? ArgSpec{"eps", "float?", ArgKind::None, {}, nullptr}
                                    : ArgSpec{"eps", "float?", ArgKind::Value, {}, 1e-6});
    }
    card.outputs = {t};
    card.id = "card-" + op + "-" + dtype;
    return card;
}

OperatorCard groupNormCard(const std::string& dtype, std::vector<std::int64_t> sizes, std::int64_t groups, bool affine)
{
    OperatorCard card;
    card.op = "aten::group_norm";
    const TensorSpec t = cudaTensor(dtype, sizes);
    card.args.push_back(tensorArg("input", t));
    card.args.push_back(ArgSpec{"num_groups", "int", ArgKind::Value, {}, groups});
    card.args.push_back(affine ? tensorArg("weight", cudaTensor(dtype, {sizes[1]})) : noneArg("weight"));
    card.args.push_back(affine ? tensorArg("bias", cudaTensor(dtype, {sizes[1]})) : noneArg("bias"));
    card.args.push_back(ArgSpec{"eps", "float", ArgKind::Value, {}, 1e-5});
    card.args.push_back(ArgSpec{"cudnn_enabled", "bool", ArgKind::Value, {}, true});
    card.outputs = {t};
    card.id = "card-group_norm-" + dtype;
    return card;
}

// mean.dim / sum.dim_IntList over `dims` (keepdim) or adaptive_avg_pool2d to [1, 1].
OperatorCard reduceCard(const std::string& op, const std::string& overload, const std::string& dtype,
                        std::vector<std::int64_t> sizes, json dims = json::array({-1}), bool keepdim = true)
{
    OperatorCard card;
    card.op = op;
    card.overload = overload;
    const TensorSpec t = cudaTensor(dtype, sizes);
    card.args.push_back(tensorArg("self", t));
    std::vector<std::int64_t> outSizes = sizes;
    if (op == "aten::adaptive_avg_pool2d") {
        card.args.push_back(ArgSpec{"output_size", "SymInt[2]", ArgKind::Value, {}, json::array({1, 1})});
        outSizes[outSizes.size() - 1] = 1;
        outSizes[outSizes.size() - 2] = 1;
    } else {
        card.args.push_back(ArgSpec{"dim", "int[1]?", ArgKind::Value, {}, dims});
        card.args.push_back(ArgSpec{"keepdim", "bool", ArgKind::Value, {}, keepdim});
        card.args.push_back(ArgSpec{"dtype", "ScalarType?", ArgKind::None, {}, nullptr});
        const auto rank = static_cast<std::int64_t>(sizes.size());
        std::vector<std::int64_t> kept;
        for (std::int64_t d = 0; d < rank; ++d) {
            bool r = dims.empty(); // dim=[]: every dim
            for (const auto& x : dims)
                r = r || (x.get<std::int64_t>() + rank) % rank == d;
            if (!r)
                kept.push_back(sizes[d]);
            else if (keepdim)
                kept.push_back(1);
        }
        outSizes = kept;
    }
    card.outputs = {cudaTensor(dtype, outSizes)};
    card.id = "card-" + op + "-" + dtype;
    return card;
}

} // namespace

TEST(BuiltinProposer, LayerAndRmsNormCompileForEveryDtypeAndRowLength)
{
    for (const std::string op : {"aten::layer_norm", "aten::rms_norm"})
        for (const std::string& dtype : kDtypes)
            for (std::int64_t n : {1, 7, 197, 1000, 4097}) {
                SCOPED_TRACE(op + " " + dtype + " n=" + std::to_string(n));
                const SearchTree tree = growChain(normCard(op, dtype, {5, n}, n != 7), 3, true);
                EXPECT_EQ(tree.size(), 4u);
            }
    // eps=None for rms_norm: torch's fp32 computation eps (FLT_EPSILON) is baked in.
    std::atomic<bool> stop{false};
    auto root = BuiltinProposer(normCard("aten::rms_norm", "bfloat16", {3, 64}, true, true))
                    .proposeRoot(SearchTree("c", 1), stop);
    ASSERT_TRUE(root.ok());
    EXPECT_NE(root->candidate.source.find("1.1920928955078125e-07"), std::string::npos);
}

TEST(BuiltinProposer, LayerNormWalkVisitsWelfordTwoPassWarpAndBlock)
{
    const SearchTree tree = growChain(normCard("aten::layer_norm", "float16", {64, 1024}, true), 16, true, 5);
    std::set<std::string> kinds;
    for (const SearchNode& node : tree.nodes()) {
        const json& p = node.provenance.details["params"];
        kinds.insert(p["warp_per_row"] ? "warp" : "block");
        kinds.insert(p["welford"] ? "welford" : "two-pass");
    }
    EXPECT_EQ(kinds.size(), 4u);
}

TEST(BuiltinProposer, GroupNormCompilesSingleAndSplitPlans)
{
    for (const std::string& dtype : kDtypes)
        for (const auto& [sizes, groups] : std::vector<std::pair<std::vector<std::int64_t>, std::int64_t>>{
                 {{2, 6, 1, 1}, 3}, {{3, 14, 7}, 2}, {{2, 8, 197}, 4}, {{1, 32, 10, 100}, 8}, {{2, 64, 4097}, 32}}) {
            SCOPED_TRACE(dtype + " C=" + std::to_string(sizes[1]) + " G=" + std::to_string(groups));
            const SearchTree tree = growChain(groupNormCard(dtype, sizes, groups, sizes[1] != 14), 3, true);
            EXPECT_GE(tree.size(), sizes[2] <= 7 ? 2u : 4u); // tiny groups: only threads to vary
        }
    // The benchmark shape splits each of the 64 groups across blocks: two launches and a scratch buffer.
    const OperatorCard card = groupNormCard("float16", {2, 512, 64, 64}, 32, true);
    const SearchTree tree = growChain(card, 2, true);
    const json& root = tree.root()->candidate.launchPlan;
    EXPECT_GT(tree.root()->provenance.details["params"]["split"].get<int>(), 1);
    EXPECT_EQ(root["launches"].size(), 2u);
    EXPECT_EQ(root["scratch"][0]["name"], "partials");
}

TEST(BuiltinProposer, GroupNormCoversChannelsLastInputs)
{
    // SD 3.5's VAE: a residual add leaves NHWC memory that the next ResnetBlock's group_norm reads.
    // Eager's CUDA group_norm answers with an NCHW output; a channels-last output is covered too.
    for (const std::string& dtype : kDtypes)
        for (const auto& [sizes, groups] : std::vector<std::pair<std::vector<std::int64_t>, std::int64_t>>{
                 {{2, 512, 64, 64}, 32}, {{3, 12, 5, 7}, 4}, {{1, 6, 2, 3}, 3}})
            for (const bool outChannelsLast : {false, true}) {
                SCOPED_TRACE(dtype + " " + cudaTensor(dtype, sizes).toShortString() +
                             (outChannelsLast ? " -> NHWC" : " -> NCHW"));
                OperatorCard card = groupNormCard(dtype, sizes, groups, true);
                const std::int64_t c = sizes[1], h = sizes[2], w = sizes[3];
                const std::vector<std::int64_t> nhwc{h * w * c, 1, w * c, c};
                card.args[0].tensors[0].strides = nhwc;
                if (outChannelsLast)
                    card.outputs[0].strides = nhwc;
                ASSERT_TRUE(BuiltinProposer::supports(card).ok()) << BuiltinProposer::supports(card).error().message;
                const SearchTree tree = growChain(card, 3, true);
                EXPECT_GE(tree.size(), c / groups >= 8 ? 3u : 2u); // tiny groups: only threads to vary
                for (const SearchNode& node : tree.nodes()) {
                    EXPECT_NE(node.candidate.source.find(outChannelsLast ? "(channels-last)"
                                                                         : "(channels-last input, NCHW output)"),
                              std::string::npos);
                    // A vector holds consecutive channels of one group: its width divides C / G.
                    EXPECT_EQ(c / groups % node.provenance.details["params"]["vector_width"].get<int>(), 0);
                }
            }
    // The SD shape splits its 64 groups across blocks, as the NCHW one does.
    OperatorCard sd = groupNormCard("float16", {2, 512, 64, 64}, 32, true);
    sd.args[0].tensors[0].strides = {64 * 64 * 512, 1, 64 * 512, 512};
    EXPECT_GT(growChain(sd, 1, true).root()->provenance.details["params"]["split"].get<int>(), 1);
    // Other layouts, which the family refuses, go to the row-region generator (a row per group, read at
    // the input's strides).
    OperatorCard transposed = groupNormCard("float32", {2, 8, 4, 4}, 2, true);
    transposed.args[0].tensors[0].strides = {128, 1, 8, 32};
    ASSERT_TRUE(BuiltinProposer::supports(transposed).ok());
    EXPECT_EQ(growChain(transposed, 1, true).root()->provenance.details["family"], "row_region");
    OperatorCard nchwToNhwc = groupNormCard("float32", {2, 8, 4, 4}, 2, true);
    nchwToNhwc.outputs[0].strides = {128, 1, 32, 8};
    ASSERT_TRUE(BuiltinProposer::supports(nchwToNhwc).ok());
    EXPECT_EQ(growChain(nchwToNhwc, 1, true).root()->provenance.details["family"], "row_region");
}

TEST(BuiltinProposer, ReductionsCompileForEveryDtypeAndRowLength)
{
    for (const std::string& dtype : kDtypes) {
        for (std::int64_t n : {1, 7, 197, 1000, 4097}) {
            SCOPED_TRACE(dtype + " n=" + std::to_string(n));
            EXPECT_EQ(growChain(reduceCard("aten::mean", "dim", dtype, {6, n}), 2, true).size(), 3u);
            EXPECT_EQ(growChain(reduceCard("aten::sum", "dim_IntList", dtype, {3, 2, n}, json::array({-1, 1}), false),
                                2, true)
                          .size(),
                      3u);
        }
        EXPECT_EQ(growChain(reduceCard("aten::adaptive_avg_pool2d", "", dtype, {4, 32, 7, 7}), 3, true).size(), 4u);
        EXPECT_EQ(growChain(reduceCard("aten::sum", "dim_IntList", dtype, {5, 9}, json::array()), 1, true).size(), 2u);
    }
}

TEST(BuiltinProposer, PoolingOfChannelsLastInputsCompiles)
{
    // ResNet-50 channels-last fp16's head: adaptive_avg_pool2d of NHWC [32, 2048, 7, 7]; also mean
    // and sum over H and W. The spatial positions of a channel are C apart: its own family.
    auto channelsLast = [](OperatorCard card) {
        TensorSpec& in = card.args[0].tensors[0];
        const std::int64_t c = in.sizes[1], h = in.sizes[2], w = in.sizes[3];
        in.strides = {h * w * c, 1, w * c, c};
        return card;
    };
    for (const std::string& dtype : kDtypes)
        for (const std::vector<std::int64_t>& sizes :
             std::vector<std::vector<std::int64_t>>{{32, 2048, 7, 7}, {2, 12, 5, 3}, {3, 5, 1, 9}, {2, 4, 2, 7}}) {
            // [2, 4, 2, 7]: one channel vector and 14 positions, fewer than a warp's threads.
            SCOPED_TRACE(dtype + " " + cudaTensor(dtype, sizes).toShortString());
            for (const OperatorCard& card :
                 {channelsLast(reduceCard("aten::adaptive_avg_pool2d", "", dtype, sizes)),
                  channelsLast(reduceCard("aten::mean", "dim", dtype, sizes, json::array({-1, -2}))),
                  channelsLast(reduceCard("aten::sum", "dim_IntList", dtype, sizes, json::array({2, 3}), false))}) {
                SCOPED_TRACE(card.op);
                const SearchTree tree = growChain(card, 3, true);
                EXPECT_GE(tree.size(), 3u);
                for (const SearchNode& node : tree.nodes()) {
                    EXPECT_EQ(node.provenance.details["family"], "channels_last_pool");
                    EXPECT_EQ(sizes[1] % node.provenance.details["params"]["vector_width"].get<int>(), 0);
                }
            }
        }
    // The ResNet head's root: 8 fp16 channels per load, 32 channel vectors and 8 positions per block.
    const SearchTree head =
        growChain(channelsLast(reduceCard("aten::adaptive_avg_pool2d", "", "float16", {32, 2048, 7, 7})), 1, true);
    EXPECT_EQ(head.root()->provenance.details["params"],
              json({{"vector_width", 8}, {"channel_vectors", 32}, {"hw_split", 8}}));
    EXPECT_EQ(head.root()->candidate.launchPlan["launches"][0]["grid"], json::array({256})); // 32 images x 8 tiles

    // Over the channels of a channels-last tensor: not a pooling, the row-region generator's (the
    // channels are each position's contiguous row).
    const OperatorCard overChannels =
        channelsLast(reduceCard("aten::mean", "dim", "float32", {2, 8, 4, 4}, json::array({1})));
    ASSERT_TRUE(BuiltinProposer::supports(overChannels).ok());
    EXPECT_EQ(growChain(overChannels, 1, true).root()->provenance.details["family"], "row_region");
}

namespace {

// aten::max_pool2d; `channelsLast` gives input and output NHWC strides, as eager does.
OperatorCard maxPoolCard(const std::string& dtype, std::vector<std::int64_t> sizes, std::vector<std::int64_t> outSizes,
                         json kernel, json stride, json padding, json dilation, bool ceil, bool channelsLast)
{
    auto nhwc = [](const std::vector<std::int64_t>& s) {
        return std::vector<std::int64_t>{s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]};
    };
    OperatorCard card;
    card.op = "aten::max_pool2d";
    TensorSpec in = cudaTensor(dtype, sizes);
    TensorSpec out = cudaTensor(dtype, outSizes);
    if (channelsLast) {
        in.strides = nhwc(sizes);
        out.strides = nhwc(outSizes);
    }
    card.args.push_back(tensorArg("self", in));
    card.args.push_back(ArgSpec{"kernel_size", "int[2]", ArgKind::Value, {}, kernel});
    card.args.push_back(ArgSpec{"stride", "int[2]", ArgKind::Value, {}, stride});
    card.args.push_back(ArgSpec{"padding", "int[2]", ArgKind::Value, {}, padding});
    card.args.push_back(ArgSpec{"dilation", "int[2]", ArgKind::Value, {}, dilation});
    card.args.push_back(ArgSpec{"ceil_mode", "bool", ArgKind::Value, {}, ceil});
    card.outputs = {out};
    card.id = "card-max_pool2d-" + dtype;
    return card;
}

} // namespace

TEST(BuiltinProposer, MaxPool2dCompilesForNchwAndChannelsLast)
{
    // Output sizes as torch 2.11's F.max_pool2d gives them (also for ceil_mode and dilation).
    struct Case {
        std::vector<std::int64_t> in, out;
        json kernel, stride, padding, dilation;
        bool ceil;
    };
    const std::vector<Case> cases = {
        {{32, 64, 112, 112}, {32, 64, 56, 56}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false}, // ResNet-50's stem
        {{2, 3, 7, 9}, {2, 3, 4, 5}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true},
        {{1, 5, 5, 5}, {1, 5, 3, 3}, {3, 3}, {1, 1}, {1, 1}, {2, 2}, false},
        {{2, 8, 6, 6}, {2, 8, 4, 4}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true},
        {{1, 16, 9, 9}, {1, 16, 5, 8}, {3, 2}, {2, 1}, {1, 0}, {1, 1}, false},
        {{2, 4, 8, 8}, {2, 4, 4, 4}, {2, 2}, json::array(), {0, 0}, {1, 1}, false}, // stride=[]: the kernel size
    };
    for (const std::string& dtype : kDtypes)
        for (const Case& c : cases)
            for (const bool channelsLast : {false, true}) {
                const OperatorCard card =
                    maxPoolCard(dtype, c.in, c.out, c.kernel, c.stride, c.padding, c.dilation, c.ceil, channelsLast);
                SCOPED_TRACE(card.args[0].tensors[0].toShortString() + " -> " + card.outputs[0].toShortString());
                ASSERT_TRUE(BuiltinProposer::supports(card).ok()) << BuiltinProposer::supports(card).error().message;
                const SearchTree tree = growChain(card, 3, true);
                EXPECT_GE(tree.size(), 3u);
                for (const SearchNode& node : tree.nodes()) {
                    const json& params = node.provenance.details["params"];
                    EXPECT_EQ(node.provenance.details["family"], "max_pool2d");
                    // Channels-last: vectors of channels; NCHW: runs of a row, one value at a time.
                    EXPECT_EQ(c.in[1] % params["vector_width"].get<int>(), 0);
                    EXPECT_EQ(
                        channelsLast ? params["outputs_per_thread"].get<int>() : params["vector_width"].get<int>(), 1);
                    // Values only: the plan passes the input and the one output, no indices buffer.
                    EXPECT_EQ(node.candidate.launchPlan["launches"][0]["args"], json({"ptr:self", "ptr:out0"}));
                }
            }
    auto refusal = [](const OperatorCard& card) {
        auto supported = BuiltinProposer::supports(card);
        return supported.ok() ? std::string() : supported.error().message;
    };
    // An output that is not the pooled size, padding over half the window, a layout change.
    EXPECT_NE(refusal(maxPoolCard("float32", {2, 4, 8, 8}, {2, 4, 3, 3}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, false))
                  .find("not the pooled size"),
              std::string::npos);
    EXPECT_NE(refusal(maxPoolCard("float32", {2, 4, 8, 8}, {2, 4, 5, 5}, {2, 2}, {2, 2}, {2, 2}, {1, 1}, false, false))
                  .find("out of the covered range"),
              std::string::npos);
    OperatorCard toNchw =
        maxPoolCard("float16", {2, 4, 8, 8}, {2, 4, 4, 4}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, true);
    toNchw.outputs[0].strides = contiguousStrides({2, 4, 4, 4});
    EXPECT_NE(refusal(toNchw).find("differs from the input's"), std::string::npos);
}

TEST(BuiltinProposer, NewFamiliesAreDeterministicAndNeverRepeat)
{
    for (const OperatorCard& card :
         {normCard("aten::layer_norm", "bfloat16", {64, 2048}, true), groupNormCard("float32", {2, 32, 64}, 8, true),
          reduceCard("aten::mean", "dim", "float16", {16, 4096})}) {
        SCOPED_TRACE(card.op);
        const SearchTree a = growChain(card, 10, false, 9);
        const SearchTree b = growChain(card, 10, false, 9);
        ASSERT_EQ(a.size(), b.size());
        std::set<std::string> params;
        for (std::size_t i = 0; i < a.size(); ++i) {
            EXPECT_EQ(a.nodes()[i].candidate, b.nodes()[i].candidate);
            EXPECT_EQ(a.nodes()[i].provenance, b.nodes()[i].provenance);
            EXPECT_TRUE(params.insert(a.nodes()[i].provenance.details["params"].dump()).second);
        }
        EXPECT_GE(a.size(), 4u);
    }
}

TEST(BuiltinProposer, NewFamiliesRefuseWithTheReason)
{
    auto reasonOf = [](const OperatorCard& card) {
        std::atomic<bool> stop{false};
        auto root = BuiltinProposer(card).proposeRoot(SearchTree(card.id, 1), stop);
        EXPECT_FALSE(root.ok());
        if (root.ok())
            return std::string();
        EXPECT_EQ(root.error().code, ErrorCode::Unsupported);
        return root.error().toString();
    };
    OperatorCard badShape = normCard("aten::layer_norm", "float32", {4, 64}, false);
    badShape.args[1].value = json::array({32});
    EXPECT_NE(reasonOf(badShape).find("trailing sizes"), std::string::npos);
    EXPECT_NE(reasonOf(groupNormCard("float16", {2, 10, 8}, 4, true)).find("does not divide"), std::string::npos);
    OperatorCard pool = reduceCard("aten::adaptive_avg_pool2d", "", "float32", {2, 8, 7, 7});
    pool.args[1].value = json::array({2, 2});
    EXPECT_NE(reasonOf(pool).find("only [1, 1]"), std::string::npos);
    for (const std::string op : {"aten::add", "aten::pow", "aten::index_select"})
        EXPECT_NE(reasonOf(unaryCard(op, "float32", 64)).find("not covered by the built-in proposer yet"),
                  std::string::npos);
    // A view op is not "not covered yet": there is nothing to cover.
    for (const std::string op : {"aten::transpose", "aten::slice", "aten::unsqueeze", "aten::expand", "aten::view"})
        EXPECT_NE(reasonOf(unaryCard(op, "float32", 64)).find("returns a view of its input (no kernel to run)"),
                  std::string::npos)
            << op;
    EXPECT_NE(reasonOf(unaryCard("aten::flatten", "float32", 64)).find("not covered"), std::string::npos);
    OperatorCard dropout = unaryCard("aten::dropout", "float32", 64);
    dropout.args.push_back(ArgSpec{"p", "float", ArgKind::Value, {}, 0.1});
    dropout.args.push_back(ArgSpec{"train", "bool", ArgKind::Value, {}, false});
    EXPECT_NE(reasonOf(dropout).find("not training: returns its input"), std::string::npos);
    dropout.args.back().value = true;
    EXPECT_NE(reasonOf(dropout).find("not covered"), std::string::npos);
}

namespace {

// aten::batch_norm in eval mode: weight/bias of the input's dtype (or None), float32 running stats.
OperatorCard batchNormCard(const std::string& dtype, std::vector<std::int64_t> sizes, bool affine,
                           bool training = false)
{
    OperatorCard card;
    card.op = "aten::batch_norm";
    const TensorSpec t = cudaTensor(dtype, sizes);
    const std::int64_t c = sizes[1];
    card.args.push_back(tensorArg("input", t));
    card.args.push_back(affine ? tensorArg("weight", cudaTensor(dtype, {c})) : noneArg("weight"));
    card.args.push_back(affine ? tensorArg("bias", cudaTensor(dtype, {c})) : noneArg("bias"));
    card.args.push_back(tensorArg("running_mean", cudaTensor("float32", {c})));
    card.args.push_back(tensorArg("running_var", cudaTensor("float32", {c})));
    card.args.push_back(ArgSpec{"training", "bool", ArgKind::Value, {}, training});
    card.args.push_back(ArgSpec{"momentum", "float", ArgKind::Value, {}, 0.1});
    card.args.push_back(ArgSpec{"eps", "float", ArgKind::Value, {}, 1e-5});
    card.args.push_back(ArgSpec{"cudnn_enabled", "bool", ArgKind::Value, {}, true});
    card.outputs = {t};
    card.id = "card-batch_norm-" + dtype;
    return card;
}

std::vector<std::int64_t> broadcastSizes(std::vector<std::int64_t> a, std::vector<std::int64_t> b)
{
    if (a.size() < b.size())
        std::swap(a, b);
    b.insert(b.begin(), a.size() - b.size(), 1);
    for (std::size_t d = 0; d < a.size(); ++d)
        a[d] = std::max(a[d], b[d]);
    return a;
}

// aten::add/sub/mul/div .Tensor on two CUDA operands of one dtype; contiguous unless strides given.
OperatorCard binaryCard(const std::string& op, const std::string& dtype, const TensorSpec& a, const TensorSpec& b,
                        json alpha = 1, const std::string& overload = "Tensor")
{
    OperatorCard card;
    card.op = op;
    card.overload = overload;
    card.args.push_back(tensorArg("self", a));
    card.args.push_back(tensorArg("other", b));
    if (op == "aten::add" || op == "aten::sub" || op == "aten::add_" || op == "aten::sub_")
        card.args.push_back(ArgSpec{"alpha", "Scalar", ArgKind::Value, {}, alpha});
    if (overload == "Tensor_mode")
        card.args.push_back(ArgSpec{"rounding_mode", "str?", ArgKind::None, {}, nullptr});
    card.outputs = {cudaTensor(dtype, broadcastSizes(a.sizes, b.sizes))};
    card.id = "card-" + op + "-" + dtype;
    return card;
}

OperatorCard embeddingCard(const std::string& dtype, const std::string& indexDtype, std::int64_t vocab,
                           std::int64_t dim, std::vector<std::int64_t> indexSizes)
{
    OperatorCard card;
    card.op = "aten::embedding";
    card.args.push_back(tensorArg("weight", cudaTensor(dtype, {vocab, dim})));
    card.args.push_back(tensorArg("indices", cudaTensor(indexDtype, indexSizes)));
    card.args.push_back(ArgSpec{"padding_idx", "SymInt", ArgKind::Value, {}, -1});
    card.args.push_back(ArgSpec{"scale_grad_by_freq", "bool", ArgKind::Value, {}, false});
    card.args.push_back(ArgSpec{"sparse", "bool", ArgKind::Value, {}, false});
    std::vector<std::int64_t> out = indexSizes;
    out.push_back(dim);
    card.outputs = {cudaTensor(dtype, out)};
    card.id = "card-embedding-" + dtype + "-" + indexDtype;
    return card;
}

std::string refusal(const OperatorCard& card)
{
    EXPECT_FALSE(BuiltinProposer::supports(card).ok());
    std::atomic<bool> stop{false};
    auto root = BuiltinProposer(card).proposeRoot(SearchTree(card.id, 1), stop);
    EXPECT_FALSE(root.ok());
    if (root.ok())
        return std::string();
    EXPECT_EQ(root.error().code, ErrorCode::Unsupported);
    return root.error().toString();
}

} // namespace

TEST(BuiltinProposer, BatchNormInferenceCompilesForEveryDtypeAndShape)
{
    for (const std::string& dtype : kDtypes)
        for (const std::vector<std::int64_t>& sizes : std::vector<std::vector<std::int64_t>>{
                 {5, 7}, {2, 7, 1, 1}, {1, 3, 197}, {4, 16, 10, 100}, {2, 4, 4097}}) {
            SCOPED_TRACE(dtype + " " + cudaTensor(dtype, sizes).toShortString());
            EXPECT_EQ(growChain(batchNormCard(dtype, sizes, sizes[1] != 3), 2, true).size(), 3u);
        }
}

TEST(BuiltinProposer, BatchNormWalkVisitsPrecomputedAndInlineScaleShift)
{
    const OperatorCard card = batchNormCard("float16", {8, 64, 14, 14}, true);
    const SearchTree tree = growChain(card, 12, true, 5);
    std::set<bool> variants;
    for (const SearchNode& node : tree.nodes()) {
        const bool pre = node.provenance.details["params"]["precompute"].get<bool>();
        variants.insert(pre);
        const json& plan = node.candidate.launchPlan;
        EXPECT_EQ(plan["launches"].size(), pre ? 2u : 1u);
        if (pre) {
            EXPECT_EQ(plan["launches"][0]["kernel"], "kf_batch_norm_params");
            EXPECT_EQ(plan["scratch"][0]["name"], "params");
            EXPECT_EQ(plan["scratch"][0]["bytes"], 64 * 3 * 4);
        }
    }
    EXPECT_EQ(variants.size(), 2u);
}

TEST(BuiltinProposer, BatchNormCoversChannelsLastInputs)
{
    // ResNet-50 in channels-last fp16: NHWC memory, the channel is the fastest index.
    for (const std::string& dtype : kDtypes)
        for (const std::vector<std::int64_t>& sizes :
             std::vector<std::vector<std::int64_t>>{{32, 64, 56, 56}, {2, 12, 7, 7}, {3, 5, 1, 9}}) {
            SCOPED_TRACE(dtype + " " + cudaTensor(dtype, sizes).toShortString());
            OperatorCard card = batchNormCard(dtype, sizes, true);
            const std::int64_t c = sizes[1], h = sizes[2], w = sizes[3];
            const std::vector<std::int64_t> nhwc{h * w * c, 1, w * c, c};
            card.args[0].tensors[0].strides = nhwc;
            card.outputs[0].strides = nhwc;
            ASSERT_TRUE(BuiltinProposer::supports(card).ok()) << BuiltinProposer::supports(card).error().message;
            const SearchTree tree = growChain(card, 3, true);
            EXPECT_EQ(tree.size(), 4u);
            for (const SearchNode& node : tree.nodes()) {
                EXPECT_NE(node.candidate.source.find("(channels-last)"), std::string::npos);
                // A vector holds consecutive channels: its width divides C.
                EXPECT_EQ(c % node.provenance.details["params"]["vector_width"].get<int>(), 0);
            }
        }
    // Any other layout, or an output in another layout than the input's, is refused.
    OperatorCard transposed = batchNormCard("float32", {2, 8, 4, 4}, true);
    transposed.args[0].tensors[0].strides = {128, 1, 8, 32};
    EXPECT_FALSE(BuiltinProposer::supports(transposed).ok());
    OperatorCard mixed = batchNormCard("float32", {2, 8, 4, 4}, true);
    mixed.args[0].tensors[0].strides = {128, 1, 32, 8};
    EXPECT_FALSE(BuiltinProposer::supports(mixed).ok()); // output stays NCHW contiguous
}

TEST(BuiltinProposer, ChannelsLastBatchNormStartsChannelResidentWhereARowFitsABlock)
{
    auto nhwcCard = [](const std::string& dtype, std::vector<std::int64_t> sizes) {
        OperatorCard card = batchNormCard(dtype, sizes, true);
        const std::int64_t c = sizes[1], h = sizes[2], w = sizes[3];
        card.args[0].tensors[0].strides = card.outputs[0].strides = {h * w * c, 1, w * c, c};
        return card;
    };
    // ResNet-50 fp16 [32, 2048, 7, 7]: 256 vectors of 8 channels per row; one launch, no scratch,
    // each thread's channels computed once; the walk also visits the precomputed form.
    const SearchTree tree = growChain(nhwcCard("float16", {32, 2048, 7, 7}), 12, true, 5);
    const SearchNode& root = *tree.root();
    EXPECT_FALSE(root.provenance.details["params"]["precompute"].get<bool>());
    EXPECT_EQ(root.provenance.details["params"]["threads"], 256);
    EXPECT_EQ(root.candidate.launchPlan["launches"].size(), 1u);
    EXPECT_FALSE(root.candidate.launchPlan.contains("scratch"));
    EXPECT_NE(root.candidate.source.find("ROW_VECTORS = C / V"), std::string::npos);
    std::set<bool> variants;
    for (const SearchNode& node : tree.nodes())
        variants.insert(node.provenance.details["params"]["precompute"].get<bool>());
    EXPECT_EQ(variants.size(), 2u);

    // fp32 [32, 2048, 7, 7]: 512 vectors of 4 per row: the root grows its block to 512 threads.
    const SearchTree wide = growChain(nhwcCard("float32", {32, 2048, 7, 7}), 0, true);
    EXPECT_EQ(wide.root()->provenance.details["params"]["threads"], 512);

    // C = 12 (3 vectors of 4 per row) divides no power-of-two block: precomputed, and no neighbour
    // turns it inline.
    const SearchTree odd = growChain(nhwcCard("float32", {2, 12, 7, 7}), 12, true, 5);
    for (const SearchNode& node : odd.nodes())
        EXPECT_TRUE(node.provenance.details["params"]["precompute"].get<bool>()) << node.provenance.transformation;
}

TEST(BuiltinProposer, ChannelsLastBinaryOpsRunOverStorageOrderWhenEveryOperandIsLaidOutAlike)
{
    // ResNet-50 fp16 channels-last's residual add_: self, other and the output all NHWC.
    const std::int64_t n = 2, c = 64, h = 7, w = 7;
    for (const std::string& dtype : kDtypes) {
        SCOPED_TRACE(dtype);
        const TensorSpec t = channelsLastTensor(dtype, n, c, h, w);
        OperatorCard add = binaryCard("aten::add_", dtype, t, t);
        add.outputs = {t};
        const SearchTree tree = growChain(add, 3, true);
        ASSERT_GE(tree.size(), 2u);
        EXPECT_NE(tree.root()->candidate.source.find("channels-last, both operands laid out alike"), std::string::npos);
        // A 0-dim scalar operand takes no part in the layout.
        OperatorCard scaled = binaryCard("aten::mul", dtype, t, TensorSpec{"float64", {}, {}, "cuda:0"});
        scaled.outputs = {t};
        EXPECT_EQ(growChain(scaled, 1, true).size(), 2u);
    }
    // A broadcast operand (bias [C]) into a channels-last output: over the output's storage order,
    // the bias read along its innermost (channel) dim with stride 1, so nothing to tile.
    const TensorSpec out = channelsLastTensor("float16", n, c, h, w);
    OperatorCard bias = binaryCard("aten::add", "float16", out, cudaTensor("float16", {c, 1, 1}));
    bias.outputs = {out};
    const SearchTree biasTree = growChain(bias, 2, true);
    ASSERT_GE(biasTree.size(), 2u);
    EXPECT_NE(biasTree.root()->candidate.source.find("over the output's storage order"), std::string::npos);
    EXPECT_NE(biasTree.root()->candidate.source.find("[98: 64, 0] [64: 1, 1]"), std::string::npos)
        << biasTree.root()->candidate.source;
    EXPECT_FALSE(biasTree.root()->provenance.details["params"].contains("transpose_tile"));
}

TEST(BuiltinProposer, BinaryStagesATransposedOperandThroughSharedMemoryTiles)
{
    // SD's VAE attention residual: a channels-last [2, 512, 64, 64] output (self, from the attention
    // output's transpose) plus the NCHW residual. In the output's storage order [2, 4096, 512] the
    // residual steps by 1 along HW and by 4096 along C.
    const std::int64_t n = 2, c = 512, h = 64, w = 64;
    for (const std::string& dtype : kDtypes) {
        SCOPED_TRACE(dtype);
        const TensorSpec out = channelsLastTensor(dtype, n, c, h, w);
        OperatorCard residual = binaryCard("aten::add", dtype, out, cudaTensor(dtype, {n, c, h, w}));
        residual.outputs = {out};
        const SearchTree tree = growChain(residual, 4, true);
        ASSERT_GE(tree.size(), 3u);
        const SearchNode& root = *tree.root();
        const std::string& source = root.candidate.source;
        EXPECT_TRUE(root.provenance.details["params"]["transpose_tile"].get<bool>());
        EXPECT_NE(source.find("tiles of merged dims 1 (J) and 2 (I"), std::string::npos) << source;
        EXPECT_NE(source.find("'other' (unit stride along J) staged in shared memory"), std::string::npos);
        EXPECT_EQ(source.find("'self' (unit stride along J)"), std::string::npos);
        EXPECT_NE(source.find("[2: 2097152, 2097152, 2097152] [4096: 512, 1, 512] [512: 1, 4096, 1]"),
                  std::string::npos)
            << source;
        // 16 tiles along C, 128 along HW, 2 images: one block each.
        EXPECT_NE(source.find("BLOCKS = 4096LL"), std::string::npos);
        EXPECT_EQ(root.candidate.launchPlan["launches"][0]["grid"][0], 4096);
        // Tiled, a vector width or items step is not offered; untiling is, and gives the strided path.
        bool untile = false;
        auto family = BinaryFamily::create(residual);
        ASSERT_TRUE(family.ok());
        nlohmann::json params = family.value()->rootParams();
        for (const Transformation& t : family.value()->transformations(params)) {
            EXPECT_EQ(t.name.find("vector-width"), std::string::npos) << t.name;
            EXPECT_EQ(t.name.find("items-per-thread"), std::string::npos) << t.name;
            if (t.name == "untile-transpose") {
                untile = true;
                auto strided = family.value()->generate(t.params);
                ASSERT_TRUE(strided.ok());
                EXPECT_NE(strided->source.find("over the output's storage order"), std::string::npos);
                expectGoodCandidate(residual, strided.value(), "untiled");
            }
        }
        EXPECT_TRUE(untile);
        params["vector_width"] = 2;
        EXPECT_FALSE(family.value()->generate(params).ok());
    }
    // A contiguous output of a transposed self and a channels-last other (both tiled), and in place:
    // add_ into a contiguous self of a channels-last other (only other tiled; no __restrict__).
    const TensorSpec cl = channelsLastTensor("float32", 2, 8, 3, 5);
    TensorSpec transposed = cudaTensor("float32", {2, 8, 3, 5});
    transposed.strides = {120, 1, 40, 8};
    OperatorCard both = binaryCard("aten::mul", "float32", transposed, cl);
    const SearchTree bothTree = growChain(both, 2, true);
    ASSERT_GE(bothTree.size(), 2u);
    EXPECT_NE(bothTree.root()->candidate.source.find("'self' (unit stride along J) staged"), std::string::npos);
    EXPECT_NE(bothTree.root()->candidate.source.find("'other' (unit stride along J) staged"), std::string::npos);
    // A transposed self times a 0-dim float64 operand: self tiled, the number read once per thread.
    TensorSpec column = cudaTensor("bfloat16", {1000, 3});
    column.strides = {1, 1000};
    OperatorCard scaled = binaryCard("aten::mul", "bfloat16", column, TensorSpec{"float64", {}, {}, "cuda:0"});
    const SearchTree scaledTree = growChain(scaled, 2, true);
    ASSERT_GE(scaledTree.size(), 2u);
    const std::string& scaledSource = scaledTree.root()->candidate.source;
    EXPECT_NE(scaledSource.find("'self' (unit stride along J) staged"), std::string::npos) << scaledSource;
    EXPECT_NE(scaledSource.find("kfOp(tile0[tx][r], sv)"), std::string::npos) << scaledSource;
    OperatorCard inPlace = binaryCard("aten::add_", "float32", cudaTensor("float32", {2, 8, 3, 5}), cl);
    const SearchTree inPlaceTree = growChain(inPlace, 2, true);
    ASSERT_GE(inPlaceTree.size(), 2u);
    const std::string& inPlaceSource = inPlaceTree.root()->candidate.source;
    EXPECT_NE(inPlaceSource.find("'other' (unit stride along J) staged"), std::string::npos) << inPlaceSource;
    EXPECT_EQ(inPlaceSource.find("__restrict__"), std::string::npos);
}

TEST(BuiltinProposer, DenseStorageOrderPermutesDimsByStride)
{
    using Order = std::vector<std::size_t>;
    EXPECT_EQ(denseStorageOrder(cudaTensor("float32", {4, 8, 16})), (Order{0, 1, 2}));
    EXPECT_EQ(denseStorageOrder(TensorSpec{"float16", {2, 64, 7, 7}, {3136, 1, 448, 64}, "cuda:0"}),
              (Order{0, 2, 3, 1}));
    // A [4, 512, 8, 256] tensor's transpose(1, 2), as the decoders' queries.
    EXPECT_EQ(denseStorageOrder(TensorSpec{"bfloat16", {4, 8, 512, 256}, {1048576, 256, 2048, 1}, "cuda:0"}),
              (Order{0, 2, 1, 3}));
    // Size-1 dims go last whatever their stride.
    EXPECT_EQ(denseStorageOrder(TensorSpec{"float32", {3, 1, 5}, {5, 99, 1}, "cuda:0"}), (Order{0, 2, 1}));
    // Not dense: a slice (gaps between rows), an expanded dim (stride 0), overlapping strides.
    EXPECT_FALSE(denseStorageOrder(TensorSpec{"bfloat16", {4, 8, 512, 128}, {1048576, 256, 2048, 1}, "cuda:0"}));
    EXPECT_FALSE(denseStorageOrder(TensorSpec{"float32", {4, 8}, {0, 1}, "cuda:0"}));
    EXPECT_FALSE(denseStorageOrder(TensorSpec{"float32", {4, 8}, {4, 1}, "cuda:0"}));
}

TEST(BuiltinProposer, BinaryOpsIntoATransposedOutputRunOverItsStorageOrder)
{
    // The rotary embedding of the suite's decoders: q = proj(x).view(4, 512, 8, 256).transpose(1, 2);
    // eager lays `q * cos` and `q * cos + rotate_half(q) * sin` out as q (dims 0, 2, 1, 3 in storage).
    const std::vector<std::int64_t> sizes{4, 8, 64, 32};
    const std::vector<std::int64_t> transposed{16384, 32, 256, 1};
    for (const std::string& dtype : kDtypes) {
        SCOPED_TRACE(dtype);
        const TensorSpec q{dtype, sizes, transposed, "cuda:0"};
        OperatorCard rotary = binaryCard("aten::mul", dtype, q, cudaTensor(dtype, {1, 1, 64, 32}));
        rotary.outputs = {q};
        const SearchTree tree = growChain(rotary, 3, true);
        ASSERT_GE(tree.size(), 2u);
        const std::string& source = tree.root()->candidate.source;
        EXPECT_NE(source.find("over the output's storage order"), std::string::npos);
        // Storage order [4, 64, 8, 32]: q steps as the output; cos broadcasts over batch and heads.
        EXPECT_NE(source.find("[4: 16384, 0] [64: 256, 32] [8: 32, 0] [32: 1, 1]"), std::string::npos) << source;
        OperatorCard sum = binaryCard("aten::add", dtype, q, cudaTensor(dtype, sizes));
        sum.outputs = {q};
        EXPECT_GE(growChain(sum, 2, true).size(), 2u);
        // Every operand laid out as the output: flat over storage.
        OperatorCard same = binaryCard("aten::add", dtype, q, q);
        same.outputs = {q};
        auto family = BinaryFamily::create(same);
        ASSERT_TRUE(family.ok()) << family.error().toString();
        auto flat = family.value()->generate(family.value()->rootParams());
        ASSERT_TRUE(flat.ok());
        EXPECT_NE(flat->source.find("both operands laid out as the output"), std::string::npos);
    }
    // An output with gaps (not what eager allocates) is refused.
    const TensorSpec sliced{"float32", {4, 8}, {16, 1}, "cuda:0"};
    OperatorCard gaps = binaryCard("aten::add", "float32", sliced, cudaTensor("float32", {4, 8}));
    gaps.outputs = {sliced};
    EXPECT_NE(BuiltinProposer::supports(gaps).error().message.find("dense layouts only"), std::string::npos);
}

TEST(BuiltinProposer, BinaryOpsCompileForEveryDtypeAndBroadcast)
{
    for (const std::string& dtype : kDtypes) {
        auto t = [&](std::vector<std::int64_t> sizes) { return cudaTensor(dtype, sizes); };
        TensorSpec transposed = t({1000, 3});
        transposed.strides = {1, 1000}; // a [3, 1000] tensor's .t()
        const std::vector<OperatorCard> cards = {
            binaryCard("aten::add", dtype, t({8, 197, 64}), t({64})),
            binaryCard("aten::mul", dtype, t({8, 1, 64}), t({8, 197, 1})),
            binaryCard("aten::sub", dtype, t({2, 3}), t({2, 3}), 2),
            binaryCard("aten::div", dtype, t({7}), t({7})),
            binaryCard("aten::add", dtype, t({4097}), t({}), 0.5),
            binaryCard("aten::mul", dtype, transposed, t({1000, 1})),
            binaryCard("aten::div", dtype, t({1}), t({1, 1}), 1, "Tensor_mode"),
        };
        for (const OperatorCard& card : cards) {
            SCOPED_TRACE(card.op + " " + dtype + " " + card.args[0].toShortString() + " " +
                         card.args[1].toShortString());
            EXPECT_GE(growChain(card, 2, true).size(), 2u);
        }
    }
}

TEST(BuiltinProposer, BinaryBakesBroadcastStridesAndAlpha)
{
    std::atomic<bool> stop{false};
    const TensorSpec a = cudaTensor("float32", {8, 197, 64});
    auto bias = BuiltinProposer(binaryCard("aten::sub", "float32", a, cudaTensor("float32", {64}), 3))
                    .proposeRoot(SearchTree("c", 1), stop);
    ASSERT_TRUE(bias.ok());
    // [8,197,64] - 3 * [64]: the two outer dims merge (bias stride 0 in both), the inner one stays.
    EXPECT_NE(bias->candidate.source.find("static_cast<float>(3.0) * b"), std::string::npos);
    EXPECT_NE(bias->candidate.source.find("[1576: 64, 0] [64: 1, 1]"), std::string::npos) << bias->candidate.source;
    EXPECT_EQ(bias->provenance.details["params"]["vector_width"], 4);
    auto outer = BuiltinProposer(binaryCard("aten::mul", "float32", cudaTensor("float32", {8, 1, 64}),
                                            cudaTensor("float32", {8, 197, 1})))
                     .proposeRoot(SearchTree("c", 1), stop);
    ASSERT_TRUE(outer.ok());
    EXPECT_NE(outer->candidate.source.find("[8: 64, 197] [197: 0, 1] [64: 1, 0]"), std::string::npos)
        << outer->candidate.source;
    auto flat = BuiltinProposer(
                    binaryCard("aten::add", "bfloat16", cudaTensor("bfloat16", {2, 3}), cudaTensor("bfloat16", {2, 3})))
                    .proposeRoot(SearchTree("c", 1), stop);
    ASSERT_TRUE(flat.ok());
    EXPECT_NE(flat->candidate.source.find("both operands contiguous and same-shaped"), std::string::npos);
    EXPECT_NE(flat->candidate.source.find("TAIL"), std::string::npos);
}

TEST(BuiltinProposer, BinaryReadsAZeroDimOperandOfAnotherDtypeAtEveryLaunch)
{
    // The decoders' attention scale (bf16 scores * a float64 0-dim constant on the GPU) and RMSNorm's
    // eps (float32 variance + float64 0-dim): the value is read from the tensor, never baked in.
    std::atomic<bool> stop{false};
    const TensorSpec scale64 = cudaTensor("float64", {});
    for (const std::string& dtype : kDtypes) {
        auto t = [&](std::vector<std::int64_t> sizes) { return cudaTensor(dtype, sizes); };
        const std::vector<OperatorCard> cards = {
            binaryCard("aten::mul", dtype, t({4, 16, 64, 64}), scale64),
            binaryCard("aten::add", dtype, t({4, 64, 1}), scale64),
            binaryCard("aten::sub", dtype, scale64, t({8, 197, 64}), 2), // the 0-dim operand is self
            binaryCard("aten::div", dtype, t({1000, 3}), cudaTensor(dtype == "float16" ? "bfloat16" : "float16", {})),
            binaryCard("aten::mul_", dtype, t({8, 197, 64}), scale64),
        };
        for (const OperatorCard& card : cards) {
            SCOPED_TRACE(card.op + " " + dtype + " " + card.args[0].toShortString() + " " +
                         card.args[1].toShortString());
            auto root = BuiltinProposer(card).proposeRoot(SearchTree("c", 1), stop);
            ASSERT_TRUE(root.ok()) << root.error().toString();
            const std::string& source = root->candidate.source;
            const bool selfIsScalar = card.args[0].tensors[0].sizes.empty();
            EXPECT_NE(source.find(std::string("const float sv = kfScalarOperand(") + (selfIsScalar ? "x" : "z") + ")"),
                      std::string::npos)
                << source;
            EXPECT_NE(source.find("return kfLoad(kfStore("), std::string::npos) << "cast to the output's dtype first";
            EXPECT_EQ(source.find("0.088"), std::string::npos);
            EXPECT_GE(growChain(card, 2, true).size(), 2u); // compiles, and has neighbours
        }
    }
    auto attention =
        BuiltinProposer(binaryCard("aten::mul", "bfloat16", cudaTensor("bfloat16", {4, 16, 64, 64}), scale64))
            .proposeRoot(SearchTree("c", 1), stop);
    ASSERT_TRUE(attention.ok());
    EXPECT_NE(attention->candidate.source.find("typedef double scalar_operand_t;"), std::string::npos);
    EXPECT_NE(attention->candidate.source.find("float kfLoadScalarOperand(double v) { return static_cast<float>(v); }"),
              std::string::npos);
    EXPECT_NE(attention->candidate.source.find("both operands contiguous and same-shaped"), std::string::npos);
    EXPECT_EQ(attention->provenance.details["params"]["vector_width"], 8); // the dense operand still loads 16 bytes

    // Only a 0-dim operand may differ from the output's dtype; an integer one (`x + 1` in a CPU
    // capture's trace) is read as float, as c10 converts it, then rounded to the output's dtype.
    const TensorSpec x = cudaTensor("float32", {4, 8});
    EXPECT_NE(refusal(binaryCard("aten::mul", "float32", x, cudaTensor("float64", {1}))).find("mixed dtypes"),
              std::string::npos);
    for (const std::string& dtype : kDtypes) {
        auto plusOne =
            BuiltinProposer(binaryCard("aten::add", dtype, cudaTensor(dtype, {4, 8}), cudaTensor("int64", {})))
                .proposeRoot(SearchTree("c", 1), stop);
        ASSERT_TRUE(plusOne.ok()) << plusOne.error().toString();
        EXPECT_NE(plusOne->candidate.source.find("typedef long long scalar_operand_t;"), std::string::npos);
        EXPECT_NE(
            plusOne->candidate.source.find("float kfLoadScalarOperand(long long v) { return static_cast<float>(v); }"),
            std::string::npos)
            << plusOne->candidate.source;
        EXPECT_NE(plusOne->candidate.source.find("return kfLoad(kfStore("), std::string::npos);
    }
    EXPECT_GE(
        growChain(binaryCard("aten::mul", "bfloat16", cudaTensor("bfloat16", {4, 8}), cudaTensor("bool", {})), 2, true)
            .size(),
        2u);
}

TEST(BuiltinProposer, BinaryTakesAHostNumberByValue)
{
    // `x * 0.5` or `x * x.shape[-1]` run eagerly on the GPU: the number arrives as a 0-dim CPU
    // tensor. The plan passes its value (f64:NAME) and the kernel reads it straight into fp32.
    std::atomic<bool> stop{false};
    const TensorSpec float64Number{"float64", {}, {}, "cpu"};
    const TensorSpec int64Number{"int64", {}, {}, "cpu"};
    for (const std::string& dtype : kDtypes) {
        auto t = [&](std::vector<std::int64_t> sizes) { return cudaTensor(dtype, sizes); };
        struct Case {
            OperatorCard card;
            const char* token;      // the number's plan argument
            const char* conversion; // kfScalarOperand's body
        };
        const std::vector<Case> cases = {
            {binaryCard("aten::mul", dtype, t({4, 16, 64, 64}), float64Number), "f64:other", "static_cast<float>(v)"},
            {binaryCard("aten::mul", dtype, int64Number, t({8, 197, 64})), "f64:self", "static_cast<float>(v)"},
            {binaryCard("aten::sub", dtype, t({4, 64, 1}), float64Number, 2), "f64:other", "static_cast<float>(v)"},
            {binaryCard("aten::div", dtype, t({1000, 3}), float64Number), "f64:other", "1.0f / static_cast<float>(v)"},
            {binaryCard("aten::div", dtype, float64Number, t({1000, 3})), "f64:self", "static_cast<float>(v)"},
            {binaryCard("aten::mul_", dtype, t({8, 197, 64}), int64Number), "f64:other", "static_cast<float>(v)"},
        };
        for (const Case& c : cases) {
            SCOPED_TRACE(c.card.op + " " + dtype + " " + c.card.args[0].toShortString() + " " +
                         c.card.args[1].toShortString());
            auto root = BuiltinProposer(c.card).proposeRoot(SearchTree("c", 1), stop);
            ASSERT_TRUE(root.ok()) << root.error().toString();
            const std::string& source = root->candidate.source;
            const bool selfIsNumber = c.card.args[0].tensors[0].sizes.empty();
            EXPECT_NE(source.find(std::string("const double ") + (selfIsNumber ? "x" : "z")), std::string::npos)
                << source;
            EXPECT_NE(source.find(std::string("float kfScalarOperand(double v) { return ") + c.conversion + "; }"),
                      std::string::npos)
                << source;
            EXPECT_EQ(source.find("kfLoad(kfStore("), std::string::npos) << "no rounding to the output's dtype";
            const bool reciprocal = std::string(c.conversion).starts_with("1.0f");
            EXPECT_EQ(source.find("return (a * b);") != std::string::npos,
                      reciprocal || c.card.op == "aten::mul" || c.card.op == "aten::mul_")
                << source;
            const nlohmann::json args = root->candidate.launchPlan["launches"][0]["args"];
            EXPECT_EQ(args[selfIsNumber ? 0 : 1], c.token);
            auto plan = parseLaunchPlan(root->candidate.launchPlan, c.card);
            ASSERT_TRUE(plan.ok()) << plan.error().toString();
            EXPECT_TRUE(validateLaunchPlan(plan.value(), c.card).ok());
            EXPECT_GE(growChain(c.card, 2, true).size(), 2u); // compiles, and has neighbours
        }
    }
    // Only a 0-dim tensor may be on the host, and only one of the two.
    const TensorSpec x = cudaTensor("float32", {4, 8});
    EXPECT_NE(refusal(binaryCard("aten::mul", "float32", x, TensorSpec{"float32", {8}, {1}, "cpu"}))
                  .find("only a 0-dim tensor may be on the host"),
              std::string::npos);
    EXPECT_NE(refusal(binaryCard("aten::mul", "float32", float64Number, float64Number))
                  .find("both operands are numbers on the host"),
              std::string::npos);
}

TEST(BuiltinProposer, LikelyNextHoldsWhatTheNextRevisionOfTheBestNodeWillBe)
{
    const OperatorCard card = softmaxCard("aten::softmax", "int", "bfloat16", {64, 512});
    BuiltinProposer proposer(card);
    std::atomic<bool> stop{false};
    SearchTree tree = growChain(card, 2, false);
    const SearchNode* best = nullptr;
    for (const SearchNode& node : tree.nodes())
        if (!best || node.latency->medianUs < best->latency->medianUs)
            best = &node;
    ASSERT_NE(best, nullptr);
    auto current = proposer.propose(tree, *best, stop);
    ASSERT_TRUE(current.ok());
    ASSERT_TRUE(current->failureReason.empty());

    const std::vector<Candidate> hints = proposer.likelyNext(tree, current.value(), 100);
    ASSERT_FALSE(hints.empty());
    std::set<std::string> sources;
    for (const Candidate& hint : hints) {
        EXPECT_NE(hint.source, current->candidate.source); // about to be evaluated anyway
        for (const SearchNode& node : tree.nodes())
            EXPECT_NE(hint.source, node.candidate.source); // already evaluated
        sources.insert(hint.source);
    }
    EXPECT_EQ(sources.size(), hints.size()) << "no duplicates";
    EXPECT_LE(proposer.likelyNext(tree, current.value(), 3).size(), 3u);

    // Whatever the proposer picks next for the best node was among the hints.
    const std::string currentId = tree.addChild(best->id, current->candidate, current->provenance, 0).value();
    ASSERT_TRUE(tree.recordEvaluation(currentId, passed(50)).ok());
    auto next = proposer.propose(tree, *tree.find(best->id), stop);
    ASSERT_TRUE(next.ok());
    ASSERT_TRUE(next->failureReason.empty()) << next->failureReason;
    EXPECT_TRUE(sources.count(next->candidate.source)) << next->provenance.transformation;
}

TEST(BuiltinProposer, InPlaceAddWritesThroughSelfWithoutRestrictAndCompiles)
{
    std::atomic<bool> stop{false};
    for (const std::string& dtype : kDtypes) {
        const OperatorCard card =
            binaryCard("aten::add_", dtype, cudaTensor(dtype, {8, 197, 64}), cudaTensor(dtype, {64}), 2);
        SCOPED_TRACE(dtype);
        auto root = BuiltinProposer(card).proposeRoot(SearchTree("c", 1), stop);
        ASSERT_TRUE(root.ok()) << root.error().toString();
        // self and out0 are one tensor at run time: promising the compiler they do not alias
        // would let it reorder the loads and stores.
        EXPECT_EQ(root->candidate.source.find("__restrict__"), std::string::npos) << root->candidate.source;
        EXPECT_NE(root->candidate.source.find("kf_add_("), std::string::npos);
        EXPECT_NE(root->candidate.source.find("static_cast<float>(2.0) * b"), std::string::npos);
        EXPECT_GE(growChain(card, 2, true).size(), 2u);
    }
    // The output is self: an in-place op whose self would have to broadcast is not one.
    OperatorCard broadcastSelf =
        binaryCard("aten::add_", "float32", cudaTensor("float32", {64}), cudaTensor("float32", {8, 64}));
    EXPECT_NE(refusal(broadcastSelf).find("is not laid out as self"), std::string::npos);
}

TEST(BuiltinProposer, EmbeddingCompilesForEveryDtypeAndIndexShape)
{
    for (const std::string& dtype : kDtypes)
        for (const std::string idx : {"int64", "int32"})
            for (const auto& [dim, indexSizes] : std::vector<std::pair<std::int64_t, std::vector<std::int64_t>>>{
                     {1, {7}}, {197, {2, 3}}, {1000, {4, 1}}, {64, {8, 197}}}) {
                SCOPED_TRACE(dtype + " " + idx + " D=" + std::to_string(dim));
                EXPECT_EQ(
                    growChain(embeddingCard(dtype, idx, 1000, dim, indexSizes), idx == "int64" ? 2 : 1, true).size(),
                    idx == "int64" ? 3u : 2u);
            }
    std::atomic<bool> stop{false};
    auto root =
        BuiltinProposer(embeddingCard("float32", "int64", 30522, 768, {8, 128})).proposeRoot(SearchTree("c", 1), stop);
    ASSERT_TRUE(root.ok());
    EXPECT_NE(root->candidate.source.find("id < 0 || id >= VOCAB"), std::string::npos);
    EXPECT_EQ(root->candidate.launchPlan["launches"][0]["grid"][0],
              8 * 128 / root->provenance.details["params"]["rows_per_block"].get<int>());
}

TEST(BuiltinProposer, LastFamiliesAreDeterministicAndNeverRepeat)
{
    for (const OperatorCard& card :
         {batchNormCard("bfloat16", {4, 32, 28, 28}, true),
          binaryCard("aten::mul", "float16", cudaTensor("float16", {8, 1, 64}), cudaTensor("float16", {8, 197, 1})),
          embeddingCard("float16", "int64", 5000, 512, {4, 64})}) {
        SCOPED_TRACE(card.op);
        const SearchTree a = growChain(card, 10, false, 9);
        const SearchTree b = growChain(card, 10, false, 9);
        ASSERT_EQ(a.size(), b.size());
        std::set<std::string> params;
        for (std::size_t i = 0; i < a.size(); ++i) {
            EXPECT_EQ(a.nodes()[i].candidate, b.nodes()[i].candidate);
            EXPECT_EQ(a.nodes()[i].provenance, b.nodes()[i].provenance);
            EXPECT_TRUE(params.insert(a.nodes()[i].provenance.details["params"].dump()).second);
        }
        EXPECT_GE(a.size(), 5u);
    }
}

TEST(BuiltinProposer, LastFamiliesRefuseWithTheReason)
{
    EXPECT_NE(refusal(batchNormCard("float32", {2, 8, 4, 4}, true, true)).find("training=true"), std::string::npos);
    OperatorCard noStats = batchNormCard("float32", {2, 8, 4, 4}, true);
    noStats.args[3] = noneArg("running_mean");
    EXPECT_NE(refusal(noStats).find("running_mean is None"), std::string::npos);
    OperatorCard nhwcIntoNchw = batchNormCard("float16", {2, 8, 4, 4}, true); // output layout differs
    nhwcIntoNchw.args[0].tensors[0].strides = {128, 1, 32, 8};
    EXPECT_NE(refusal(nhwcIntoNchw).find("input's sizes and layout"), std::string::npos);
    OperatorCard transposed = batchNormCard("float16", {2, 8, 4, 4}, true);
    transposed.args[0].tensors[0].strides = {128, 1, 8, 32};
    EXPECT_NE(refusal(transposed).find("NCHW contiguous or channels-last only"), std::string::npos);
    EXPECT_NE(refusal(batchNormCard("float64", {2, 8, 4}, false)).find("dtype float64 not covered"), std::string::npos);

    const TensorSpec x = cudaTensor("float32", {4, 8});
    const TensorSpec wrapped{"float64", {}, {}, "cpu"}; // a Python float: `x * 0.5`
    // A CPU capture (a machine without a GPU): every operand and the output are on the CPU, and the
    // kernel reads them all from memory, the 0-dim one too.
    TensorSpec cpuX = x;
    cpuX.device = "cpu";
    OperatorCard cpuCard = binaryCard("aten::mul", "float32", cpuX, wrapped);
    cpuCard.outputs[0].device = "cpu";
    EXPECT_TRUE(BuiltinProposer::supports(cpuCard).ok());
    OperatorCard cpuAdd = binaryCard("aten::add", "float32", cpuX, cpuX);
    cpuAdd.outputs[0].device = "cpu";
    EXPECT_TRUE(BuiltinProposer::supports(cpuAdd).ok());
    EXPECT_NE(refusal(binaryCard("aten::add", "float32", x, cudaTensor("float16", {4, 8}))).find("mixed dtypes"),
              std::string::npos);
    // div with a rounding mode is the pointwise generator's (PointwiseRegionFamilyTest), an unknown mode
    // is refused by both.
    OperatorCard oddDiv = binaryCard("aten::div", "float32", x, x, 1, "Tensor_mode");
    oddDiv.args[2] = ArgSpec{"rounding_mode", "str?", ArgKind::Value, {}, "ceil"};
    EXPECT_NE(refusal(oddDiv).find("rounding_mode \"ceil\" not covered by the pointwise table"), std::string::npos);
    // Integer tensors the binary family refuses are the pointwise generator's (exact integer code).
    EXPECT_TRUE(
        BuiltinProposer::supports(binaryCard("aten::add", "int64", cudaTensor("int64", {4}), cudaTensor("int64", {4})))
            .ok());
    OperatorCard noTable = binaryCard("aten::atan2", "float32", x, x, 1, "");
    EXPECT_NE(refusal(noTable).find("not covered by the built-in proposer yet"), std::string::npos);

    EXPECT_NE(refusal(embeddingCard("float32", "float32", 10, 8, {4})).find("indices dtype float32"),
              std::string::npos);
    OperatorCard transposedWeight = embeddingCard("float32", "int64", 10, 8, {4});
    transposedWeight.args[0].tensors[0].strides = {1, 10};
    EXPECT_NE(refusal(transposedWeight).find("expected a non-empty contiguous [V, D]"), std::string::npos);
}

TEST(BuiltinProposer, DtypeConversionsRefuseWhatIsNotACopyIntoAnotherFloatDtype)
{
    EXPECT_NE(refusal(castCard("float32", "float32", 64)).find("returns the tensor itself"), std::string::npos);
    EXPECT_NE(refusal(castCard("float32", "float64", 64)).find("only float32, float16, bfloat16"), std::string::npos);
    EXPECT_NE(refusal(castCard("float16", "float32", 64, 2)).find("memory_format 2"),
              std::string::npos); // channels_last
    // A transposed input converted into a contiguous output (memory_format=contiguous) gathers.
    OperatorCard strided = castCard("float16", "float32", 64, 0);
    strided.args[0].tensors[0] = TensorSpec{"float16", {8, 8}, {1, 8}, "cuda:0"};
    strided.outputs[0] = TensorSpec{"float32", {8, 8}, {8, 1}, "cuda:0"};
    EXPECT_TRUE(BuiltinProposer::supports(strided).ok());
    OperatorCard gaps = strided;
    gaps.outputs[0].strides = {16, 1};
    EXPECT_NE(refusal(gaps).find("(dense layouts only)"), std::string::npos);
}

TEST(BuiltinProposer, PowOfOtherExponentsIsThePointwiseGenerators)
{
    // UnaryFamily squares; eager's other special exponents and powf are the pointwise table's.
    for (json exponent : {json(3), json(0.5), json(-1), json(1.7)}) {
        OperatorCard card = unaryCard("aten::pow", "float32", 64);
        card.overload = "Tensor_Scalar";
        card.args.push_back(ArgSpec{"exponent", "Scalar", ArgKind::Value, {}, exponent});
        std::atomic<bool> stop{false};
        auto root = BuiltinProposer(card).proposeRoot(SearchTree(card.id, 1), stop);
        ASSERT_TRUE(root) << exponent.dump() << ": " << root.error().toString();
        EXPECT_EQ(root->provenance.details["family"], "pointwise_region") << exponent.dump();
    }
}
