#include "search/SearchRun.h"

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

} // namespace

SearchRun::SearchRun(SearchTree tree, TreeStore store, Proposer& proposer, Evaluator& evaluator,
                     SearchRunOptions options)
    : m_tree(std::move(tree)),
      m_store(std::move(store)),
      m_proposer(proposer),
      m_evaluator(evaluator),
      m_options(std::move(options)),
      m_mcts(m_options.mcts)
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
    const SearchNode* best = m_tree.bestPassed();
    m_bestSpeedup.store(best && best->speedup ? *best->speedup : 0.0);
}

Result<std::string> SearchRun::addNode(const std::optional<std::string>& parentId, Proposal proposal,
                                       const Evaluation& evaluation)
{
    const std::int64_t now = m_options.nowUnixMs();
    Result<std::string> id = parentId
        ? m_tree.addChild(*parentId, std::move(proposal.candidate), std::move(proposal.provenance), now)
        : m_tree.addRoot(std::move(proposal.candidate), std::move(proposal.provenance), now);
    if (!id)
        return id;
    if (auto recorded = m_tree.recordEvaluation(*id, evaluation); !recorded) {
        // A broken evaluation is the candidate's failure, not the run's: keep the node, say why.
        Evaluation invalid;
        invalid.status = NodeStatus::Crashed;
        invalid.failureReason = "the evaluator returned an invalid result: " + recorded.error().message;
        invalid.details = evaluation.details;
        if (auto fallback = m_tree.recordEvaluation(*id, invalid); !fallback)
            return fallback.error();
    }
    return id;
}

Result<SearchOutcome> SearchRun::run()
{
    if (m_running.exchange(true))
        return makeError(ErrorCode::Internal, "this search is already running", m_tree.cardId());
    RunningGuard guard(m_running);

    const auto start = m_options.steadyNow();
    SearchRng rng(m_tree.seed(), m_tree.rngDraws());
    SearchOutcome outcome;

    for (;;) {
        const double elapsedS = std::chrono::duration<double>(m_options.steadyNow() - start).count();
        if (auto reason = m_options.budget.shouldStop(m_tree, elapsedS, m_stop.load())) {
            outcome.reason = *reason;
            break;
        }

        std::optional<std::string> parentId;
        Result<Proposal> proposal = makeError(ErrorCode::Internal, "no proposal");
        if (m_tree.empty()) {
            proposal = m_proposer.proposeRoot(m_tree, m_stop);
        } else {
            auto selected = m_mcts.select(m_tree, rng);
            if (!selected) {
                outcome.reason = StopReason::NothingToRevise;
                outcome.note = selected.error().message;
                break;
            }
            parentId = selected.value();
            proposal = m_proposer.propose(m_tree, *m_tree.find(*parentId), m_stop);
        }
        if (!proposal) {
            if (proposal.error().code == ErrorCode::Cancelled) {
                outcome.reason = StopReason::Requested;
                break;
            }
            return proposal.error();
        }

        Evaluation evaluation;
        if (!proposal->failureReason.empty()) {
            evaluation.status = NodeStatus::FailedProposal;
            evaluation.failureReason = proposal->failureReason;
        } else {
            // While this candidate compiles and runs on the GPU, the ones likely to follow compile
            // on other threads (docs/search.md, "Compiling ahead").
            m_evaluator.prepareAhead(m_proposer.likelyNext(m_tree, proposal.value(), kCompileAheadCandidates));
            auto evaluated = m_evaluator.evaluate(proposal->candidate, m_stop);
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
        m_tree.setRngDraws(rng.draws());
        if (auto saved = m_store.save(m_tree); !saved)
            return saved.error();
        ++outcome.nodesAdded;
        publishProgress();
    }

    if (const SearchNode* best = m_tree.bestPassed()) {
        outcome.bestNodeId = best->id;
        outcome.bestSpeedup = best->speedup;
    }
    return outcome;
}

} // namespace kforge::core
