// RowRegionFamily on hand-made region cards (RegionChainBuilder.h): attention's scale + mask ->
// softmax -> to, RMSNorm written out, residual add -> layer_norm, per-row outputs and a transposed
// input compile with NVRTC along a search chain; the plan and the refusals. Numbers:
// emulation/emulate_row_regions.py (host emulation against eager) and the `gpu` tests.

#include "CandidateChecks.h"
#include "RegionChainBuilder.h"

#include "builtin_proposer/BuiltinProposer.h"

#include <gtest/gtest.h>

using namespace kforge::core;
using namespace kforge::core::test_candidates;
using namespace kforge::core::test_regions;
using nlohmann::json;

namespace {

// c10::ScalarType codes as a captured dtype argument holds them.
constexpr int kFloat32 = 6;

Candidate rootCandidate(const OperatorCard& card, json* params = nullptr)
{
    BuiltinProposer proposer(card);
    SearchTree tree(card.id, 1);
    std::atomic<bool> stop{false};
    auto root = proposer.proposeRoot(tree, stop);
    EXPECT_TRUE(root) << root.error().toString();
    if (!root)
        return {};
    EXPECT_EQ(root->provenance.details["family"], "row_region");
    if (params)
        *params = root->provenance.details["params"];
    return root->candidate;
}

// The single-op card of a one-member region card: the member's op and arguments.
OperatorCard singleOpCard(const OperatorCard& region)
{
    const ChainMember& member = region.region->members.at(0);
    OperatorCard card = region;
    card.region.reset();
    card.op = member.op;
    card.overload = member.overload;
    card.args = member.args;
    card.id = "single-" + member.op;
    return card;
}

std::string refusalOf(const OperatorCard& card)
{
    auto supported = BuiltinProposer::supports(card);
    EXPECT_FALSE(supported);
    return supported ? "" : supported.error().message;
}

// transformers' eager attention: scores * scale + mask -> softmax(dim=-1, dtype=float32) -> to(dtype).
OperatorCard attentionSoftmax(const std::string& dtype, std::int64_t heads, std::int64_t seq, std::int64_t keys)
{
    RegionChainBuilder b;
    const TensorSpec t = spec(dtype, {2, heads, seq, keys});
    const Value scores = b.input(t);
    const Value mask = b.input(spec(dtype, {1, 1, seq, keys}));
    const Value scaled = b.binary("aten::mul", scores, json(0.125), t);
    const Value masked = b.binary("aten::add", scaled, mask, t);
    const Value p = b.call("aten::softmax", "int", {{"self", masked}, {"dim", json(-1)}, {"dtype", json(kFloat32)}},
                           spec("float32", t.sizes));
    b.output(b.call("aten::to", "dtype",
                    {{"self", p},
                     {"dtype",
                      json(dtype == "float16"        ? 5
                               : dtype == "bfloat16" ? 15
                                                     : kFloat32)},
                     {"non_blocking", json(false)},
                     {"copy", json(false)}},
                    t));
    return b.card();
}

// Qwen's RMSNorm: h = x.to(float32); h * rsqrt(h.pow(2).mean(-1, keepdim) + eps); weight * h.to(x's dtype).
OperatorCard rmsNormWrittenOut(const std::string& dtype, std::int64_t rows, std::int64_t hidden)
{
    RegionChainBuilder b;
    const TensorSpec t = spec(dtype, {rows, hidden});
    const TensorSpec f = spec("float32", {rows, hidden});
    const Value x = b.input(t);
    const Value w = b.input(spec(dtype, {hidden}));
    const Value h = b.call("aten::to", "dtype", {{"self", x}, {"dtype", json(kFloat32)}}, f);
    const Value sq = b.call("aten::pow", "Tensor_Scalar", {{"self", h}, {"exponent", json(2)}}, f);
    const Value var = b.call("aten::mean", "dim", {{"self", sq}, {"dim", json({-1})}, {"keepdim", json(true)}},
                             spec("float32", {rows, 1}));
    const Value r = b.unary("aten::rsqrt", b.binary("aten::add", var, json(1e-6), spec("float32", {rows, 1})));
    const Value normed = b.binary("aten::mul", h, r, f);
    const Value back = b.call("aten::to", "dtype", {{"self", normed}, {"dtype", json(15)}}, t);
    b.output(b.binary("aten::mul", w, back, t));
    return b.card();
}

} // namespace

TEST(RowRegionFamily, AttentionSoftmaxChainsCompileForEveryDtype)
{
    for (const std::string dtype : {"float32", "float16", "bfloat16"})
        for (const std::int64_t keys : {64, 197, 2048}) {
            SCOPED_TRACE(dtype + " keys " + std::to_string(keys));
            const OperatorCard card = attentionSoftmax(dtype, 4, 16, keys);
            json params;
            const Candidate root = rootCandidate(card, &params);
            EXPECT_NE(root.source.find("2 reduction(s)"), std::string::npos) << root.source;
            EXPECT_NE(root.source.find("kfRow_max"), std::string::npos);
            EXPECT_NE(root.source.find("kfRow_sum"), std::string::npos);
            EXPECT_EQ(params["vector_width"], keys % 2 ? 1 : (dtype == "float32" ? 4 : 8));
            growChain(card, 5, true);
        }
}

