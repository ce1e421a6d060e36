// The tree value type, its JSON file and TreeStore: queries, exact round trips, damaged files.

#include "SearchTestSupport.h"

#include "model/NodeRanking.h"
#include "model/SearchTree.h"
#include "model/SearchTreeJson.h"
#include "search/Mcts.h"
#include "search/TreeStore.h"
#include "util/AtomicFile.h"

#include <gtest/gtest.h>

#include <fstream>

namespace kforge::core {
namespace {

using test::ScratchDir;

Evaluation passed(double medianUs, double eagerUs = 100.0)
{
    Evaluation e;
    e.latency = LatencyStats{medianUs, medianUs * 0.9, medianUs * 1.1};
    e.eagerUs = eagerUs;
    return e;
}

Evaluation failure(NodeStatus status, std::string reason)
{
    Evaluation e;
    e.status = status;
    e.failureReason = std::move(reason);
    return e;
}

// root(n0, 100us) -> n1 (50us) -> n4 (20us)
//                 -> n2 failed-compile, n3 failed-validation, n5 passed 80us
SearchTree sampleTree()
{
    SearchTree tree("aten_softmax_0", 77);
    Mcts mcts;
    auto add = [&](const std::string& parent, const std::string& text, const Evaluation& e) {
        Provenance p{ProvenanceKind::BuiltinTransformation, "vector-width-" + text, "", "", {{"note", text}}};
        auto id = parent.empty() ? tree.addRoot({text, {{"grid", 1}}}, {}, 1000)
                                 : tree.addChild(parent, {text, {{"grid", 2}}}, p, 2000);
        EXPECT_TRUE(id.ok());
        EXPECT_TRUE(tree.recordEvaluation(*id, e).ok());
        EXPECT_TRUE(mcts.backpropagate(tree, *id).ok());
        return *id;
    };
    add("", "root", passed(100));
    add("n0", "a", passed(50));
    add("n0", "b", failure(NodeStatus::FailedCompile, "error: expected ';'\n  at line 3"));
    add("n0", "c", failure(NodeStatus::FailedValidation, "mismatch at [3, 7]"));
    add("n1", "d", passed(20));
    add("n0", "e", passed(80));
    return tree;
}

TEST(SearchTree, BuildsIdsDepthsIterationsAndLinks)
{
    SearchTree tree = sampleTree();
    ASSERT_EQ(tree.size(), 6u);
    for (std::size_t i = 0; i < tree.size(); ++i) {
        EXPECT_EQ(tree.nodes()[i].id, "n" + std::to_string(i));
        EXPECT_EQ(tree.nodes()[i].iteration, static_cast<int>(i));
    }
    EXPECT_EQ(tree.find("n0")->childIds, (std::vector<std::string>{"n1", "n2", "n3", "n5"}));
    EXPECT_EQ(tree.find("n4")->depth, 2);
    EXPECT_EQ(*tree.find("n4")->parentId, "n1");
    EXPECT_FALSE(tree.root()->parentId.has_value());
    EXPECT_EQ(tree.addRoot({}, {}, 0).error().code, ErrorCode::AlreadyExists);
    EXPECT_EQ(tree.addChild("n42", {}, {}, 0).error().code, ErrorCode::NotFound);
    // Failure reasons are one line; the latency of failures is not kept.
    EXPECT_EQ(tree.find("n2")->failureReason, "error: expected ';'");
    EXPECT_FALSE(tree.find("n2")->latency.has_value());
    EXPECT_NEAR(*tree.find("n4")->speedup, 5.0, 1e-12);
}

TEST(SearchTree, BestLineageAndFailedSiblings)
{
    SearchTree tree = sampleTree();
    ASSERT_NE(bestNode(tree), nullptr);
    EXPECT_EQ(bestNode(tree)->id, "n4");

    std::vector<std::string> path;
    for (const SearchNode* n : tree.lineage("n4"))
        path.push_back(n->id);
    EXPECT_EQ(path, (std::vector<std::string>{"n0", "n1", "n4"}));
    EXPECT_TRUE(tree.lineage("nope").empty());

    auto ids = [](const std::vector<const SearchNode*>& nodes) {
        std::vector<std::string> out;
        for (const SearchNode* n : nodes)
            out.push_back(n->id + ":" + n->failureReason);
        return out;
    };
    EXPECT_EQ(ids(tree.failedSiblings("n1")),
              (std::vector<std::string>{"n2:error: expected ';'", "n3:mismatch at [3, 7]"}));
    EXPECT_EQ(ids(tree.failedSiblings("n2")), (std::vector<std::string>{"n3:mismatch at [3, 7]"}));
    EXPECT_EQ(ids(tree.failedChildren("n0")).size(), 2u);
    EXPECT_TRUE(tree.failedSiblings("n4").empty()); // only child
    EXPECT_TRUE(tree.failedSiblings("n0").empty()); // root

    SearchTree empty("c", 1);
    EXPECT_EQ(bestNode(empty), nullptr);
}

TEST(SearchTree, BestIsRecordedPerGpuModel)
{
    // A box with two GPU models: each node's details name the GPU that evaluated it.
    auto on = [](const std::string& gpu, double medianUs) {
        Evaluation e = passed(medianUs);
        e.report =
            EvaluationReport::fromJson({{"worker", {{"pid", 1}, {"gpu", {{"gpu", gpu}, {"architecture", "sm_90"}}}}}});
        return e;
    };
    SearchTree tree("c", 1);
    const std::string root = *tree.addRoot({"r", {}}, {}, 0);
    ASSERT_TRUE(tree.recordEvaluation(root, on("NVIDIA H200", 100)).ok());
    const std::vector<std::pair<std::string, double>> children = {
        {"NVIDIA H200", 50}, {"NVIDIA L40S", 20}, {"NVIDIA H200", 40}, {"NVIDIA L40S", 30}};
    for (const auto& [gpu, us] : children) {
        const std::string id = *tree.addChild(root, {gpu, {}}, {}, 0);
        ASSERT_TRUE(tree.recordEvaluation(id, on(gpu, us)).ok());
    }
    const std::string unnamed = *tree.addChild(root, {"synthetic", {}}, {}, 0);
    ASSERT_TRUE(tree.recordEvaluation(unnamed, passed(90)).ok());

    EXPECT_EQ(tree.find("n2")->evaluation.gpuModel, "NVIDIA L40S");
    EXPECT_EQ(tree.find(unnamed)->evaluation.gpuModel, "");
    const auto best = bestNodeByGpu(tree);
    ASSERT_EQ(best.size(), 3u);
    EXPECT_EQ(best.at("NVIDIA H200")->id, "n3"); // 2.5x, the best of the H200's nodes
    EXPECT_EQ(best.at("NVIDIA L40S")->id, "n2"); // 5x
    EXPECT_EQ(best.at("")->id, unnamed);
    // The L40S's 5x is not compared with the H200's nodes: the tree's best is on the model with
    // the most measured nodes (as export and the run summary see it).
    EXPECT_EQ(rankedGpuModel(tree), "NVIDIA H200");
    EXPECT_EQ(bestNode(tree)->id, "n3");

    SearchTree single = sampleTree(); // no worker details: one entry, bestNode's
    ASSERT_EQ(bestNodeByGpu(single).size(), 1u);
    EXPECT_EQ(bestNodeByGpu(single).at("")->id, bestNode(single)->id);
}

TEST(SearchTree, RejectsEvaluationsThatBreakTheContract)
{
    SearchTree tree("c", 1);
    auto root = tree.addRoot({"k", {}}, {}, 0);
    ASSERT_TRUE(root.ok());
    Evaluation noLatency;
    EXPECT_EQ(tree.recordEvaluation(*root, noLatency).error().code, ErrorCode::InvalidArgument);
    Evaluation inFlight;
    inFlight.status = NodeStatus::Evaluating;
    EXPECT_FALSE(tree.recordEvaluation(*root, inFlight).ok());
    EXPECT_FALSE(tree.recordEvaluation(*root, passed(10, -1)).ok());
    EXPECT_EQ(tree.find(*root)->status, NodeStatus::Pending); // unchanged
    ASSERT_TRUE(tree.recordEvaluation(*root, failure(NodeStatus::Crashed, "")).ok());
    EXPECT_EQ(tree.find(*root)->failureReason, "crashed (no reason given)");
}

TEST(SearchTreeJson, RoundTripIsExact)
{
    SearchTree tree = sampleTree();
    // Awkward content: multi-line source with quotes and non-ASCII, nested audit details.
    auto id = tree.addChild("n4", {"__global__ void k() {\n  // \"µs\" ✓\n}\n", {{"block", {256, 1, 1}}}},
                            {ProvenanceKind::Llm, "", "openai", "gpt-x", {{"prompt", "p"}, {"tokens", {{"in", 10}}}}},
                            1234567890123);
    ASSERT_TRUE(id.ok());
    Evaluation e = passed(1.0 / 3.0, 0.7);
    e.report = EvaluationReport::fromJson({{"repetitions", 100}});
    ASSERT_TRUE(tree.recordEvaluation(*id, e).ok());
    tree.setRngDraws(12345);

    ScratchDir dir;
    TreeStore store(TreeStore::defaultPath(dir.path(), tree.cardId()));
    EXPECT_EQ(store.file(), dir.path() / "search" / "aten_softmax_0" / "tree.json");
    ASSERT_TRUE(store.save(tree).ok());
    auto loaded = store.load();
    ASSERT_TRUE(loaded.ok()) << loaded.error().toString();
    EXPECT_TRUE(*loaded == tree);
    EXPECT_EQ(toJson(*loaded).dump(), toJson(tree).dump());
    EXPECT_EQ(loaded->rngDraws(), 12345u);
    EXPECT_EQ(loaded->seed(), 77u);
    EXPECT_EQ(loaded->find(*id)->latency->medianUs, 1.0 / 3.0); // bit-exact double
    EXPECT_EQ(loaded->find("n2")->failureReason, "error: expected ';'");
    EXPECT_EQ(loaded->find(*id)->provenance.details["tokens"]["in"], 10);
}

class DamagedTreeFile : public ::testing::Test {
protected:
    void SetUp() override
    {
        ASSERT_TRUE(m_store.save(sampleTree()).ok());
        m_good = *readWholeFile(m_store.file());
        m_json = nlohmann::json::parse(m_good);
    }
    void write(const std::string& bytes)
    {
        std::ofstream out(m_store.file(), std::ios::binary | std::ios::trunc);
        out << bytes;
    }
    Error loadError()
    {
        auto loaded = m_store.load();
        EXPECT_FALSE(loaded.ok());
        if (loaded.ok())
            return {};
        EXPECT_NE(loaded.error().toString().find(m_store.file().string()), std::string::npos)
            << loaded.error().toString();
        return loaded.error();
    }

