#include "search/SearchRun.h"

#include "model/NodeRanking.h"
#include "search/ProvenanceTexts.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace kforge::core {
namespace {

// How many likely next candidates the proposer is asked for before each evaluation: about what a
// few compile threads finish while the GPU validates and times one candidate.
constexpr std::size_t kCompileAheadCandidates = 6;

// Clears the running flag on every exit path of run().
class RunningGuard {
public:
    explicit RunningGuard(std::atomic<bool>& flag) : m_flag(flag) {}
    ~RunningGuard() { m_flag.store(false); }
    RunningGuard(const RunningGuard&) = delete;
    RunningGuard& operator=(const RunningGuard&) = delete;

private:
    std::atomic<bool>& m_flag;
};

// The tree's RNG as saved: its state when recorded, else its draws replayed from the seed (trees
// written before the state was saved; run() refused counts above SearchRng::kMaxReplayDraws).
SearchRng restoreRng(const SearchTree& tree)
{
    if (!tree.rngState().empty())
        if (std::optional<SearchRng> rng = SearchRng::restore(tree.rngState(), tree.rngDraws()))
            return *rng;
    return SearchRng(tree.seed(), tree.rngDraws());
}

// A proposer's failure to produce a candidate, as the node's evaluation.
Evaluation failedProposal(const Proposal& proposal)
{
    Evaluation failed;
    failed.status = NodeStatus::FailedProposal;
    failed.failureReason = proposal.failureReason;
    return failed;
}

} // namespace

SearchRun::SearchRun(SearchTree tree, TreeStore store, Proposer& proposer, Evaluator& evaluator,
                     SearchRunOptions options)
    : SearchRun(std::move(tree), std::move(store), proposer, std::vector<Evaluator*>{&evaluator}, std::move(options))
{
}

SearchRun::SearchRun(SearchTree tree, TreeStore store, Proposer& proposer, std::vector<Evaluator*> evaluators,
                     SearchRunOptions options)
    : m_tree(std::move(tree)), m_store(std::move(store)), m_proposer(proposer), m_evaluators(std::move(evaluators)),
      m_evaluationCounts(m_evaluators.size()), m_options(std::move(options)), m_mcts(m_options.mcts)
{
    if (!m_options.nowUnixMs) {
        m_options.nowUnixMs = [] {
            return std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                .count();
        };
    }
    if (!m_options.steadyNow)
        m_options.steadyNow = [] { return std::chrono::steady_clock::now(); };
    publishProgress();
}

void SearchRun::publishProgress()
{
    m_iteration.store(static_cast<int>(m_tree.size()));
    const SearchNode* best = bestNode(m_tree);
    m_bestSpeedup.store(best ? nodeSpeedup(*best).value_or(0.0) : 0.0);
}

std::vector<int> SearchRun::evaluationsPerEvaluator() const
{
    std::vector<int> counts;
    for (const std::atomic<int>& count : m_evaluationCounts)
        counts.push_back(count.load());
    return counts;
}

std::optional<Result<Proposal>> SearchRun::nextProposal(SearchRng& rng, std::optional<std::string>& parentId,
                                                        std::string& nothingToRevise)
{
    parentId.reset();
    if (m_tree.empty())
        return m_proposer.proposeRoot(m_tree, m_stop);
    auto selected = m_mcts.select(m_tree, rng, m_proposer.exhaustedNodes(m_tree));
    if (!selected) {
        nothingToRevise = selected.error().message;
        return std::nullopt;
    }
    parentId = selected.value();
    return m_proposer.propose(m_tree, *m_tree.find(*parentId), m_stop);
}

Result<std::string> SearchRun::appendProposal(const std::optional<std::string>& parentId, Proposal proposal)
{
    // Prompts and replies go to the blob store, so the tree file keeps references only.
    if (auto stored = storeProvenanceTexts(proposal.provenance.details, m_store.blobs()); !stored)
        return stored.error();
    const std::int64_t now = m_options.nowUnixMs();
    return parentId ? m_tree.addChild(*parentId, std::move(proposal.candidate), std::move(proposal.provenance), now)
                    : m_tree.addRoot(std::move(proposal.candidate), std::move(proposal.provenance), now);
}

Result<std::string> SearchRun::addNode(const std::optional<std::string>& parentId, Proposal proposal,
                                       const Evaluation& evaluation)
{
    Result<std::string> id = appendProposal(parentId, std::move(proposal));
    if (!id)
        return id;
    if (auto recorded = recordOn(*id, evaluation); !recorded)
        return recorded.error();
    return id;
}

