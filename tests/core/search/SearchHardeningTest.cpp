// Bounded storage, untrusted bytes and no dead ends in the search (docs/search.md, "Bounded
// storage", "Text blobs", "A failed root"): text limits, the blob store, the RNG state, damaged
// numbers in a tree file, saves of non-UTF-8 text, and retrying a failed root.

#include "SearchTestSupport.h"

#include "model/SearchRng.h"
#include "model/SearchTreeJson.h"
#include "model/TextBounds.h"
#include "search/ProvenanceTexts.h"
#include "search/TextBlobStore.h"
#include "search/TreeStore.h"
#include "util/AtomicFile.h"
#include "util/Sha256.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

namespace kforge::core {
namespace {

using test::fixedClockOptions;
using test::ScratchDir;
using test::SyntheticEvaluator;
using test::SyntheticProposer;

std::size_t filesIn(const std::filesystem::path& dir)
{
    std::size_t count = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec))
        ++count;
    return count;
}

void writeBytes(const std::filesystem::path& file, const std::string& bytes)
{
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << bytes;
}

TEST(TextBounds, Utf8ValidationAndCutsAtCharacterBoundaries)
{
    EXPECT_FALSE(firstInvalidUtf8("plain ascii").has_value());
    EXPECT_FALSE(firstInvalidUtf8("\"µs\" ✓ 𝄞").has_value());
    EXPECT_EQ(firstInvalidUtf8("ab\xff"), 2u);
    EXPECT_EQ(firstInvalidUtf8("a\xc0\xaf"), 1u);         // overlong '/'
    EXPECT_EQ(firstInvalidUtf8("a\xed\xa0\x80"), 1u);     // a surrogate
    EXPECT_EQ(firstInvalidUtf8("a\xf4\x90\x80\x80"), 1u); // above U+10FFFF
    EXPECT_EQ(firstInvalidUtf8("ok\xe2\x9c"), 2u);        // cut sequence

    const std::string checks = "✓✓✓"; // 3 bytes each
    EXPECT_EQ(utf8Prefix(checks, 4), "✓");
    EXPECT_EQ(utf8Prefix(checks, 6), "✓✓");
    EXPECT_EQ(utf8Prefix(checks, 100), checks);

    EXPECT_EQ(boundedText("short", 10), "short");
    const std::string cut = boundedText(std::string(1000, 'x'), 100);
    EXPECT_EQ(cut.substr(0, 100), std::string(100, 'x'));
    EXPECT_NE(cut.find("[kforge: truncated: 1000 bytes in all, the first 100 kept]"), std::string::npos);

    nlohmann::json details = {{"compile", {{"log", std::string(200000, 'e')}}}, {"list", {std::string(10, 'a')}}};
    boundStrings(details, kMaxDetailStringBytes);
    EXPECT_LT(details["compile"]["log"].get<std::string>().size(), kMaxDetailStringBytes + 100);
    EXPECT_EQ(details["list"][0], std::string(10, 'a'));
}

TEST(TextBlobStore, StoresEachTextOnceAndBoundsItsCopy)
{
    ScratchDir dir;
    TextBlobStore blobs(dir.path() / "blobs");
    auto first = blobs.put("the system prompt");
    auto again = blobs.put("the system prompt");
    ASSERT_TRUE(first.ok() && again.ok());
    EXPECT_EQ(first->sha256, again->sha256);
    EXPECT_EQ(first->sha256, Sha256::hex("the system prompt"));
    EXPECT_EQ(first->bytes, 17u);
    EXPECT_FALSE(first->truncated);
    EXPECT_EQ(filesIn(blobs.directory()), 1u);
    EXPECT_EQ(blobs.get(first->sha256).value(), "the system prompt");

    const std::string huge(3 * 1024 * 1024, 'r');
    auto big = blobs.put(huge);
    ASSERT_TRUE(big.ok());
    EXPECT_TRUE(big->truncated);
    EXPECT_EQ(big->bytes, huge.size());
    EXPECT_LE(std::filesystem::file_size(blobs.fileOf(big->sha256)), kMaxStoredTextBytes + 100);
    EXPECT_EQ(filesIn(blobs.directory()), 2u);

    // A blob whose bytes do not match its name is damaged; a missing one is NotFound.
    writeBytes(blobs.fileOf(first->sha256), "tampered");
    auto damaged = blobs.get(first->sha256);
    ASSERT_FALSE(damaged.ok());
    EXPECT_NE(damaged.error().toString().find("do not match"), std::string::npos);
    EXPECT_EQ(blobs.get(std::string(64, '0')).error().code, ErrorCode::NotFound);
    EXPECT_EQ(blobs.get("../../etc/passwd").error().code, ErrorCode::InvalidArgument);
}