    ScratchDir m_dir;
    TreeStore m_store{m_dir.path() / "tree.json"};
    std::string m_good;
    nlohmann::json m_json;
};

TEST_F(DamagedTreeFile, TruncatedOrEmptyFileIsAClearError)
{
    for (std::size_t cut : {m_good.size() / 2, m_good.size() - 3, std::size_t{1}, std::size_t{0}}) {
        write(m_good.substr(0, cut));
        Error error = loadError();
        EXPECT_EQ(error.code, ErrorCode::InvalidArgument);
        const std::string expected =
            cut == 0 ? "damaged search tree: the file is empty" : "damaged search tree: malformed JSON at byte ";
        EXPECT_NE(error.message.find(expected), std::string::npos) << error.toString();
    }
}

TEST_F(DamagedTreeFile, BadFieldsAreNamedByTheirJsonPath)
{
    auto expectPath = [&](nlohmann::json broken, const std::string& path, const std::string& words) {
        write(broken.dump());
        Error error = loadError();
        EXPECT_EQ(error.code, ErrorCode::InvalidArgument);
        EXPECT_EQ(error.context, m_store.file().string() + " " + path) << error.toString();
        EXPECT_NE(error.message.find(words), std::string::npos) << error.toString();
    };
    nlohmann::json j = m_json;
    j["nodes"][2].erase("status");
    expectPath(j, "nodes[2].status", "is missing");
    j = m_json;
    j["nodes"][3]["status"] = "great";
    expectPath(j, "nodes[3].status", "unknown status 'great'");
    j = m_json;
    j["nodes"][1]["latency"]["median_us"] = "fast";
    expectPath(j, "nodes[1].latency.median_us", "finite number");
    j = m_json;
    j["nodes"][4]["parent"] = "n9";
    expectPath(j, "nodes[4].parent", "unknown or later parent");
    j = m_json;
    j["nodes"][4]["parent"] = "n2"; // n2 exists but does not list n4
    expectPath(j, "nodes[4].parent", "does not list");
    j = m_json;
    j["nodes"][2]["failure_reason"] = "";
    expectPath(j, "nodes[2].failure_reason", "needs a reason");
    j = m_json;
    j["nodes"][0]["provenance"]["kind"] = "magic";
    expectPath(j, "nodes[0].provenance.kind", "unknown provenance kind");
    j = m_json;
    j["rng_draws"] = -1;
    expectPath(j, "rng_draws", "unsigned integer");
    j = m_json;
    j["format"] = "something-else";
    expectPath(j, "format", "expected 'kforge-search-tree'");

    j = m_json;
    j["version"] = 99;
    write(j.dump());
    Error newer = loadError();
    EXPECT_EQ(newer.code, ErrorCode::Unsupported);
    EXPECT_NE(newer.message.find("newer"), std::string::npos);

    write("[1, 2, 3]");
    EXPECT_EQ(loadError().code, ErrorCode::InvalidArgument);
}

TEST_F(DamagedTreeFile, MissingFileAndOpenForRunRules)
{
    TreeStore missing(m_dir.path() / "absent" / "tree.json");
    auto none = missing.load();
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().code, ErrorCode::NotFound);
    EXPECT_NE(none.error().toString().find("absent"), std::string::npos);

    // New search: an empty tree where no file exists, a refusal where one does.
    auto fresh = missing.openForRun("card", 5, false);
    ASSERT_TRUE(fresh.ok());
    EXPECT_TRUE(fresh->empty());
    EXPECT_EQ(fresh->seed(), 5u);
    EXPECT_EQ(m_store.openForRun("aten_softmax_0", 5, false).error().code, ErrorCode::AlreadyExists);
    // Resume: the saved tree (its own seed), for the right card only.
    auto resumed = m_store.openForRun("aten_softmax_0", 5, true);
    ASSERT_TRUE(resumed.ok());
    EXPECT_EQ(resumed->size(), 6u);
    EXPECT_EQ(resumed->seed(), 77u);
    EXPECT_EQ(m_store.openForRun("other_card", 5, true).error().code, ErrorCode::InvalidArgument);
    write("{");
    EXPECT_FALSE(m_store.openForRun("aten_softmax_0", 5, true).ok());
}

} // namespace
} // namespace kforge::core