Result<void> SearchRun::recordOn(const std::string& id, const Evaluation& evaluation)
{
    if (auto recorded = m_tree.recordEvaluation(id, evaluation); !recorded) {
        // A broken evaluation is the candidate's failure, not the run's: keep the node, say why.
        Evaluation invalid;
        invalid.status = NodeStatus::Crashed;
        invalid.failureReason = "the evaluator returned an invalid result: " + recorded.error().message;
        invalid.report = evaluation.report;
        if (auto fallback = m_tree.recordEvaluation(id, invalid); !fallback)
            return fallback.error();
    }
    return {};
}

void SearchRun::saveRng(const SearchRng& rng)
{
    m_tree.setRngDraws(rng.draws());
    m_tree.setRngState(rng.state());
}

void SearchRun::finishOutcome(SearchOutcome& outcome) const
{
    // A root abandoned because the user stopped the run is not the run's failure (a resume
    // retries it all the same).
    if (m_tree.rootFailed() && !(m_tree.root()->status == NodeStatus::Abandoned && stopRequested())) {
        const SearchNode& root = *m_tree.root();
        outcome.failure = "the root " + root.id + " is " + nodeStatusName(root.status) + ": " + root.failureReason;
    }
    if (const SearchNode* best = bestNode(m_tree)) {
        outcome.bestNodeId = best->id;
        outcome.bestSpeedup = nodeSpeedup(*best);
    }
}

Result<SearchOutcome> SearchRun::run()
{
    if (m_running.exchange(true))
        return makeError(ErrorCode::Internal, "this search is already running", m_tree.cardId());
    RunningGuard guard(m_running);
    if (m_evaluators.empty())
        return makeError(ErrorCode::InvalidArgument, "a search needs at least one evaluator", m_tree.cardId());
    if (m_tree.rngState().empty() && m_tree.rngDraws() > SearchRng::kMaxReplayDraws)
        return makeError(ErrorCode::InvalidArgument,
                         "cannot restore the search's RNG: " + std::to_string(m_tree.rngDraws()) +
                             " draws to replay and no saved state",
                         m_tree.cardId());
    return m_evaluators.size() == 1 ? runSequential() : runParallel();
}

Result<SearchOutcome> SearchRun::runSequential()
{
    Evaluator& evaluator = *m_evaluators.front();
    const auto start = m_options.steadyNow();
    SearchRng rng = restoreRng(m_tree);
    SearchOutcome outcome;

    for (;;) {
        const double elapsedS = std::chrono::duration<double>(m_options.steadyNow() - start).count();
        if (auto reason = m_options.budget.shouldStop(m_tree, elapsedS, m_stop.load())) {
            outcome.reason = *reason;
            break;
        }

        std::optional<std::string> parentId;
        std::optional<Result<Proposal>> next = nextProposal(rng, parentId, outcome.note);
        if (!next) {
            outcome.reason = StopReason::NothingToRevise;
            break;
        }
        Result<Proposal>& proposal = *next;
        if (!proposal) {
            if (proposal.error().code == ErrorCode::Cancelled) {
                outcome.reason = StopReason::Requested;
                break;
            }
            return proposal.error();
        }

        Evaluation evaluation;
        if (!proposal->failureReason.empty()) {
            evaluation = failedProposal(proposal.value());
        } else {
            // While this candidate compiles and runs on the GPU, the ones likely to follow compile
            // on other threads (docs/search.md, "Compiling ahead").
            evaluator.prepareAhead(m_proposer.likelyNext(m_tree, proposal.value(), kCompileAheadCandidates));
            evaluator.noteBestSpeedups(bestSpeedupByGpu(m_tree));
            auto evaluated = evaluator.evaluate(proposal->candidate, m_stop);
            m_evaluationCounts[0].fetch_add(1);
            if (!evaluated) {
                if (evaluated.error().code == ErrorCode::Cancelled) {
                    outcome.reason = StopReason::Requested;
                    break;
                }
                return evaluated.error();
            }
            evaluation = std::move(evaluated.value());
        }

        auto id = addNode(parentId, std::move(proposal.value()), evaluation);
        if (!id)
            return id.error();
        if (auto propagated = m_mcts.backpropagate(m_tree, *id); !propagated)
            return propagated.error();
        saveRng(rng);
        if (auto saved = m_store.save(m_tree); !saved)
            return saved.error();
        ++outcome.nodesAdded;
        publishProgress();
        if (m_options.onSaved)
            m_options.onSaved(m_tree);
    }

    finishOutcome(outcome);
    return outcome;
}