TEST(RowRegionFamily, RmsNormWrittenOutIsOneReductionAndOneKernel)
{
    const OperatorCard card = rmsNormWrittenOut("bfloat16", 96, 1024);
    json params;
    const Candidate root = rootCandidate(card, &params);
    EXPECT_NE(root.source.find("1 reduction(s)"), std::string::npos) << root.source;
    EXPECT_NE(root.source.find("//   in1 bfloat16 per element"), std::string::npos); // the weight [hidden]
    ASSERT_EQ(root.launchPlan["launches"].size(), 1u);
    const json& launch = root.launchPlan["launches"][0];
    EXPECT_EQ(launch["kernel"], "kf_row_region");
    EXPECT_EQ(launch["args"], json({"ptr:in0", "ptr:in1", "ptr:out0"}));
    // 96 rows of 1024 bf16: 32 threads of 8-wide vectors, four per thread, eight rows a block.
    EXPECT_EQ(params,
              json({{"threads", 32},
                    {"rows_per_block", 8},
                    {"vector_width", 8},
                    {"split", 1},
                    {"columns", false},
                    {"column_parts", 1}}));
    EXPECT_EQ(launch["grid"], json::array({12}));
    growChain(card, 6, true);
}

TEST(RowRegionFamily, ResidualAddLayerNormWritesBothOutputs)
{
    RegionChainBuilder b;
    const TensorSpec t = spec("float16", {33, 160});
    const Value x = b.input(t);
    const Value r = b.input(t);
    const Value h = b.binary("aten::add", x, r, t);
    const Value y = b.call("aten::layer_norm", "",
                           {{"input", h},
                            {"normalized_shape", json({160})},
                            {"weight", b.input(spec("float16", {160}))},
                            {"bias", b.input(spec("float16", {160}))},
                            {"eps", json(1e-5)},
                            {"cudnn_enable", json(true)}},
                           t);
    b.output(h);
    b.output(y);
    const OperatorCard card = b.card();
    const Candidate root = rootCandidate(card);
    EXPECT_NE(root.source.find("2 reduction(s)"), std::string::npos) << root.source;
    EXPECT_EQ(root.launchPlan["launches"][0]["args"],
              json({"ptr:in0", "ptr:in1", "ptr:in2", "ptr:in3", "ptr:out0", "ptr:out1"}));
    growChain(card, 5, true);
}

TEST(RowRegionFamily, PerRowOutputsAndATransposedInputCompile)
{
    RegionChainBuilder b;
    const Value x = b.input(spec("float32", {40, 48}, {1, 40})); // a transposed view: rows are strided
    const Value scale = b.input(spec("float32", {40, 1}));       // one value per row
    const TensorSpec t = spec("float32", {40, 48});
    const Value scaled = b.binary("aten::mul", x, scale, t);
    const Value peak = b.call("aten::amax", "", {{"self", scaled}, {"dim", json({1})}, {"keepdim", json(false)}},
                              spec("float32", {40}));
    const Value mean = b.call("aten::mean", "dim", {{"self", scaled}, {"dim", json({-1})}, {"keepdim", json(true)}},
                              spec("float32", {40, 1}));
    b.output(peak);
    b.output(b.binary("aten::sub", scaled, mean, t));
    const OperatorCard card = b.card();
    json params;
    const Candidate root = rootCandidate(card, &params);
    EXPECT_NE(root.source.find("//   in1 float32 per row"), std::string::npos) << root.source;
    EXPECT_NE(root.source.find("//   out0 float32 per row"), std::string::npos);
    // in0 read along the row at stride 40
    EXPECT_NE(root.source.find("kfColOffset_in0(long long i)\n{\n    long long o = 0;\n    o += i * 40LL;"),
              std::string::npos)
        << root.source;
    growChain(card, 5, true);
}

