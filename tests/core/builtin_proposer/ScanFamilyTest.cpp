// ScanFamily (cumsum / cumprod): rows a warp or a block each, few long rows split in two launches,
// scans over an outer dim as columns; every dtype compiles with NVRTC along a search chain; the
// plan; the refusals. Numbers: emulation/emulate_builtin_families.py (host emulation against eager)
// and the `gpu` tests.

#include "CandidateChecks.h"

#include "builtin_proposer/BuiltinProposer.h"
#include "builtin_proposer/ScanFamily.h"

#include <gtest/gtest.h>

#include <set>

using namespace kforge::core;
using namespace kforge::core::test_candidates;
using nlohmann::json;

namespace {

// c10::ScalarType code of float32, as a captured dtype argument holds it.
constexpr int kFloat32 = 6;

TensorSpec contiguousTensor(const std::string& dtype, const std::vector<std::int64_t>& sizes)
{
    std::vector<std::int64_t> strides(sizes.size(), 1);
    for (int d = static_cast<int>(sizes.size()) - 2; d >= 0; --d)
        strides[d] = strides[d + 1] * sizes[d + 1];
    return TensorSpec{dtype, sizes, strides, "cuda:0"};
}

// aten::cumsum / aten::cumprod over `dim`; `outDtype` empty: dtype=None.
OperatorCard scanCard(const std::string& op, const std::string& dtype, const std::vector<std::int64_t>& sizes,
                      std::int64_t dim, const std::string& outDtype = "")
{
    OperatorCard card;
    card.op = op;
    card.id = "card-" + op.substr(6) + "-" + dtype;
    card.args.push_back(ArgSpec{"self", "Tensor", ArgKind::Tensor, {contiguousTensor(dtype, sizes)}, nullptr});
    card.args.push_back(ArgSpec{"dim", "int", ArgKind::Value, {}, dim});
    if (outDtype.empty())
        card.args.push_back(ArgSpec{"dtype", "ScalarType?", ArgKind::None, {}, nullptr});
    else
        card.args.push_back(ArgSpec{"dtype", "ScalarType?", ArgKind::Value, {}, kFloat32});
    card.outputs = {contiguousTensor(outDtype.empty() ? dtype : outDtype, sizes)};
    return card;
}

json rootParams(const OperatorCard& card, Candidate* candidate = nullptr)
{
    BuiltinProposer proposer(card);
    std::atomic<bool> stop{false};
    auto root = proposer.proposeRoot(SearchTree(card.id, 1), stop);
    EXPECT_TRUE(root.ok()) << (root.ok() ? "" : root.error().toString());
    if (!root.ok())
        return {};
    EXPECT_EQ(root->provenance.details["family"], "scan");
    if (candidate)
        *candidate = root->candidate;
    return root->provenance.details["params"];
}

std::string refusalOf(const OperatorCard& card)
{
    auto supported = BuiltinProposer::supports(card);
    EXPECT_FALSE(supported);
    return supported ? "" : supported.error().message;
}

} // namespace

TEST(ScanFamily, EveryDtypeAndLayoutCompilesAlongASearchChain)
{
    for (const std::string op : {"aten::cumsum", "aten::cumprod"})
        for (const std::string dtype : {"float32", "float16", "bfloat16"})
            for (const auto& [sizes, dim] : std::vector<std::pair<std::vector<std::int64_t>, std::int64_t>>{
                     {{3, 7}, -1},       // short rows: a warp per row, one element per lane
                     {{64, 1000}, 1},    // a warp per row, vectors
                     {{16, 8192}, -1},   // a block per row
                     {{2, 1 << 20}, -1}, // few long rows: split over blocks
                     {{8, 197, 33}, 1},  // over a middle dim: columns
                     {{4096, 64}, 0}}) { // over the outer dim, vectors of columns
                const OperatorCard card = scanCard(op, dtype, sizes, dim);
                SCOPED_TRACE(op + " " + dtype + " " + card.args[0].tensors[0].toShortString());
                const SearchTree tree = growChain(card, 6, true);
                EXPECT_GE(tree.size(), 3u);
            }
}

TEST(ScanFamily, RowsTakeAWarpOrABlockAndFewLongRowsSplit)
{
    const json shortRows = rootParams(scanCard("aten::cumsum", "float32", {64, 1000}, -1));
    EXPECT_EQ(shortRows["warp_per_row"], true);
    EXPECT_EQ(shortRows["vector_width"], 4); // 16 bytes: 250 vectors, about eight per lane
    EXPECT_EQ(shortRows["split"], 1);
    const json tiny = rootParams(scanCard("aten::cumsum", "float32", {64, 40}, -1));
    EXPECT_EQ(tiny["vector_width"], 1); // 40 elements: a vector per lane would idle most lanes

    const json longRows = rootParams(scanCard("aten::cumsum", "bfloat16", {4096, 16384}, -1));
    EXPECT_EQ(longRows["warp_per_row"], false);
    EXPECT_EQ(longRows["split"], 1); // 4096 rows fill the GPU already

    Candidate split;
    const json fewRows = rootParams(scanCard("aten::cumprod", "float32", {2, 1 << 20}, -1), &split);
    EXPECT_GT(fewRows["split"].get<int>(), 1);
    ASSERT_EQ(split.launchPlan["launches"].size(), 2u);
    EXPECT_EQ(split.launchPlan["launches"][0]["kernel"], "kf_cumprod_totals");
    EXPECT_EQ(split.launchPlan["launches"][1]["kernel"], "kf_cumprod");
    EXPECT_EQ(split.launchPlan["launches"][1]["grid"], json::array({2 * fewRows["split"].get<int>()}));
    EXPECT_EQ(split.launchPlan["scratch"][0]["bytes"], 2 * fewRows["split"].get<int>() * 4);
    EXPECT_NE(split.source.find("a * b"), std::string::npos); // cumprod multiplies
}

