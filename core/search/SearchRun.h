#pragma once
// The search loop for one card: select -> propose -> evaluate -> record -> backpropagate -> save,
// until the budget says stop (docs/search.md). Independent of how candidates are produced
// (Proposer) and judged (Evaluator).
//
// Thread: run() executes on one thread (any, but only one at a time; a second concurrent call
// fails with Internal). requestStop(), stopRequested(), iteration() and bestSpeedup() may be
// called from any thread while run() works. tree() may be read only from the thread that called
// run(), or after run() returned.
// Cancellation: the stop flag is polled before every iteration and handed to the proposer and
// the evaluator, which may abandon their call (ErrorCode::Cancelled); the candidate in flight is
// then dropped. The flag is sticky: a stopped SearchRun stays stopped.
// Observing: SearchRunOptions::onSaved sees the tree after every save, on the run() thread (the
// desktop app's live tree, core/engine/OptimizeDriver.h).
// Crash safety: the tree is saved after every node, so a kill loses at most the candidate in
// flight; load the file again (TreeStore::openForRun with resume) and run() continues with the
// same RNG state, so a resumed run with a deterministic proposer and evaluator ends with the same
// tree as an uninterrupted one.
// Storage: a proposal's LLM texts (prompts, replies) go to the store's blob directory before the
// node enters the tree (storeProvenanceTexts), so neither the tree in memory nor its file grows
// with them.
//
// Parallel search (more than one evaluator, e.g. one per GPU; docs/search.md, "Parallel search"):
// up to one candidate per evaluator is in flight. Selection and proposals stay on the run() thread;
// each dispatched candidate is added to the tree at once as a Pending node (so the proposer sees
// it and never proposes it twice, and selection puts a virtual loss on its branch, see Mcts.h), and
// evaluated on a thread of its own with an evaluator nobody else is using. Results are recorded,
// backpropagated and saved in the order they arrive. A candidate still in flight when the run
// stops (or is killed: TreeStore::openForRun on resume) stays in the tree as Abandoned. The root is
// evaluated alone. Arrival order depends on timing, so a parallel run is not reproducible from its
// seed; a run with one evaluator is.

#include "model/SearchTree.h"
#include "search/Evaluator.h"
#include "search/Mcts.h"
#include "search/Proposer.h"
#include "search/SearchBudget.h"
#include "search/TreeStore.h"
#include "util/Result.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kforge::core {

struct SearchRunOptions {
    SearchBudget budget;
    MctsParams mcts;
    /// Creation time stamped on new nodes (milliseconds since the Unix epoch). Default: system clock.
    std::function<std::int64_t()> nowUnixMs;
    /// Clock of the wall-time budget. Default: std::chrono::steady_clock::now.
    std::function<std::chrono::steady_clock::time_point()> steadyNow;
    /// Called on the run() thread after each node's final status is recorded and the tree saved
    /// with it (a node abandoned by a stop included), with the tree as saved: its Pending nodes are
    /// the candidates still in flight. The reference is valid only during the call; the run waits
    /// for the callback, so keep it short (copy the tree, hand it on). Null: nothing is called.
    std::function<void(const SearchTree&)> onSaved;
};

struct SearchOutcome {
    StopReason reason = StopReason::IterationLimit;
    int nodesAdded = 0;                // by this run() call
    std::string bestNodeId;            // bestNode(); empty if no node passed
    std::optional<double> bestSpeedup; // nodeSpeedup() of bestNodeId
    std::string note;                  // why nothing could be revised, for NothingToRevise
    /// Non-empty when the run produced nothing to build on: the tree is only a failed root
    /// ("the root n0 is crashed: cannot start worker '/x': ..."). Callers report the card's run as
    /// failed; a resume retries the root (TreeStore::openForRun).
    std::string failure;
};

class SearchRun {
public:
    /// `tree` may be empty (the proposer's root starts it) or loaded for a resume. `proposer` and
    /// `evaluator` must outlive the SearchRun.
    SearchRun(SearchTree tree, TreeStore store, Proposer& proposer, Evaluator& evaluator,
              SearchRunOptions options = {});
    /// Parallel search over `evaluators` (at least one; each used by one candidate at a time).
    SearchRun(SearchTree tree, TreeStore store, Proposer& proposer, std::vector<Evaluator*> evaluators,
              SearchRunOptions options = {});

    /// Runs until the budget, the stop flag or an error ends it. Errors: a proposer/evaluator error
    /// other than Cancelled, or a failed save (the file keeps the last good tree).
    Result<SearchOutcome> run();

    void requestStop() { m_stop.store(true); }
    bool stopRequested() const { return m_stop.load(); }
    /// Nodes in the tree (= completed iterations, root included).
    int iteration() const { return m_iteration.load(); }
    /// nodeSpeedup() of bestNode() so far; 0 until a passed node has one.
    double bestSpeedup() const { return m_bestSpeedup.load(); }
    /// Candidates evaluated by each evaluator so far (index as given to the constructor).
    std::vector<int> evaluationsPerEvaluator() const;

    const SearchTree& tree() const { return m_tree; }

private:
    Result<SearchOutcome> runSequential();
    Result<SearchOutcome> runParallel();
    /// The next candidate: the root's when the tree is empty, else a revision of the node MCTS
    /// selects (`parentId` is set to it). nullopt, with `nothingToRevise` set to why, when selection
    /// finds no node to revise.
    std::optional<Result<Proposal>> nextProposal(SearchRng& rng, std::optional<std::string>& parentId,
                                                 std::string& nothingToRevise);
    /// Adds the proposal to the tree as a Pending node (the root, or a child of `parentId`).
    Result<std::string> appendProposal(const std::optional<std::string>& parentId, Proposal proposal);
    Result<std::string> addNode(const std::optional<std::string>& parentId, Proposal proposal,
                                const Evaluation& evaluation);
    /// Records `evaluation` on the node (a broken one becomes Crashed with the reason).
    Result<void> recordOn(const std::string& id, const Evaluation& evaluation);
    void publishProgress();
    /// Records the RNG's draws and state on the tree (before each save).
    void saveRng(const SearchRng& rng);
    void finishOutcome(SearchOutcome& outcome) const;

    SearchTree m_tree;
    TreeStore m_store;
    Proposer& m_proposer;
    std::vector<Evaluator*> m_evaluators; // [0] is the sequential search's
    std::vector<std::atomic<int>> m_evaluationCounts;
    SearchRunOptions m_options;
    Mcts m_mcts;

    std::atomic<bool> m_stop{false};
    std::atomic<bool> m_running{false};
    std::atomic<int> m_iteration{0};
    std::atomic<double> m_bestSpeedup{0.0};
};

} // namespace kforge::core
