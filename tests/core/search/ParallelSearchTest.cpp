// Parallel search (several evaluators, candidates in flight at once) with synthetic workers that
// are real processes: each evaluator sends the candidate to its own child process (/bin/cat) and
// reads it back, as an evaluator talks to a kforge-worker. No GPU.

#include "SearchTestSupport.h"

#include "model/NodeRanking.h"
#include "model/SearchTreeJson.h"
#include "search/SearchRun.h"
#include "search/TreeStore.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fcntl.h>
#include <mutex>
#include <set>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace kforge::core {
namespace {

using test::fixedClockOptions;
using test::ScratchDir;
using test::SyntheticEvaluator;
using test::SyntheticProposer;

// What every evaluator of one run saw, shared between their threads.
struct Ledger {
    std::mutex mutex;
    std::set<std::string> inFlight;      // candidate sources being evaluated now
    std::vector<std::string> evaluated;  // every source, once per evaluation
    std::vector<std::string> duplicates; // a source evaluated while the same one was in flight
    int concurrent = 0;
    int maxConcurrent = 0;
};

// One synthetic worker process per evaluator. A dead process makes the candidate in flight Crashed
// (as a worker that dies running a kernel does) and is started again for the next candidate.
class ProcessEvaluator : public Evaluator {
public:
    explicit ProcessEvaluator(Ledger& ledger) : m_ledger(ledger) {}
    ~ProcessEvaluator() override { stopChild(); }

    pid_t pid() const { return m_pid.load(); }
    int restarts() const { return m_restarts; }

    Result<Evaluation> evaluate(const Candidate& candidate, const std::atomic<bool>& stop) override
    {
        {
            std::lock_guard lock(m_ledger.mutex);
            if (!m_ledger.inFlight.insert(candidate.source).second)
                m_ledger.duplicates.push_back(candidate.source);
            m_ledger.evaluated.push_back(candidate.source);
            m_ledger.maxConcurrent = std::max(m_ledger.maxConcurrent, ++m_ledger.concurrent);
        }
        Result<Evaluation> result = roundTrip(candidate, stop);
        std::lock_guard lock(m_ledger.mutex);
        m_ledger.inFlight.erase(candidate.source);
        --m_ledger.concurrent;
        return result;
    }

private:
    Result<Evaluation> roundTrip(const Candidate& candidate, const std::atomic<bool>& stop)
    {
        if (m_pid.load() <= 0 && !startChild())
            return makeError(ErrorCode::Internal, "cannot start the synthetic worker");
        std::this_thread::sleep_for(std::chrono::milliseconds(15)); // the "GPU" time: calls overlap
        const std::string line = candidate.source + "\n";
        std::string echoed;
        bool alive = ::write(m_toChild, line.data(), line.size()) == static_cast<ssize_t>(line.size());
        char c = 0;
        while (alive && echoed.size() < line.size()) {
            if (::read(m_fromChild, &c, 1) != 1)
                alive = false;
            else
                echoed.push_back(c);
        }
        if (!alive || echoed != line) {
            stopChild();
            ++m_restarts; // the next candidate starts a fresh one
            Evaluation crashed;
            crashed.status = NodeStatus::Crashed;
            crashed.failureReason = "the synthetic worker died";
            return crashed;
        }
        (void)stop;
        return m_synthetic.evaluate(candidate, stop); // the latency a hash of the source gives
    }

    bool startChild()
    {
        int in[2], out[2];
        if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
            return false;
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
        posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
        char cat[] = "/bin/cat";
        char* argv[] = {cat, nullptr};
        pid_t pid = 0;
        const int rc = ::posix_spawn(&pid, cat, &actions, nullptr, argv, environ);
        posix_spawn_file_actions_destroy(&actions);
        ::close(in[0]);
        ::close(out[1]);
        if (rc != 0) {
            ::close(in[1]);
            ::close(out[0]);
            return false;
        }
        m_toChild = in[1];
        m_fromChild = out[0];
        m_pid.store(pid);
        return true;
    }