TEST(RowRegionFamily, RefusesWhatItCannotCoverWithTheReason)
{
    const TensorSpec t = spec("float32", {4, 6, 8});
    { // reductions of one tensor over different dims: two row shapes
        RegionChainBuilder b;
        const Value x = b.unary("aten::exp", b.input(t));
        b.output(b.call("aten::sum", "dim_IntList", {{"self", x}, {"dim", json({1})}, {"keepdim", json(true)}},
                        spec("float32", {4, 1, 8})));
        b.output(b.call("aten::amax", "", {{"self", x}, {"dim", json({2})}, {"keepdim", json(true)}},
                        spec("float32", {4, 6, 1})));
        EXPECT_NE(refusalOf(b.card()).find("reductions over rows of different shapes"), std::string::npos)
            << refusalOf(b.card());
    }
    { // a reduction without keepdim broadcast against the row's elements
        RegionChainBuilder b;
        const Value x = b.input(spec("float32", {8, 8}));
        const Value m = b.call("aten::mean", "dim", {{"self", x}, {"dim", json({-1})}, {"keepdim", json(false)}},
                               spec("float32", {8}));
        b.output(b.binary("aten::sub", x, m, spec("float32", {8, 8})));
        EXPECT_NE(refusalOf(b.card()).find("reads a reduction without keepdim"), std::string::npos)
            << refusalOf(b.card());
    }
    { // rms_norm's default eps
        RegionChainBuilder b;
        const Value x = b.unary("aten::relu", b.input(t));
        b.output(b.call(
            "aten::rms_norm", "",
            {{"input", x}, {"normalized_shape", json({8})}, {"weight", std::monostate{}}, {"eps", std::monostate{}}},
            t));
        EXPECT_NE(refusalOf(b.card()).find("eps is not a number"), std::string::npos) << refusalOf(b.card());
    }
    { // softmax converting float32 to bfloat16 rounds its input: not covered
        RegionChainBuilder b;
        const Value x = b.unary("aten::relu", b.input(t));
        b.output(b.call("aten::softmax", "int", {{"self", x}, {"dim", json(-1)}, {"dtype", json(15)}},
                        spec("bfloat16", t.sizes)));
        EXPECT_NE(refusalOf(b.card()).find("converts float32 to bfloat16"), std::string::npos) << refusalOf(b.card());
    }
}

TEST(RowRegionFamily, LongRowsSplitOverBlocksOneKernelPerReduction)
{
    // Two rows of 65536: longer than registers hold, and two blocks would leave a GPU idle. Each row
    // is cut into chunks; the softmax's max and sum are one kernel each, the outputs a third.
    RegionChainBuilder b;
    const TensorSpec longRows = spec("bfloat16", {2, 65536});
    const Value x = b.binary("aten::mul", b.input(longRows), json(0.5), longRows);
    b.output(b.call("aten::softmax", "int", {{"self", x}, {"dim", json(-1)}, {"dtype", std::monostate{}}}, longRows));
    const OperatorCard card = b.card();
    json params;
    const Candidate root = rootCandidate(card, &params);
    // 2 rows x 16 chunks of 4096 elements: 256 threads of 8-wide vectors, two each.
    EXPECT_EQ(params,
              json({{"threads", 256},
                    {"rows_per_block", 1},
                    {"vector_width", 8},
                    {"split", 16},
                    {"columns", false},
                    {"column_parts", 1}}));
    const json& launches = root.launchPlan["launches"];
    ASSERT_EQ(launches.size(), 3u);
    EXPECT_EQ(launches[0]["kernel"], "kf_row_region_stage0");
    EXPECT_EQ(launches[1]["kernel"], "kf_row_region_stage1");
    EXPECT_EQ(launches[2]["kernel"], "kf_row_region_outputs");
    EXPECT_EQ(launches[0]["args"], json({"ptr:in0", "ptr:scratch.partials"}));
    EXPECT_EQ(launches[2]["args"], json({"ptr:in0", "ptr:out0", "ptr:scratch.partials"}));
    for (const json& launch : launches)
        EXPECT_EQ(launch["grid"], json::array({32}));
    // Two reductions' partials for each of the 32 blocks.
    EXPECT_EQ(root.launchPlan["scratch"][0]["bytes"], 2 * 32 * 4);
    const SearchTree tree = growChain(card, 6, true);
    bool unsplit = false;
    for (const SearchNode& node : tree.nodes())
        unsplit = unsplit || node.provenance.details["params"]["split"] == 1;
    EXPECT_FALSE(unsplit) << "a row of 65536 does not fit one block's registers";
}

TEST(RowRegionFamily, FewLongRowsOfASingleNormCardGoToTheSplitKernel)
{
    // layer_norm over 16 rows of 4 Mi floats, a single-op card: the tuned norm family would run 16
    // blocks. The row-region generator takes it, and the plan passes the card's own arguments.
    RegionChainBuilder b;
    const TensorSpec rows = spec("float32", {16, 4194304});
    const Value x = b.input(rows);
    b.output(b.call("aten::layer_norm", "",
                    {{"input", x},
                     {"normalized_shape", json({4194304})},
                     {"weight", b.input(spec("float32", {4194304}))},
                     {"bias", b.input(spec("float32", {4194304}))},
                     {"eps", json(1e-5)},
                     {"cudnn_enable", json(true)}},
                    rows));
    const OperatorCard single = singleOpCard(b.card());
    json params;
    const Candidate root = rootCandidate(single, &params);
    EXPECT_EQ(params["split"], 64); // 16 rows x 64 chunks: 1024 blocks of 256 threads, a GPU's thread slots
    const json& launches = root.launchPlan["launches"];
    ASSERT_EQ(launches.size(), 3u); // mean, the squared deviations' mean, the outputs
    EXPECT_EQ(launches[2]["args"], json({"ptr:input", "ptr:weight", "ptr:bias", "ptr:out0", "ptr:scratch.partials"}));
    expectGoodCandidate(single, root, "root");
}