Result<SearchOutcome> SearchRun::runParallel()
{
    struct Finished {
        std::size_t slot;
        std::string nodeId;
        Result<Evaluation> result;
    };
    std::mutex mutex;
    std::condition_variable arrived;
    std::deque<Finished> finished;
    const std::size_t slots = m_evaluators.size();
    std::vector<std::thread> threads(slots);
    std::vector<bool> busy(slots, false);
    std::size_t inFlight = 0;

    const auto start = m_options.steadyNow();
    SearchRng rng = restoreRng(m_tree);
    SearchOutcome outcome;
    std::optional<Error> failure; // ends the run once nothing is in flight
    bool dispatching = true;

    // The bookkeeping after a node's final status is known: backpropagate (not for abandoned
    // candidates, which were never judged), remember the RNG, save, publish.
    auto complete = [&](const std::string& id, bool judged) -> Result<void> {
        if (judged)
            if (auto propagated = m_mcts.backpropagate(m_tree, id); !propagated)
                return propagated.error();
        saveRng(rng);
        if (auto saved = m_store.save(m_tree); !saved)
            return saved.error();
        ++outcome.nodesAdded;
        publishProgress();
        if (m_options.onSaved)
            m_options.onSaved(m_tree);
        return {};
    };
    auto stopDispatching = [&](std::optional<StopReason> reason, std::optional<Error> error = std::nullopt) {
        if (!dispatching)
            return;
        dispatching = false;
        if (reason)
            outcome.reason = *reason;
        if (error)
            failure = std::move(error);
    };

    for (;;) {
        while (dispatching && inFlight < slots) {
            const double elapsedS = std::chrono::duration<double>(m_options.steadyNow() - start).count();
            if (auto reason = m_options.budget.shouldStop(m_tree, elapsedS, m_stop.load())) {
                stopDispatching(*reason);
                break;
            }
            if (const SearchNode* root = m_tree.root(); root && isInFlight(root->status))
                break; // the root is evaluated alone
            std::optional<std::string> parentId;
            std::string nothingToRevise;
            std::optional<Result<Proposal>> next = nextProposal(rng, parentId, nothingToRevise);
            if (!next) {
                if (inFlight > 0)
                    break; // results still to come may make something revisable
                outcome.note = nothingToRevise;
                stopDispatching(StopReason::NothingToRevise);
                break;
            }
            Result<Proposal>& proposal = *next;
            if (!proposal) {
                if (proposal.error().code == ErrorCode::Cancelled)
                    stopDispatching(StopReason::Requested);
                else
                    stopDispatching(std::nullopt, proposal.error());
                break;
            }
            if (!proposal->failureReason.empty()) {
                const Evaluation failed = failedProposal(proposal.value());
                auto id = addNode(parentId, std::move(proposal.value()), failed);
                if (!id) {
                    stopDispatching(std::nullopt, id.error());
                    break;
                }
                if (auto done = complete(*id, true); !done) {
                    stopDispatching(std::nullopt, done.error());
                    break;
                }
                continue;
            }
            std::size_t slot = 0;
            while (busy[slot])
                ++slot;
            m_evaluators[slot]->prepareAhead(m_proposer.likelyNext(m_tree, proposal.value(), kCompileAheadCandidates));
            m_evaluators[slot]->noteBestSpeedups(bestSpeedupByGpu(m_tree));
            Candidate candidate = proposal->candidate;
            Result<std::string> id = appendProposal(parentId, std::move(proposal.value()));
            if (!id) {
                stopDispatching(std::nullopt, id.error());
                break;
            }
            busy[slot] = true;
            ++inFlight;
            publishProgress();
            threads[slot] = std::thread(
                [this, slot, nodeId = *id, candidate = std::move(candidate), &mutex, &arrived, &finished]() {
                    Result<Evaluation> result = m_evaluators[slot]->evaluate(candidate, m_stop);
                    m_evaluationCounts[slot].fetch_add(1);
                    std::lock_guard lock(mutex);
                    finished.push_back(Finished{slot, nodeId, std::move(result)});
                    arrived.notify_one();
                });
        }
        if (inFlight == 0)
            break;

        std::unique_lock lock(mutex);
        arrived.wait(lock, [&] { return !finished.empty(); });
        Finished done = std::move(finished.front());
        finished.pop_front();
        lock.unlock();
        threads[done.slot].join();
        busy[done.slot] = false;
        --inFlight;

        Evaluation evaluation;
        bool judged = true;
        if (done.result) {
            evaluation = std::move(done.result.value());
        } else {
            // Not judged: stopped mid-evaluation, or the evaluator could not run it.
            judged = false;
            evaluation.status = NodeStatus::Abandoned;
            evaluation.failureReason = done.result.error().code == ErrorCode::Cancelled
                ? "not evaluated: the search was stopped while it was in flight"
                : "not evaluated: " + done.result.error().toString();
            if (done.result.error().code == ErrorCode::Cancelled)
                stopDispatching(StopReason::Requested);
            else
                stopDispatching(std::nullopt, done.result.error());
        }
        if (auto recorded = recordOn(done.nodeId, evaluation); !recorded) {
            stopDispatching(std::nullopt, recorded.error());
            continue;
        }
        if (auto completed = complete(done.nodeId, judged); !completed)
            stopDispatching(std::nullopt, completed.error());
    }
    if (failure)
        return *failure;
    finishOutcome(outcome);
    return outcome;
}

} // namespace kforge::core