TEST(ProvenanceTexts, ReferencesReplaceTextsAndBothFormsRead)
{
    ScratchDir dir;
    TextBlobStore blobs(dir.path() / "blobs");
    nlohmann::json details = {{"system_prompt", "S"},
                              {"calls", {{{"turn", 0}, {"prompt", "P"}, {"response", "R"}, {"model", "m"}}}},
                              {"turns", 1}};
    const nlohmann::json inlineDetails = details;
    ASSERT_TRUE(storeProvenanceTexts(details, blobs).ok());
    EXPECT_FALSE(details.contains("system_prompt"));
    EXPECT_EQ(details["system_prompt_sha256"], Sha256::hex("S"));
    EXPECT_EQ(details["system_prompt_bytes"], 1);
    EXPECT_FALSE(details["calls"][0].contains("response"));
    EXPECT_EQ(details["calls"][0]["model"], "m");
    EXPECT_EQ(provenanceText(details, "system_prompt", blobs).value(), "S");
    EXPECT_EQ(provenanceText(details["calls"][0], "response", blobs).value(), "R");
    // An older tree's inline texts read the same.
    EXPECT_EQ(provenanceText(inlineDetails["calls"][0], "prompt", blobs).value(), "P");
    EXPECT_EQ(provenanceText(details, "nothing", blobs).error().code, ErrorCode::NotFound);
}

TEST(SearchRngState, RestoresExactlyAndRefusesGarbage)
{
    SearchRng a(99);
    for (int i = 0; i < 1000; ++i)
        a.next();
    auto b = SearchRng::restore(a.state(), a.draws());
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->draws(), 1000u);
    for (int i = 0; i < 10; ++i)
        EXPECT_EQ(a.next(), b->next());
    EXPECT_FALSE(SearchRng::restore("", 0).has_value());
    EXPECT_FALSE(SearchRng::restore("1 2 3", 0).has_value());
    EXPECT_FALSE(SearchRng::restore(a.state() + " x", 0).has_value());
    EXPECT_FALSE(SearchRng::restore(std::string(20000, '1'), 0).has_value());
}

class TreeFile : public ::testing::Test {
protected:
    std::filesystem::path file() const { return m_dir.path() / "search" / "card" / "tree.json"; }

    // A finished run of `nodes` nodes, saved.
    SearchTree grow(int nodes)
    {
        SyntheticProposer proposer;
        SyntheticEvaluator evaluator;
        evaluator.coarse = true;
        SearchRun run(SearchTree("card", 7), TreeStore(file()), proposer, evaluator, fixedClockOptions(nodes));
        auto outcome = run.run();
        EXPECT_TRUE(outcome.ok()) << (outcome.ok() ? "" : outcome.error().toString());
        return run.tree();
    }

    nlohmann::json saved() const { return nlohmann::json::parse(readWholeFile(file()).value()); }

    ScratchDir m_dir;
};

TEST_F(TreeFile, RngStateIsSavedAndAHugeDrawCountResumesAtOnce)
{
    SearchTree tree = grow(12);
    EXPECT_FALSE(tree.rngState().empty());
    nlohmann::json j = saved();
    EXPECT_EQ(j["version"], 2);
    ASSERT_TRUE(j.contains("rng_state"));
    // A count no replay could reach: with the state saved, the count is only a record.
    j["rng_draws"] = 100000000000ull;
    writeBytes(file(), j.dump());
    const auto start = std::chrono::steady_clock::now();
    auto resumed = TreeStore(file()).openForRun("card", 7, true);
    ASSERT_TRUE(resumed.ok()) << resumed.error().toString();
    SyntheticProposer proposer;
    SyntheticEvaluator evaluator;
    SearchRun run(std::move(resumed.value()), TreeStore(file()), proposer, evaluator, fixedClockOptions(14));
    auto outcome = run.run();
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    EXPECT_EQ(run.tree().size(), 14u);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}

