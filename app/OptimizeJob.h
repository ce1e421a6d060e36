#pragma once
// Runs the optimize job (core::OptimizeDriver, as kforge optimize does) for a list of cards on a
// background std::thread, continuing each card's saved tree (docs/search.md). The GUI follows a run
// through signals, never by reading the tree file: after every saved node the search thread hands
// over an immutable copy of the card's tree (OptimizeEvents::treeSaved) and the job's progress,
// which come to the GUI thread as treeSaved() and progressChanged(), coalesced (CoalescedDelivery):
// at most one snapshot per card and one progress wait at a time (a newer one replaces an
// undelivered older one), and at most about ten deliveries a second, so a search that makes
// thousands of nodes neither queues thousands of tree copies nor floods the event loop.
//
// Contracts:
// - Thread: create, call and destroy on the GUI thread (asserted); signals are emitted there.
// - One run at a time: start() refuses while one runs. The run holds the project's writer lock
//   (project/ProjectLock.h); when another writer holds it the job fails, naming the holder.
// - Order: every snapshot and progress value made before the run ended is delivered before
//   finished() or failed(); the last treeSaved() of a card is its tree as saved last.
// - Ownership: a snapshot is shared (shared_ptr<const>) and never changed; keep it as long as needed.
// - stop(): the node in flight is dropped (SearchRun's stop flag) and no further card starts; the
//   job then ends with finished(). Trees keep every node saved before the stop.
// - Destruction while running stops and joins (at most the candidate in flight); updates still
//   waiting are dropped.
// - A card whose run fails does not stop the others; the job then ends with failed() naming them.
// - The proposer and evaluator come from factories (defaults: the built-in proposer and a
//   BenchEvaluator with the kforge-worker), so tests can drive the GUI with a synthetic search.

#include "model/OperatorCard.h"
#include "search/Evaluator.h"
#include "search/Proposer.h"
#include "search/SearchBudget.h"

#include "app/CoalescedDelivery.h"
#include "app/JobThread.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kforge::core {
class LlmClient;
class OptimizeDriver;
class SearchTree;
} // namespace kforge::core

namespace kforge::app {

struct OptimizeJobRequest {
    QString projectDir;
    std::vector<core::OperatorCard> cards; // searched in this order
    core::SearchBudget budget;
    std::uint64_t seed = 1;
    double evaluateTimeoutS = 60; // the worker's watchdog per candidate (default evaluator)
    /// The GPUs of the default evaluators, as kforge optimize --gpus ("0,2"); empty: every visible
    /// GPU, one worker each (candidates evaluated in parallel when more than one).
    QString gpus;
    /// Set: the LLM proposer with this client (default proposer), else the built-in proposer.
    std::shared_ptr<core::LlmClient> llmClient;
    /// Null: core::BuiltinProposer.
    std::function<std::unique_ptr<core::Proposer>(const core::OperatorCard&)> makeProposer;
    /// Null: core::BenchEvaluator with the default worker and the user's compile cache.
    std::function<std::unique_ptr<core::Evaluator>(const core::OperatorCard&)> makeEvaluator;
};

class OptimizeJob : public QObject {
    Q_OBJECT
public:
    explicit OptimizeJob(QObject* parent = nullptr);
    ~OptimizeJob() override;

    bool start(OptimizeJobRequest request);
    void stop();
    bool isRunning() const { return m_job.isRunning(); }

    struct Progress {
        QString cardId; // empty between cards
        int cardIndex = 0;
        int cardCount = 0;
        int iteration = 0;      // nodes in the current card's tree
        double bestSpeedup = 0; // of the current card, 0 until one is measured
        QString gpuWarning;     // a chosen GPU is busy with another process (nvidia-smi); empty if not
    };
    /// The progress last delivered by progressChanged() (GUI thread; reset by start()).
    const Progress& progress() const { return m_progress; }
    /// Deliveries of updates (tree snapshots and progress together) so far, over every run.
    int updateDeliveries() const { return m_updates.deliveries(); }

Q_SIGNALS:
    /// Card `cardId`'s tree as the search saved it after a node (the newest snapshot made since the
    /// last delivery; older ones were dropped undelivered). Immutable and shared: show it as is.
    void treeSaved(const QString& cardId, std::shared_ptr<const kforge::core::SearchTree> tree);
    /// Where the run is: the card, its iteration and best speedup, a GPU warning.
    void progressChanged(const kforge::app::OptimizeJob::Progress& progress);
    /// `summary`: one line per card ("3f2a... aten::softmax.int: 50 nodes, iteration-limit, best 1.65x").
    void finished(const QString& summary, bool stopped);
    /// The job could not run (a tree could not be opened, no GPU as asked), or a card's run failed:
    /// an error, or a tree that is only a failed root (the next run retries it). Then `error` holds
    /// the cards' lines and, last, "N of M cards failed: <card> (<why>); ...". Trees keep every
    /// node saved, as after finished().
    void failed(const QString& error);

private:
    /// What waits for the GUI thread: the newest snapshot per card, the newest progress.
    struct Updates {
        std::map<std::string, std::shared_ptr<const core::SearchTree>> trees; // by card id
        std::optional<Progress> progress;
    };
    void deliverUpdates(Updates& updates);

    std::atomic<bool> m_stopRequested{false};
    std::mutex m_mutex;                       // guards m_driver
    core::OptimizeDriver* m_driver = nullptr; // the job's driver while it runs, on the job thread
    Progress m_progress;                      // GUI thread: the last delivered
    // Before m_job: the job thread posts into it until it is joined.
    CoalescedDelivery<Updates> m_updates{this, [this](Updates& updates) { deliverUpdates(updates); }};
    JobThread m_job{this}; // last: joined before the members the run uses are destroyed
};

} // namespace kforge::app