TEST(RowRegionFamily, AMeanOfEveryElementFillsTheGpuAndMergesInOneWarp)
{
    // The mean of all of [8192, 8192] bf16: one row, 1024 blocks of 256 threads reading 8-wide
    // vectors, then one warp merging their partials (nothing else is written).
    RegionChainBuilder b;
    b.output(b.call("aten::mean", "", {{"self", b.input(spec("bfloat16", {8192, 8192}))}, {"dtype", std::monostate{}}},
                    spec("bfloat16", {})));
    const OperatorCard card = singleOpCard(b.card());
    json params;
    const Candidate root = rootCandidate(card, &params);
    EXPECT_EQ(params["split"], 1024);
    EXPECT_EQ(params["threads"], 256);
    EXPECT_EQ(params["vector_width"], 8);
    const json& launches = root.launchPlan["launches"];
    ASSERT_EQ(launches.size(), 2u);
    EXPECT_EQ(launches[0]["grid"], json::array({1024}));
    EXPECT_EQ(launches[1]["grid"], json::array({1}));
    EXPECT_EQ(launches[1]["block"], json::array({32}));
    EXPECT_NE(root.source.find("const long long row = blockIdx.x;\n    const int part = 0;"), std::string::npos)
        << root.source;
    expectGoodCandidate(card, root, "mean of every element");
}

TEST(RowRegionFamily, StridedSingleOpSoftmaxAndLayerNormAreRowRegions)
{
    // The tuned softmax and norm families need a contiguous input; the row-region generator reads a
    // transposed one at its strides.
    TensorSpec transposed = spec("float32", {64, 128});
    transposed.strides = {1, 64};
    {
        RegionChainBuilder b;
        b.output(b.call("aten::softmax", "int",
                        {{"self", b.input(transposed)}, {"dim", json(-1)}, {"dtype", std::monostate{}}},
                        spec("float32", {64, 128})));
        const OperatorCard card = singleOpCard(b.card());
        const Candidate root = rootCandidate(card);
        EXPECT_EQ(root.launchPlan["launches"][0]["args"], json({"ptr:self", "ptr:out0"}));
        expectGoodCandidate(card, root, "softmax of a transposed input");
    }
    {
        RegionChainBuilder b;
        b.output(b.call("aten::layer_norm", "",
                        {{"input", b.input(transposed)},
                         {"normalized_shape", json({128})},
                         {"weight", std::monostate{}},
                         {"bias", std::monostate{}},
                         {"eps", json(1e-5)},
                         {"cudnn_enable", json(true)}},
                        spec("float32", {64, 128})));
        const OperatorCard card = singleOpCard(b.card());
        expectGoodCandidate(card, rootCandidate(card), "layer_norm of a transposed input");
    }
}

TEST(RowRegionFamily, RowsOfSeveralTrailingDimsAndTheWholeTensor)
{
    { // layer_norm over [6, 40]: a row of 240 elements, the weight [6, 40] read along it
        RegionChainBuilder b;
        const TensorSpec t = spec("float32", {4, 6, 40});
        const Value x = b.unary("aten::relu", b.input(t));
        b.output(b.call("aten::layer_norm", "",
                        {{"input", x},
                         {"normalized_shape", json({6, 40})},
                         {"weight", b.input(spec("float32", {6, 40}))},
                         {"bias", std::monostate{}},
                         {"eps", json(1e-5)},
                         {"cudnn_enable", json(true)}},
                        t));
        const OperatorCard card = b.card();
        const Candidate root = rootCandidate(card);
        EXPECT_NE(root.source.find("4 rows of 240 elements"), std::string::npos) << root.source;
        growChain(card, 4, true);
    }
    { // mean of every element of [3, 64, 128] (a single-op card): one row of 24576, split over blocks
        RegionChainBuilder b;
        b.output(b.call("aten::mean", "",
                        {{"self", b.input(spec("bfloat16", {3, 64, 128}))}, {"dtype", std::monostate{}}},
                        spec("bfloat16", {})));
        const OperatorCard card = singleOpCard(b.card());
        json params;
        const Candidate root = rootCandidate(card, &params);
        EXPECT_NE(root.source.find("1 rows of 24576 elements"), std::string::npos) << root.source;
        EXPECT_GT(params["split"].get<int>(), 1);
        expectGoodCandidate(card, root, "mean of everything");
    }
    { // sum over the last two dims of a transposed input: the row dims do not merge, each element's
      // offset is computed from its row column
        RegionChainBuilder b;
        TensorSpec t = spec("float32", {8, 12, 10});
        t.strides = {120, 1, 12};
        const Value x = b.unary("aten::exp", b.input(t));
        b.output(b.call("aten::sum", "dim_IntList",
                        {{"self", x}, {"dim", json({-2, -1})}, {"keepdim", json(true)}, {"dtype", std::monostate{}}},
                        spec("float32", {8, 1, 1})));
        const OperatorCard card = b.card();
        const Candidate root = rootCandidate(card);
        EXPECT_NE(root.source.find("kfColOffset_in0"), std::string::npos);
        EXPECT_NE(root.source.find("% 10LL"), std::string::npos) << root.source; // the inner row dim
        growChain(card, 3, true);
    }
}