TEST_F(TreeFile, AnImplausibleDrawCountWithoutStateIsRefusedNamingTheFile)
{
    grow(5);
    nlohmann::json j = saved();
    j.erase("rng_state");
    j["version"] = 1;
    j["rng_draws"] = 100000000000ull;
    writeBytes(file(), j.dump());
    const auto start = std::chrono::steady_clock::now();
    auto loaded = TreeStore(file()).openForRun("card", 7, true);
    ASSERT_FALSE(loaded.ok());
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
    EXPECT_EQ(loaded.error().context, file().string() + " rng_draws");
    EXPECT_NE(loaded.error().message.find("implausible"), std::string::npos) << loaded.error().toString();

    // An old tree with a plausible count still resumes by replay.
    j["rng_draws"] = 3;
    writeBytes(file(), j.dump());
    auto old = TreeStore(file()).openForRun("card", 7, true);
    ASSERT_TRUE(old.ok()) << old.error().toString();
    EXPECT_TRUE(old->rngState().empty());
    EXPECT_EQ(old->rngDraws(), 3u);

    // A tree handed to a run directly is refused as well, not replayed for hours.
    SearchTree direct = old.value();
    direct.setRngDraws(100000000000ull);
    SyntheticProposer proposer;
    SyntheticEvaluator evaluator;
    SearchRun run(direct, TreeStore(file()), proposer, evaluator, fixedClockOptions(10));
    auto outcome = run.run();
    ASSERT_FALSE(outcome.ok());
    EXPECT_NE(outcome.error().message.find("no saved state"), std::string::npos);
}

TEST_F(TreeFile, NumbersOutOfRangeAreErrorsNamingTheFileNotExceptions)
{
    grow(4);
    const std::string good = readWholeFile(file()).value();
    struct Case {
        std::string bytes;
        std::string words;
    };
    nlohmann::json deep = saved();
    deep["nodes"][1]["depth"] = 1ll << 40;
    nlohmann::json visits = saved();
    visits["nodes"][0]["visits"] = 18446744073709551615ull;
    std::string overflow = good;
    const std::size_t at = overflow.find("\"value_sum\":");
    ASSERT_NE(at, std::string::npos);
    const std::size_t end = overflow.find_first_of(",}\n", at + 12);
    overflow.replace(at + 12, end - (at + 12), "1e400"); // a double cannot hold it
    const std::vector<Case> cases = {
        {deep.dump(), "nodes[1].depth"},
        {visits.dump(), "nodes[0].visits"},
        {overflow, "number overflow"},
    };
    for (const Case& c : cases) {
        writeBytes(file(), c.bytes);
        auto loaded = TreeStore(file()).load();
        ASSERT_FALSE(loaded.ok()) << c.words;
        EXPECT_EQ(loaded.error().code, ErrorCode::InvalidArgument);
        const std::string text = loaded.error().toString();
        EXPECT_NE(text.find(file().string()), std::string::npos) << text;
        EXPECT_NE(text.find(c.words), std::string::npos) << text;
        EXPECT_EQ(text.find("json.exception"), std::string::npos) << text;
    }
}

// Found by the search tree fuzzer (tests/fuzz): a string from the file echoed raw into the error,
// a deeply nested detail that overflowed the stack when the node was copied.
TEST_F(TreeFile, HostileContentGivesOneBoundedErrorLine)
{
    grow(3);
    nlohmann::json format = saved();
    format["format"] = "line one\nline two\x1b[31m" + std::string(5000, 'x');
    nlohmann::json status = saved();
    status["nodes"][1]["status"] = "\r\nfake: all good";
    nlohmann::json deepDetails = saved();
    nlohmann::json nested = nlohmann::json::object();
    for (int i = 0; i < 12000; ++i)
        nested = nlohmann::json{{"d", std::move(nested)}};
    // Written by hand: dumping so deep a value would itself recurse 12000 times.
    std::string deep = deepDetails.dump();
    const std::string key = "\"evaluation_details\":";
    const std::size_t at = deep.find(key);
    ASSERT_NE(at, std::string::npos);
    std::string tower;
    for (int i = 0; i < 12000; ++i)
        tower += "{\"d\":";
    tower += "{}" + std::string(12000, '}') + ",\"unused\":";
    deep.insert(at + key.size(), tower);
    struct Case {
        std::string bytes;
        std::string words;
    };
    const std::vector<Case> cases = {
        {format.dump(), "found 'line one\\x0aline two\\x1b[31mxxx"},
        {status.dump(), "unknown status '\\x0d\\x0afake: all good'"},
        {deep, "nested deeper than 64 levels"},
        {"", "the file is empty"},
    };
    for (const Case& c : cases) {
        writeBytes(file(), c.bytes);
        auto loaded = TreeStore(file()).load();
        ASSERT_FALSE(loaded.ok()) << c.words;
        const std::string text = loaded.error().toString();
        EXPECT_NE(text.find(c.words), std::string::npos) << text;
        EXPECT_EQ(text.find('\n'), std::string::npos) << text;
        EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
        EXPECT_LT(text.size(), 600u) << text;
    }
}