TEST(ScanFamily, ScansOverAnOuterDimWalkColumns)
{
    Candidate candidate;
    const json params = rootParams(scanCard("aten::cumsum", "float16", {8, 197, 32}, 1), &candidate);
    EXPECT_EQ(params, (json{{"threads", 256}, {"vector_width", 8}, {"unroll", 4}}));
    EXPECT_NE(candidate.source.find("constexpr long long INNER = 32LL;"), std::string::npos);
    // 8 x 32 columns, 8 per thread: 32 threads, one block.
    EXPECT_EQ(candidate.launchPlan["launches"][0]["grid"], json::array({1}));
    EXPECT_NE(candidate.source.find("a + b"), std::string::npos);
}

TEST(ScanFamily, ADtypeArgumentWritesItsDtype)
{
    Candidate candidate;
    rootParams(scanCard("aten::cumsum", "bfloat16", {4, 100}, -1, "float32"), &candidate);
    EXPECT_NE(candidate.source.find("bfloat16 -> float32"), std::string::npos);
}

TEST(ScanFamily, SameSeedSameProposalsAndNoRepeats)
{
    const OperatorCard card = scanCard("aten::cumsum", "float32", {2, 1 << 20}, -1);
    const SearchTree a = growChain(card, 12, false, 3);
    const SearchTree b = growChain(card, 12, false, 3);
    ASSERT_EQ(a.size(), b.size());
    std::set<std::string> params;
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a.nodes()[i].candidate, b.nodes()[i].candidate);
        EXPECT_TRUE(params.insert(a.nodes()[i].provenance.details["params"].dump()).second);
    }
}

TEST(ScanFamily, RefusesWithTheReason)
{
    OperatorCard ints = scanCard("aten::cumsum", "float32", {4, 8}, -1);
    ints.args[0].tensors[0].dtype = "int64";
    ints.outputs[0].dtype = "int64";
    EXPECT_NE(refusalOf(ints).find("int64"), std::string::npos);
    EXPECT_NE(refusalOf(scanCard("aten::cumsum", "float32", {4, 8}, 2)).find("dim 2 out of range"), std::string::npos);
    EXPECT_NE(refusalOf(scanCard("aten::cumsum", "float32", {}, 0)).find("0-dim"), std::string::npos);
    OperatorCard strided = scanCard("aten::cumprod", "float32", {4, 8}, -1);
    strided.args[0].tensors[0].strides = {1, 4};
    EXPECT_NE(refusalOf(strided).find("non-contiguous"), std::string::npos);
    OperatorCard named = scanCard("aten::cumsum", "float32", {4, 8}, -1);
    named.overload = "dimname";
    EXPECT_NE(refusalOf(named).find("not covered"), std::string::npos);
}

TEST(ScanFamily, HandEditedParamsAreRefusedWithTheParameter)
{
    auto family = ScanFamily::create(scanCard("aten::cumsum", "float32", {4, 1000}, -1));
    ASSERT_TRUE(family.ok()) << family.error().toString();
    const std::vector<std::pair<json, std::string>> bad = {
        {{{"threads", 256}, {"warp_per_row", true}, {"vector_width", 3}, {"split", 1}}, "vector_width"},
        {{{"threads", 256}, {"warp_per_row", true}, {"vector_width", 1}, {"split", 2}}, "split"},
        {{{"threads", 256}, {"warp_per_row", false}, {"vector_width", 8}, {"split", 1}}, "vector_width 8"},
        {{{"threads", 256}, {"warp_per_row", false}, {"vector_width", 4}, {"split", 128}}, "split must be 1..64"},
        {{{"threads", 256}, {"warp_per_row", false}, {"vector_width", 4}}, "split"}};
    for (const auto& [params, named] : bad) {
        SCOPED_TRACE(params.dump());
        auto candidate = family.value()->generate(params);
        ASSERT_FALSE(candidate.ok());
        EXPECT_EQ(candidate.error().code, ErrorCode::InvalidArgument);
        EXPECT_NE(candidate.error().toString().find(named), std::string::npos) << candidate.error().toString();
        EXPECT_TRUE(family.value()->transformations(params).empty()); // nothing to revise from
    }
}