TEST(RowRegionFamily, GroupNormSiluIsOneRowPerGroup)
{
    // SD's resnet block: group_norm(32 groups) -> silu over [1, 512, 64, 64] in float16. A row is a
    // group's 16 channels x 4096 positions; 32 rows leave a GPU idle, so the root splits them.
    RegionChainBuilder b;
    const TensorSpec t = spec("float16", {1, 512, 64, 64});
    const Value y = b.call("aten::group_norm", "",
                           {{"input", b.input(t)},
                            {"num_groups", json(32)},
                            {"weight", b.input(spec("float16", {512}))},
                            {"bias", b.input(spec("float16", {512}))},
                            {"eps", json(1e-6)},
                            {"cudnn_enabled", json(true)}},
                           t);
    b.output(b.unary("aten::silu", y));
    const OperatorCard card = b.card();
    json params;
    const Candidate root = rootCandidate(card, &params);
    EXPECT_NE(root.source.find("32 rows of 65536 elements"), std::string::npos) << root.source;
    EXPECT_NE(root.source.find("//   in1 float16 per element"), std::string::npos); // the weight, per channel
    EXPECT_GT(params["split"].get<int>(), 1);
    // The weight's offset along the row: its channel, the row column over the 4096 positions.
    EXPECT_NE(root.source.find("kfColOffset_in1(long long i)\n{\n    long long o = 0;\n    i /= 4096LL;\n"
                               "    o += i * 1LL;"),
              std::string::npos)
        << root.source;
    growChain(card, 4, true);

    // A weight also read as an ordinary operand would need two layouts: refused with the reason.
    RegionChainBuilder both;
    const TensorSpec small = spec("float32", {2, 8, 8});
    const Value w = both.input(spec("float32", {8}));
    const Value g = both.call("aten::group_norm", "",
                              {{"input", both.input(small)},
                               {"num_groups", json(2)},
                               {"weight", w},
                               {"bias", std::monostate{}},
                               {"eps", json(1e-5)},
                               {"cudnn_enabled", json(true)}},
                              small);
    both.output(both.binary("aten::mul", g, w, small));
    EXPECT_NE(refusalOf(both.card()).find("read both per channel and otherwise"), std::string::npos)
        << refusalOf(both.card());
}

TEST(RowRegionFamily, StatisticsAndInstanceNormAreSingleOpRowRegions)
{
    const TensorSpec t = spec("float16", {6, 300});
    const TensorSpec perRow = spec("float16", {6, 1});
    const auto single = [](const std::string& op, const std::string& overload, const std::vector<Arg>& args,
                           const TensorSpec& in, const TensorSpec& out) {
        RegionChainBuilder b;
        std::vector<Arg> withInput = args;
        withInput.insert(withInput.begin(), Arg{op == "aten::instance_norm" ? "input" : "self", b.input(in)});
        b.output(b.call(op, overload, withInput, out));
        return singleOpCard(b.card());
    };
    const OperatorCard cards[] = {
        single("aten::var", "correction", {{"dim", json({-1})}, {"correction", json(1)}, {"keepdim", json(true)}}, t,
               perRow),
        single("aten::std", "dim", {{"dim", json({-1})}, {"unbiased", json(false)}, {"keepdim", json(true)}}, t,
               perRow),
        single("aten::linalg_vector_norm", "",
               {{"ord", json("inf")}, {"dim", json({-1})}, {"keepdim", json(true)}, {"dtype", std::monostate{}}}, t,
               perRow),
        single("aten::logsumexp", "", {{"dim", json({-1})}, {"keepdim", json(true)}}, t, perRow),
        single("aten::prod", "dim_int", {{"dim", json(-1)}, {"keepdim", json(true)}, {"dtype", std::monostate{}}}, t,
               perRow),
        single("aten::instance_norm", "",
               {{"weight", std::monostate{}},
                {"bias", std::monostate{}},
                {"running_mean", std::monostate{}},
                {"running_var", std::monostate{}},
                {"use_input_stats", json(true)},
                {"momentum", json(0.1)},
                {"eps", json(1e-5)},
                {"cudnn_enabled", json(true)}},
               spec("float32", {2, 3, 10, 10}), spec("float32", {2, 3, 10, 10})),
    };
    for (const OperatorCard& card : cards) {
        SCOPED_TRACE(card.op);
        const Candidate root = rootCandidate(card);
        expectGoodCandidate(card, root, card.op);
        growChain(card, 2, true);
    }
    // instance_norm's per-instance rows: one per (n, c) of 100 positions.
    EXPECT_NE(rootCandidate(cards[5]).source.find("6 rows of 100 elements"), std::string::npos);

    { // running statistics would be updated in place: refused with the reason
        RegionChainBuilder b;
        const TensorSpec x = spec("float32", {2, 3, 10});
        b.output(b.unary("aten::relu",
                         b.call("aten::instance_norm", "",
                                {{"input", b.input(x)},
                                 {"weight", std::monostate{}},
                                 {"bias", std::monostate{}},
                                 {"running_mean", b.input(spec("float32", {3}))},
                                 {"running_var", b.input(spec("float32", {3}))},
                                 {"use_input_stats", json(true)},
                                 {"momentum", json(0.1)},
                                 {"eps", json(1e-5)},
                                 {"cudnn_enabled", json(true)}},
                                x)));
        EXPECT_NE(refusalOf(b.card()).find("updates running statistics"), std::string::npos) << refusalOf(b.card());
    }
    { // max of two tensors is binary, not a reduction: refused with the reason
        RegionChainBuilder b;
        const Value x = b.input(t);
        const Value m = b.call("aten::max", "other", {{"self", x}, {"other", b.unary("aten::relu", x)}}, t);
        b.output(b.unary("aten::relu", m));
        EXPECT_NE(refusalOf(b.card()).find("max / min of two tensors"), std::string::npos) << refusalOf(b.card());
    }
    { // argmax: the index of the first maximum as int64, one pair reduction carrying an int index
        const OperatorCard card =
            single("aten::argmax", "", {{"dim", json(-1)}, {"keepdim", json(false)}}, t, spec("int64", {6}));
        const Candidate root = rootCandidate(card);
        EXPECT_NE(root.source.find("1 reduction(s)"), std::string::npos) << root.source;
        EXPECT_NE(root.source.find("kfPair_argmax(acc, at, y[0], c0 + e);"), std::string::npos) << root.source;
        EXPECT_NE(root.source.find("typedef long long t_out0"), std::string::npos) << root.source;
        EXPECT_NE(root.source.find("= static_cast<t_out0>(ri[0]);"), std::string::npos) << root.source;
        expectGoodCandidate(card, root, "argmax");
        growChain(card, 2, true);
    }
}