// The structure check counts children in one pass (it compared every node with every other one):
// a flat tree loads, and a list naming one child twice in place of another is still refused.
TEST_F(TreeFile, AWideTreeLoadsAndEachChildIsListedOnce)
{
    grow(2);
    nlohmann::json j = saved();
    const nlohmann::json child = j["nodes"][1];
    constexpr int kChildren = 5000;
    nlohmann::json children = nlohmann::json::array();
    nlohmann::json nodes = nlohmann::json::array({j["nodes"][0]});
    for (int i = 1; i <= kChildren; ++i) {
        nlohmann::json node = child;
        node["id"] = "n" + std::to_string(i);
        node["iteration"] = i;
        nodes.push_back(std::move(node));
        children.push_back("n" + std::to_string(i));
    }
    nodes[0]["children"] = children;
    j["nodes"] = std::move(nodes);
    writeBytes(file(), j.dump());
    auto loaded = TreeStore(file()).load();
    ASSERT_TRUE(loaded.ok()) << loaded.error().toString();
    EXPECT_EQ(loaded->size(), static_cast<std::size_t>(kChildren + 1));

    j["nodes"][0]["children"][1] = "n1";
    writeBytes(file(), j.dump());
    auto twice = TreeStore(file()).load();
    ASSERT_FALSE(twice.ok());
    EXPECT_NE(
        twice.error().toString().find("nodes[2].parent: damaged search tree: parent 'n0' does not list this node"),
        std::string::npos)
        << twice.error().toString();
}

TEST_F(TreeFile, SavingNeverThrowsOnTextThatIsNotUtf8)
{
    SearchTree tree("card", 1);
    ASSERT_TRUE(tree.addRoot({"__global__ void k() { /* \xff\xfe */ }\n", nlohmann::json::object()}, {}, 0).ok());
    Evaluation failed;
    failed.status = NodeStatus::FailedCompile;
    failed.failureReason = "error: bad byte \xc3\x28 in the source";
    failed.report = EvaluationReport::fromJson({{"compile", {{"log", "line 1: \xff\xff\xff"}}}});
    ASSERT_TRUE(tree.recordEvaluation("n0", failed).ok());
    TreeStore store(file());
    auto saved = store.save(tree);
    ASSERT_TRUE(saved.ok()) << saved.error().toString();
    auto loaded = store.load();
    ASSERT_TRUE(loaded.ok()) << loaded.error().toString();
    EXPECT_NE(loaded->root()->failureReason.find("\xef\xbf\xbd"),
              std::string::npos); // U+FFFD
    EXPECT_FALSE(firstInvalidUtf8(loaded->root()->candidate.source).has_value());
    // The tree's JSON dump for `kforge tree --json` does not throw either.
    EXPECT_NO_THROW(dumpSearchTreeJson(toJson(tree), 2));
}

TEST_F(TreeFile, LongLogsAndReasonsAreBoundedOnTheNode)
{
    SearchTree tree("card", 1);
    ASSERT_TRUE(tree.addRoot({"k", nlohmann::json::object()}, {}, 0).ok());
    Evaluation failed;
    failed.status = NodeStatus::FailedCompile;
    failed.failureReason = std::string(1024 * 1024, 'x'); // one endless line
    failed.report = EvaluationReport::fromJson({{"compile", {{"log", std::string(5 * 1024 * 1024, 'e')}}}});
    ASSERT_TRUE(tree.recordEvaluation("n0", failed).ok());
    EXPECT_LE(tree.root()->failureReason.size(), kMaxReasonBytes + 20);
    const std::string log = tree.root()->evaluation.compile->log;
    EXPECT_LE(log.size(), kMaxDetailStringBytes + 100);
    EXPECT_NE(log.find("[kforge: truncated: 5242880 bytes in all"), std::string::npos);
    ASSERT_TRUE(TreeStore(file()).save(tree).ok());
    EXPECT_LT(std::filesystem::file_size(file()), 100u * 1024);
}

