#pragma once
// The optimize job (docs/search.md): searches a list of cards one after the other, each with its
// own SearchRun over the card's saved tree, the proposer chosen by the request and one evaluator
// per GPU slot. `kforge optimize` and the desktop app's Optimize both run it; they only parse their
// input into an OptimizeRequest and show the events and the summary.
//
// Contracts:
// - run() blocks; call it on a thread of the caller's choosing (not a GUI thread). The events are
//   called on that thread (OptimizeEvents: also a snapshot of each card's tree after every saved
//   node, for a live view without reading the tree file). requestStop() and progress() may be
//   called from any thread meanwhile.
// - run() holds the project's writer lock (project/ProjectLock.h) for its whole duration; another
//   writer makes it fail at once, naming the holder.
// - A card whose search fails (an error, or a tree that is only a failed root) does not stop the
//   others; it is reported in its CardOutcome. A tree that cannot be opened or moved aside stops the
//   job: run() returns that error (trees already searched keep every node).
// - requestStop(): the card in flight ends after its candidates in flight; no further card starts
//   and the summary lists them as not searched. Every tree keeps every node saved before the stop.

#include "llm_proposer/LlmUsage.h"
#include "model/OperatorCard.h"
#include "model/SearchNode.h"
#include "model/SearchTree.h"
#include "protocol/GpuSelection.h"
#include "search/Evaluator.h"
#include "search/Proposer.h"
#include "search/SearchBudget.h"
#include "search/SearchRun.h"
#include "search/TreeStore.h"
#include "util/Result.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kforge::core {

class LlmClient;

/// What to do with a card's saved tree.
enum class SavedTreeMode {
    Resume,  // continue it (a new tree where there is none)
    Refuse,  // an error when one exists (kforge optimize without --resume or --restart)
    Restart, // keep it under a dated name (TreeStore::moveAside) and start a new one
};

struct OptimizeRequest {
    std::filesystem::path projectDir;
    std::vector<OperatorCard> cards; // searched in this order
    SearchBudget budget;
    std::uint64_t seed = 0;
    SavedTreeMode savedTrees = SavedTreeMode::Resume;
    std::chrono::milliseconds evaluateTimeout{60000}; // per candidate: its compile, and its evaluation
    std::string workerExecutable;                     // empty: workerPath(nullopt)
    std::vector<GpuSlot> gpus;                        // resolveGpus(); empty: one worker as is
    std::shared_ptr<LlmClient> llmClient;             // set: the LLM proposer, else the built-in one
    /// Test seams. Null: the proposer above, and SearchWorkers' evaluators (kforge-worker).
    std::function<std::unique_ptr<Proposer>(const OperatorCard&)> makeProposer;
    std::function<std::unique_ptr<Evaluator>(const OperatorCard&)> makeEvaluator;
};

/// How one card's search ended.
struct CardOutcome {
    std::string cardId;
    std::string label; // "<first 8 of the id> <op>", as every front end names a card
    /// Empty when the search ran; else why it could not (SearchRun::run's error). The other fields
    /// but `label` and `seconds` are then meaningless.
    std::string error;
    std::size_t nodes = 0;
    StopReason reason = StopReason::IterationLimit;
    std::optional<SearchNode> best;       // the tree's best node (bestNode, model/NodeRanking.h), if any
    std::string failure;                  // the tree is only a failed root (a resume retries it)
    std::string note;                     // why nothing is left to revise, for NothingToRevise
    std::vector<int> candidatesPerWorker; // when more than one worker evaluated
    double seconds = 0;
    std::optional<LlmUsage> llmUsage; // with the LLM proposer
    /// No candidate was measured because the worker has no GPU: candidates were generated and
    /// compiled only.
    bool compileOnly = false;

    bool failed() const { return !error.empty() || !failure.empty(); }
    /// Why the card failed (error or failure); empty when it did not.
    const std::string& failureReason() const { return error.empty() ? failure : error; }
};

struct OptimizeSummary {
    std::vector<CardOutcome> cards;
    std::vector<std::string> notSearched; // labels of cards a stop left unsearched
    bool stopped = false;

    std::size_t failedCount() const;
    /// "<label> (<why>); ..." of the failed cards.
    std::string failureList() const;
};

struct OptimizeProgress {
    std::string cardId; // empty between cards
    int cardIndex = 0;
    int cardCount = 0;
    int iteration = 0;      // nodes in the current card's tree
    double bestSpeedup = 0; // of the current card, 0 until one is measured
};

/// What a front end hears while run() works. Every event is called on run()'s thread and the
/// search waits for it: keep them short (hand the value on to another thread). Null events are
/// skipped, and cost nothing: the tree is copied for treeSaved only when it is set.
struct OptimizeEvents {
    /// A line worth showing as the job goes ("<label>: retrying the root ...", "<label>: the old
    /// search tree is kept as <path>").
    std::function<void(const std::string&)> note;
    /// A card's search ended (also when it failed).
    std::function<void(const CardOutcome&)> cardFinished;
    /// A node of card `cardId` was recorded and its tree saved (after every node, as the tree file
    /// changes): `tree` is a copy of the tree as saved, made once per event on the search thread
    /// and never changed afterwards, so it may be shared with any thread. Pending nodes in it are
    /// candidates still in flight.
    std::function<void(const std::string& cardId, std::shared_ptr<const SearchTree> tree)> treeSaved;
    /// progress() changed: a card's search starts, a node was saved (right after treeSaved), a
    /// card's search ended (cardId empty again).
    std::function<void(const OptimizeProgress&)> progressChanged;
};

class OptimizeDriver {
public:
    explicit OptimizeDriver(OptimizeRequest request);
    OptimizeDriver(const OptimizeDriver&) = delete;
    OptimizeDriver& operator=(const OptimizeDriver&) = delete;

    /// The GPU slots for `spec` (as --gpus: "0,2", "all"; nullopt: every visible GPU, one worker
    /// each) and a warning per chosen GPU that another process uses.
    static Result<std::vector<GpuSlot>> resolveGpus(const std::optional<std::string>& spec,
                                                    std::vector<std::string>& busyWarnings);

    Result<OptimizeSummary> run(const OptimizeEvents& events);
    void requestStop();
    OptimizeProgress progress() const;

private:
    CardOutcome searchCard(const OperatorCard& card, std::size_t index, SearchTree tree, const TreeStore& store,
                           const OptimizeEvents& events);
    Result<SearchTree> openTree(const OperatorCard& card, const TreeStore& store, const OptimizeEvents& events);

    OptimizeRequest m_request;
    std::atomic<bool> m_stopRequested{false};
    mutable std::mutex m_mutex; // guards m_active and m_progress
    SearchRun* m_active = nullptr;
    OptimizeProgress m_progress;
};

/// "<first 8 characters of the id> <op's qualified name>".
std::string cardLabel(const OperatorCard& card);

} // namespace kforge::core