TEST(RowRegionFamily, ReductionsOverLeadingAndMiddleDimsWalkTheirRowsAtTheirStrides)
{
    { // sum over the middle dim of [4, 6, 8]: 32 rows of 6 elements 8 apart, the output [4, 1, 8]
        RegionChainBuilder b;
        const Value x = b.unary("aten::exp", b.input(spec("float32", {4, 6, 8})));
        b.output(b.call("aten::sum", "dim_IntList",
                        {{"self", x}, {"dim", json({1})}, {"keepdim", json(true)}, {"dtype", std::monostate{}}},
                        spec("float32", {4, 1, 8})));
        const OperatorCard card = b.card();
        const Candidate root = rootCandidate(card);
        EXPECT_NE(root.source.find("32 rows of 6 elements"), std::string::npos) << root.source;
        growChain(card, 3, true);
    }
    { // softmax over the channels of NCHW [2, 5, 7, 3] (a single-op card): 42 rows of 5, 21 apart
        RegionChainBuilder b;
        const TensorSpec t = spec("float16", {2, 5, 7, 3});
        b.output(
            b.call("aten::_softmax", "", {{"self", b.input(t)}, {"dim", json(1)}, {"half_to_float", json(false)}}, t));
        const OperatorCard card = singleOpCard(b.card());
        const Candidate root = rootCandidate(card);
        EXPECT_NE(root.source.find("42 rows of 5 elements"), std::string::npos) << root.source;
        expectGoodCandidate(card, root, "softmax over dim 1");
    }
    { // mean over the leading and last dims of [3, 4, 5] without keepdim: 4 rows of 15
        RegionChainBuilder b;
        b.output(b.call("aten::mean", "dim",
                        {{"self", b.input(spec("bfloat16", {3, 4, 5}))},
                         {"dim", json({0, -1})},
                         {"keepdim", json(false)},
                         {"dtype", std::monostate{}}},
                        spec("bfloat16", {4})));
        const OperatorCard card = singleOpCard(b.card());
        const Candidate root = rootCandidate(card);
        EXPECT_NE(root.source.find("4 rows of 15 elements"), std::string::npos) << root.source;
        growChain(card, 2, true);
    }
}