    void stopChild()
    {
        const pid_t pid = m_pid.exchange(0);
        if (pid <= 0)
            return;
        ::close(m_toChild);
        ::close(m_fromChild);
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }

    Ledger& m_ledger;
    SyntheticEvaluator m_synthetic;
    std::atomic<pid_t> m_pid{0};
    int m_toChild = -1;
    int m_fromChild = -1;
    int m_restarts = 0;
};

// `count` synthetic workers sharing one ledger, and the evaluator list SearchRun takes.
struct ProcessPool {
    ProcessPool(Ledger& ledger, int count)
    {
        for (int i = 0; i < count; ++i) {
            workers.push_back(std::make_unique<ProcessEvaluator>(ledger));
            evaluators.push_back(workers.back().get());
        }
    }
    std::vector<std::unique_ptr<ProcessEvaluator>> workers;
    std::vector<Evaluator*> evaluators;
};

class ParallelSearch : public ::testing::Test {
protected:
    void SetUp() override { m_previousPipe = std::signal(SIGPIPE, SIG_IGN); } // a dead child's pipe
    void TearDown() override { std::signal(SIGPIPE, m_previousPipe); }

private:
    void (*m_previousPipe)(int) = nullptr;
};

TEST_F(ParallelSearch, KeepsEveryWorkerBusyWithDistinctCandidatesAndAccountsForEveryResult)
{
    ScratchDir dir;
    Ledger ledger;
    ProcessPool pool(ledger, 3);
    const std::vector<Evaluator*>& evaluators = pool.evaluators;
    SyntheticProposer proposer;
    proposer.failEvery = 9;
    const std::filesystem::path file = dir.path() / "tree.json";
    SearchRun run(SearchTree("card", 3), TreeStore(file), proposer, evaluators, fixedClockOptions(40));
    auto outcome = run.run();
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    const SearchTree& tree = run.tree();

    EXPECT_EQ(outcome->reason, StopReason::IterationLimit);
    ASSERT_EQ(tree.size(), 40u);
    EXPECT_EQ(outcome->nodesAdded, 40);
    EXPECT_TRUE(ledger.duplicates.empty()) << "evaluated twice at once: " << ledger.duplicates.front();
    EXPECT_EQ(ledger.maxConcurrent, 3); // every worker had a candidate at some point
    // Every node is final, every evaluated candidate is one node, nothing evaluated twice.
    std::set<std::string> sources;
    int failedProposals = 0;
    for (const SearchNode& node : tree.nodes()) {
        EXPECT_FALSE(isInFlight(node.status)) << node.id;
        EXPECT_NE(node.status, NodeStatus::Abandoned) << node.id;
        EXPECT_TRUE(sources.insert(node.candidate.source).second) << "proposed twice: " << node.candidate.source;
        failedProposals += node.status == NodeStatus::FailedProposal;
    }
    EXPECT_EQ(ledger.evaluated.size() + failedProposals, tree.size());
    int counted = 0;
    for (int n : run.evaluationsPerEvaluator()) {
        EXPECT_GT(n, 0);
        counted += n;
    }
    EXPECT_EQ(counted, static_cast<int>(ledger.evaluated.size()));
    // Every node but the root was backpropagated once through the root (a failed proposal credits
    // its parent's reward along the same path), and the root's own evaluation once.
    EXPECT_EQ(tree.root()->visits, 40);
    // The file holds the final tree.
    auto saved = TreeStore(file).load();
    ASSERT_TRUE(saved.ok());
    EXPECT_EQ(toJson(saved.value()).dump(), toJson(tree).dump());
}

TEST_F(ParallelSearch, AKilledWorkerCostsOneCandidateAndTheRunCompletes)
{
    ScratchDir dir;
    Ledger ledger;
    ProcessPool pool(ledger, 3);
    auto& workers = pool.workers;
    const std::vector<Evaluator*>& evaluators = pool.evaluators;
    SyntheticProposer proposer;
    SearchRun run(SearchTree("card", 5), TreeStore(dir.path() / "tree.json"), proposer, evaluators,
                  fixedClockOptions(60));
    std::optional<Result<SearchOutcome>> outcome;
    std::thread searcher([&] { outcome.emplace(run.run()); });
    // Kill worker 1's process once the search is under way.
    pid_t victim = 0;
    for (int i = 0; i < 2000 && (victim = workers[1]->pid()) <= 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_GT(victim, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    ::kill(victim, SIGKILL);
    searcher.join();

    ASSERT_TRUE(outcome->ok()) << outcome->error().toString();
    EXPECT_EQ((*outcome)->reason, StopReason::IterationLimit);
    const SearchTree& tree = run.tree();
    ASSERT_EQ(tree.size(), 60u);
    int crashed = 0;
    for (const SearchNode& node : tree.nodes()) {
        EXPECT_FALSE(isInFlight(node.status)) << node.id;
        crashed += node.status == NodeStatus::Crashed;
    }
    EXPECT_EQ(crashed, 1);
    EXPECT_EQ(workers[1]->restarts(), 1);
    EXPECT_NE(workers[1]->pid(), victim); // started again, and used after the kill
    EXPECT_GT(run.evaluationsPerEvaluator()[1], 1);
}

TEST_F(ParallelSearch, StoppingLeavesTheCandidatesInFlightAbandonedAndResumeContinues)
{
    ScratchDir dir;
    const std::filesystem::path file = dir.path() / "tree.json";
    std::vector<std::unique_ptr<SyntheticEvaluator>> workers;
    std::vector<Evaluator*> evaluators;
    SyntheticProposer proposer;
    std::atomic<int> total{0};
    SearchRun* active = nullptr;
    for (int i = 0; i < 2; ++i) {
        workers.push_back(std::make_unique<SyntheticEvaluator>());
        workers.back()->neverFail = true;
        // The 10th evaluation asks the run to stop and reports that it was cancelled, as a real
        // evaluator abandons its call when the stop flag is set; the other in flight finishes.
        workers.back()->hook = [&total, &active](int) -> Result<Evaluation> {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            if (++total == 10) {
                active->requestStop();
                return makeError(ErrorCode::Cancelled, "stopped");
            }
            return Evaluation{};
        };
        evaluators.push_back(workers.back().get());
    }
    // hook's Evaluation{} is not an error: the synthetic evaluation goes on.
    {
        SearchRun run(SearchTree("card", 2), TreeStore(file), proposer, evaluators, fixedClockOptions(50));
        active = &run;
        auto outcome = run.run();
        ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
        EXPECT_EQ(outcome->reason, StopReason::Requested);
        int abandoned = 0;
        for (const SearchNode& node : run.tree().nodes()) {
            EXPECT_FALSE(isInFlight(node.status));
            abandoned += node.status == NodeStatus::Abandoned;
        }
        EXPECT_EQ(abandoned, 1);
        EXPECT_LT(run.tree().size(), 50u);
    }
    // A tree saved with a candidate still in flight (a killed run) resumes with it abandoned.
    auto saved = TreeStore(file).load();
    ASSERT_TRUE(saved.ok());
    SearchTree withPending = saved.value();
    const std::string parent = bestNode(withPending)->id;
    auto pending = withPending.addChild(parent, Candidate{"in flight", nlohmann::json::object()}, Provenance{}, 0);
    ASSERT_TRUE(pending.ok());
    ASSERT_TRUE(TreeStore(file).save(withPending).ok());
    auto resumed = TreeStore(file).openForRun("card", 2, true);
    ASSERT_TRUE(resumed.ok()) << resumed.error().toString();
    const SearchNode* node = resumed->find(*pending);
    ASSERT_NE(node, nullptr);
    EXPECT_EQ(node->status, NodeStatus::Abandoned);
    EXPECT_NE(node->failureReason.find("interrupted"), std::string::npos);
    total = -1000; // no more stops
    SearchRun again(std::move(resumed.value()), TreeStore(file), proposer, evaluators, fixedClockOptions(50));
    auto outcome = again.run();
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    EXPECT_EQ(again.tree().size(), 50u);
}

} // namespace
} // namespace kforge::core