TEST_F(TreeFile, AFailedRootFailsTheRunAndAResumeRetriesIt)
{
    SyntheticProposer proposer;
    // Every candidate crashes, as when the worker cannot start.
    struct Broken : SyntheticEvaluator {
        Result<Evaluation> evaluate(const Candidate&, const std::atomic<bool>&) override
        {
            Evaluation e;
            e.status = NodeStatus::Crashed;
            e.failureReason = "cannot start worker '/nonexistent': no such file";
            return e;
        }
    } broken;
    {
        SearchRun run(SearchTree("card", 7), TreeStore(file()), proposer, broken, fixedClockOptions(5));
        auto outcome = run.run();
        ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
        EXPECT_EQ(run.tree().size(), 1u);
        EXPECT_NE(outcome->failure.find("the root n0 is crashed: cannot start worker '/nonexistent'"),
                  std::string::npos)
            << outcome->failure;
    }
    // A plain run refuses the existing tree and says how to go on.
    auto plain = TreeStore(file()).openForRun("card", 7, false);
    ASSERT_FALSE(plain.ok());
    EXPECT_NE(plain.error().message.find("--restart"), std::string::npos);

    // --resume: the failed root goes on record and the run starts again.
    auto resumed = TreeStore(file()).openForRun("card", 7, true);
    ASSERT_TRUE(resumed.ok()) << resumed.error().toString();
    EXPECT_TRUE(resumed->empty());
    ASSERT_EQ(resumed->rootAttempts().size(), 1u);
    EXPECT_EQ(resumed->rootAttempts()[0].status, NodeStatus::Crashed);
    SyntheticEvaluator good;
    good.neverFail = true;
    SearchRun run(std::move(resumed.value()), TreeStore(file()), proposer, good, fixedClockOptions(5));
    auto outcome = run.run();
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    EXPECT_TRUE(outcome->failure.empty()) << outcome->failure;
    EXPECT_EQ(run.tree().size(), 5u);

    auto loaded = TreeStore(file()).load();
    ASSERT_TRUE(loaded.ok()) << loaded.error().toString();
    ASSERT_EQ(loaded->rootAttempts().size(), 1u);
    EXPECT_EQ(loaded->rootAttempts()[0].failureReason, "cannot start worker '/nonexistent': no such file");
    EXPECT_EQ(loaded->root()->status, NodeStatus::Passed);
    EXPECT_TRUE(*loaded == run.tree());

    // A damaged attempt record is named by its path.
    nlohmann::json j = saved();
    j["root_attempts"][0]["status"] = "passed";
    j["root_attempts"][0]["latency"] = {{"median_us", 1.0}, {"q1_us", 1.0}, {"q3_us", 1.0}};
    writeBytes(file(), j.dump());
    auto damaged = TreeStore(file()).load();
    ASSERT_FALSE(damaged.ok());
    EXPECT_EQ(damaged.error().context, file().string() + " root_attempts[0].status");
}

TEST_F(TreeFile, MoveAsideKeepsTheOldTree)
{
    grow(3);
    const std::string before = readWholeFile(file()).value();
    TreeStore store(file());
    auto first = store.moveAside();
    ASSERT_TRUE(first.ok()) << first.error().toString();
    EXPECT_FALSE(store.exists());
    EXPECT_EQ(readWholeFile(first.value()).value(), before);
    EXPECT_EQ(first->parent_path(), file().parent_path());
    EXPECT_TRUE(first->filename().string().starts_with("tree-"));
    // A second restart within the same second gets a name of its own.
    grow(3);
    auto second = store.moveAside();
    ASSERT_TRUE(second.ok()) << second.error().toString();
    EXPECT_NE(first.value(), second.value());
    EXPECT_TRUE(std::filesystem::exists(first.value()));
    EXPECT_EQ(store.moveAside().error().code, ErrorCode::NotFound);
}

} // namespace
} // namespace kforge::core