TEST(RowRegionFamily, RowsAlongAStridedDimOfAdjacentRowsAreAThreadEach)
{
    // mean over the middle dim of [8, 64, 1024] (a single-op card): 8192 rows of 64 elements 1024
    // apart, adjacent rows adjacent in memory, so the root gives each row threads of its own; 8192
    // threads would leave most of a GPU idle, so eight share a row (column_parts), 8 elements each.
    RegionChainBuilder b;
    b.output(b.call("aten::mean", "dim",
                    {{"self", b.input(spec("float16", {8, 64, 1024}))},
                     {"dim", json({1})},
                     {"keepdim", json(true)},
                     {"dtype", std::monostate{}}},
                    spec("float16", {8, 1, 1024})));
    const OperatorCard card = singleOpCard(b.card());
    json params;
    const Candidate root = rootCandidate(card, &params);
    EXPECT_EQ(params["columns"], true);
    EXPECT_EQ(params["column_parts"], 8);
    EXPECT_NE(root.source.find("8 threads per row"), std::string::npos) << root.source;
    EXPECT_NE(root.source.find("kf_row_region_columns"), std::string::npos);
    EXPECT_EQ(root.launchPlan["launches"][0]["block"], json::array({1024}));
    EXPECT_EQ(root.launchPlan["launches"][0]["grid"], json::array({64}));
    // 64 elements a row: read once into registers; the sum is compensated, the parts' (acc, lost)
    // pairs combined in shared memory.
    EXPECT_NE(root.source.find("its inputs read once into registers"), std::string::npos) << root.source;
    EXPECT_NE(root.source.find("held[j][n] = xs[n][0]"), std::string::npos);
    EXPECT_NE(root.source.find("lost +="), std::string::npos);
    EXPECT_NE(root.source.find("part_lost[part][lane] = lost;"), std::string::npos);
    expectGoodCandidate(card, root, "columns");
    growChain(card, 4, true); // other rows per block; a row group per row where the threads allow
    // 512 elements a row: every pass reads the row again, no registers hold it.
    RegionChainBuilder longer;
    longer.output(longer.call("aten::sum", "dim_IntList",
                              {{"self", longer.input(spec("float32", {8, 512, 1024}))},
                               {"dim", json({1})},
                               {"keepdim", json(false)},
                               {"dtype", std::monostate{}}},
                              spec("float32", {8, 1024})));
    json longerParams;
    const Candidate longerRoot = rootCandidate(singleOpCard(longer.card()), &longerParams);
    EXPECT_EQ(longerParams["columns"], true);
    EXPECT_NE(longerRoot.source.find("a pass over the row per reduction"), std::string::npos) << longerRoot.source;
    EXPECT_EQ(longerRoot.source.find("held["), std::string::npos);
    EXPECT_NE(longerRoot.source.find("lost +="), std::string::npos);
    // A softmax over the last dim keeps a row group per row.
    RegionChainBuilder last;
    const TensorSpec t = spec("float32", {8192, 64});
    last.output(last.call(
        "aten::_softmax", "",
        {{"self", last.unary("aten::relu", last.input(t))}, {"dim", json(-1)}, {"half_to_float", json(false)}}, t));
    json lastParams;
    rootCandidate(last.card(), &lastParams);
    EXPECT_EQ(lastParams["columns"], false);
}

// A single-op max.dim (min.dim) card over `dim` of float32 `sizes`, both outputs (values, int64
// indices), keepdim.
OperatorCard maxDimCard(const std::string& op, const std::vector<std::int64_t>& sizes, std::int64_t dim)
{
    std::vector<std::int64_t> kept = sizes;
    kept[static_cast<std::size_t>(dim)] = 1;
    RegionChainBuilder b;
    b.output(b.call(op, "dim", {{"self", b.input(spec("float32", sizes))}, {"dim", json(dim)}, {"keepdim", json(true)}},
                    spec("float32", kept)));
    OperatorCard card = b.card();
    card.region->members[0].outputs.push_back(spec("int64", kept));
    card.region->outputs.push_back(ChainSource{true, 0, 1});
    card.outputs.push_back(spec("int64", kept));
    return singleOpCard(card);
}

TEST(RowRegionFamily, IndexReductionsAreOnePairReductionInEveryLayout)
{
    { // argmax over the rows of [8192, 4096]: row groups, one walk carrying (value, int index)
        RegionChainBuilder b;
        b.output(b.call("aten::argmax", "",
                        {{"self", b.input(spec("float32", {8192, 4096}))}, {"dim", json(-1)}, {"keepdim", json(false)}},
                        spec("int64", {8192})));
        const OperatorCard card = singleOpCard(b.card());
        json params;
        const Candidate root = rootCandidate(card, &params);
        EXPECT_EQ(params["split"], 1);
        EXPECT_EQ(params["columns"], false);
        EXPECT_NE(root.source.find("1 reduction(s)"), std::string::npos) << root.source;
        EXPECT_NE(root.source.find("kfRow_argmax(acc, at, scratch, scratch_at);"), std::string::npos) << root.source;
        EXPECT_NE(root.source.find("__shared__ int scratch_at["), std::string::npos);
        expectGoodCandidate(card, root, "argmax row groups");
        growChain(card, 3, true);
    }
    { // argmin of all 2^25 elements: one row, longer than fp32 counts exactly, split over blocks;
      // each block's partial index goes to the indices scratch beside its value
        RegionChainBuilder b;
        b.output(b.call("aten::argmin", "",
                        {{"self", b.input(spec("float32", {std::int64_t{1} << 25}))},
                         {"dim", std::monostate{}},
                         {"keepdim", json(false)}},
                        spec("int64", {})));
        const OperatorCard card = singleOpCard(b.card());
        json params;
        const Candidate root = rootCandidate(card, &params);
        EXPECT_GT(params["split"].get<int>(), 1);
        const json& launches = root.launchPlan["launches"];
        ASSERT_EQ(launches.size(), 2u); // the one reduction, then the outputs
        EXPECT_EQ(launches[0]["args"], json({"ptr:self", "ptr:scratch.partials", "ptr:scratch.indices"}));
        EXPECT_EQ(root.launchPlan["scratch"][1]["name"], "indices");
        EXPECT_NE(root.source.find("kfMerge_argmin(partials + "), std::string::npos) << root.source;
        expectGoodCandidate(card, root, "argmin split");
        growChain(card, 2, true);
    }
    { // max.dim over the middle dim of [256, 128, 512]: 131072 rows of 128, two threads a row
        const OperatorCard card = maxDimCard("aten::max", {256, 128, 512}, 1);
        json params;
        const Candidate root = rootCandidate(card, &params);
        EXPECT_EQ(params["columns"], true);
        EXPECT_EQ(params["column_parts"], 2);
        EXPECT_NE(root.source.find("1 reduction(s)"), std::string::npos) << root.source;
        EXPECT_NE(root.source.find("part_at[part][lane] = at;"), std::string::npos) << root.source;
        EXPECT_NE(root.source.find("kfPair_argmax(acc, at, part_acc[p][lane], part_at[p][lane]);"), std::string::npos);
        EXPECT_EQ(root.launchPlan["launches"][0]["block"], json::array({256}));
        EXPECT_EQ(root.launchPlan["launches"][0]["grid"], json::array({1024}));
        expectGoodCandidate(card, root, "max.dim columns");
        growChain(card, 4, true);
    }
}

TEST(RowRegionFamily, AnIndexReadByAnotherOpIsRefused)
{
    // The indices are int64; the chain's fp32 values cannot carry them on.
    RegionChainBuilder b;
    const TensorSpec t = spec("float32", {6, 40});
    const Value i = b.call("aten::argmax", "", {{"self", b.input(t)}, {"dim", json(-1)}, {"keepdim", json(true)}},
                           spec("int64", {6, 1}));
    b.output(b.binary("aten::mul", i, json(2), spec("int64", {6, 1})));
    EXPECT_NE(refusalOf(b.card()).find("reads an index reduction's int64 indices"), std::string::npos)
        << refusalOf(b.card());
}

TEST(RowRegionFamily, ColumnPartsFillTheGpuWhereRowsAreFew)
{
    // sum over the middle dim of [64, 512, 1024]: 65536 rows of 512; four threads a row.
    RegionChainBuilder b;
    b.output(b.call("aten::sum", "dim_IntList",
                    {{"self", b.input(spec("float32", {64, 512, 1024}))},
                     {"dim", json({1})},
                     {"keepdim", json(false)},
                     {"dtype", std::monostate{}}},
                    spec("float32", {64, 1024})));
    const OperatorCard card = singleOpCard(b.card());
    json params;
    const Candidate root = rootCandidate(card, &params);
    EXPECT_EQ(params["column_parts"], 4);
    EXPECT_NE(root.source.find("constexpr int PARTS = 4;"), std::string::npos) << root.source;
    EXPECT_NE(root.source.find("kfAddCompensated(acc, lost, part_acc[p][lane]);"), std::string::npos);
    EXPECT_EQ(root.launchPlan["launches"][0]["block"], json::array({512}));
    expectGoodCandidate(card, root, "column parts");
    // The search walks column_parts like the other knobs, and only where threads share rows.
    const SearchTree tree = growChain(card, 8, true);
    bool otherParts = false;
    for (const SearchNode& node : tree.nodes()) {
        const json& p = node.provenance.details["params"];
        otherParts = otherParts || p["column_parts"] != 4;
        EXPECT_TRUE(p["columns"] == true || p["column_parts"] == 1) << p.dump();
    }
    EXPECT_TRUE(otherParts);
    // Many rows: a thread each.
    const OperatorCard many = maxDimCard("aten::min", {64, 64, 8192}, 1);
    json manyParams;
    rootCandidate(many, &manyParams);
    EXPECT_EQ(manyParams["columns"], true);
    EXPECT_EQ(manyParams["column_parts"], 1);
}

TEST(RowRegionFamily, ParamsOfOlderTreesWithoutSplitOrColumnsAreRevised)
{
    // A tree saved before `split`, `columns` and `column_parts` existed: its root's params lack them,
    // and the proposer still revises it (as split 1, a row group per row, one part).
    const OperatorCard card = rmsNormWrittenOut("bfloat16", 64, 512);
    BuiltinProposer proposer(card);
    std::atomic<bool> stop{false};
    SearchTree tree(card.id, 3);
    auto root = proposer.proposeRoot(tree, stop);
    ASSERT_TRUE(root.ok());
    Provenance old = root->provenance;
    old.details["params"].erase("split");
    old.details["params"].erase("columns");
    old.details["params"].erase("column_parts");
    const std::string id = tree.addRoot(root->candidate, old, 0).value();
    ASSERT_TRUE(tree.recordEvaluation(id, passed(10)).ok());
    auto next = proposer.propose(tree, *tree.find(id), stop);
    ASSERT_TRUE(next.ok());
    EXPECT_TRUE(next->failureReason.empty()) << next->failureReason;
    EXPECT_EQ(next->provenance.details["from"]["split"], 1);
    EXPECT_EQ(next->provenance.details["from"]["columns"], false);
    EXPECT_EQ(next->provenance.details["from"]["column_parts"], 1);
    expectGoodCandidate(card, next->candidate, "a revision of an older node");
}
