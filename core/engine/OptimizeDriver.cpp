#include "engine/OptimizeDriver.h"

#include "builtin_proposer/BuiltinProposer.h"
#include "evaluation/SearchWorkers.h"
#include "llm_proposer/LlmProposer.h"
#include "model/NodeRanking.h"
#include "project/ProjectStore.h"
#include "protocol/WorkerPath.h"
#include "util/CacheDirectory.h"

#include <algorithm>

namespace kforge::core {

std::string cardLabel(const OperatorCard& card)
{
    return card.id.substr(0, 8) + " " + card.displayName();
}

std::size_t OptimizeSummary::failedCount() const
{
    return static_cast<std::size_t>(
        std::count_if(cards.begin(), cards.end(), [](const CardOutcome& card) { return card.failed(); }));
}

std::string OptimizeSummary::failureList() const
{
    std::string text;
    for (const CardOutcome& card : cards) {
        if (card.failed())
            text += (text.empty() ? "" : "; ") + card.label + " (" + card.failureReason() + ")";
    }
    return text;
}

OptimizeDriver::OptimizeDriver(OptimizeRequest request) : m_request(std::move(request))
{
    m_progress.cardCount = static_cast<int>(m_request.cards.size());
}

Result<std::vector<GpuSlot>> OptimizeDriver::resolveGpus(const std::optional<std::string>& spec,
                                                         std::vector<std::string>& busyWarnings)
{
    auto gpus = chooseGpus(spec, visibleGpus());
    if (gpus)
        busyWarnings = gpuBusyWarnings(gpus.value());
    return gpus;
}

void OptimizeDriver::requestStop()
{
    m_stopRequested = true;
    std::lock_guard lock(m_mutex);
    if (m_active)
        m_active->requestStop();
}

OptimizeProgress OptimizeDriver::progress() const
{
    std::lock_guard lock(m_mutex);
    OptimizeProgress progress = m_progress;
    if (m_active) {
        progress.iteration = m_active->iteration();
        progress.bestSpeedup = m_active->bestSpeedup();
    }
    return progress;
}

Result<SearchTree> OptimizeDriver::openTree(const OperatorCard& card, const TreeStore& store,
                                            const OptimizeEvents& events)
{
    const bool restart = m_request.savedTrees == SavedTreeMode::Restart;
    if (restart && store.exists()) {
        // Never deleted: the old tree stays next to the new one under a dated name.
        auto kept = store.moveAside();
        if (!kept)
            return kept.error();
        if (events.note)
            events.note(cardLabel(card) + ": the old search tree is kept as " + kept->string());
    }
    auto tree = store.openForRun(card.id, m_request.seed, m_request.savedTrees == SavedTreeMode::Resume);
    if (tree && tree->empty() && !tree->rootAttempts().empty() && events.note) {
        const SearchNode& last = tree->rootAttempts().back();
        events.note(cardLabel(card) + ": retrying the root (attempt " +
                    std::to_string(tree->rootAttempts().size() + 1) + "; the last one was " +
                    nodeStatusName(last.status) + ": " + last.failureReason + ")");
    }
    return tree;
}

CardOutcome OptimizeDriver::searchCard(const OperatorCard& card, std::size_t index, SearchTree tree,
                                       const TreeStore& store, const OptimizeEvents& events)
{
    CardOutcome outcome;
    outcome.cardId = card.id;
    outcome.label = cardLabel(card);
    const auto started = std::chrono::steady_clock::now();

    // One evaluator (and worker) per GPU slot; slots sharing a GPU take turns on it.
    std::unique_ptr<Evaluator> ownEvaluator;
    std::unique_ptr<SearchWorkers> workers;
    BenchEvaluator* bench = nullptr;
    std::vector<Evaluator*> evaluators;
    if (m_request.makeEvaluator) {
        ownEvaluator = m_request.makeEvaluator(card);
        evaluators.push_back(ownEvaluator.get());
    } else {
        WorkerCommand worker;
        worker.executable = m_request.workerExecutable.empty() ? workerPath(std::nullopt) : m_request.workerExecutable;
        workers = std::make_unique<SearchWorkers>(m_request.projectDir, card, worker, m_request.gpus,
                                                  userCacheDirectory() / "nvrtc", m_request.evaluateTimeout);
        bench = &workers->first();
        evaluators = workers->evaluators();
    }
    std::unique_ptr<Proposer> proposer;
    if (m_request.makeProposer) {
        proposer = m_request.makeProposer(card);
    } else if (m_request.llmClient) {
        // The worker describes its GPU once it started (after the first evaluation): the proposer
        // asks again before each prompt, on the search thread that owns the evaluator.
        LlmProposerOptions options;
        if (bench)
            options.hardwareSource = [bench] { return bench->gpu(); };
        proposer =
            std::make_unique<LlmProposer>(card, m_request.llmClient, bench ? bench->gpu() : nlohmann::json(), options);
    } else {
        proposer = std::make_unique<BuiltinProposer>(card);
    }

    SearchRunOptions options;
    options.budget = m_request.budget;
    if (events.treeSaved || events.progressChanged) {
        // On the search thread, after each save: one copy of the tree per event, shared from then on.
        options.onSaved = [this, &events, &card](const SearchTree& saved) {
            if (events.treeSaved)
                events.treeSaved(card.id, std::make_shared<const SearchTree>(saved));
            if (events.progressChanged)
                events.progressChanged(progress());
        };
    }
    SearchRun run(std::move(tree), store, *proposer, evaluators, std::move(options));
    {
        std::lock_guard lock(m_mutex);
        m_active = &run;
        m_progress.cardId = card.id;
        m_progress.cardIndex = static_cast<int>(index);
    }
    if (events.progressChanged)
        events.progressChanged(progress());
    if (m_stopRequested)
        run.requestStop(); // a stop that came between the caller's check and m_active
    auto result = run.run();
    {
        std::lock_guard lock(m_mutex);
        m_active = nullptr;
        m_progress.cardId.clear();
    }
    if (events.progressChanged)
        events.progressChanged(progress());
    outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!result) {
        outcome.error = result.error().toString();
        return outcome;
    }
    const SearchTree& searched = run.tree();
    outcome.nodes = searched.nodes().size();
    outcome.reason = result->reason;
    outcome.failure = result->failure;
    outcome.note = result->note;
    if (const SearchNode* best = bestNode(searched))
        outcome.best = *best;
    if (evaluators.size() > 1)
        outcome.candidatesPerWorker = run.evaluationsPerEvaluator();
    if (m_request.llmClient && !m_request.makeProposer)
        outcome.llmUsage = llmUsageOf(searched);
    const bool anyCompiled = std::any_of(searched.nodes().begin(), searched.nodes().end(),
                                         [](const SearchNode& node) { return isRevisable(node.status); });
    if (!outcome.best && anyCompiled && bench) {
        const nlohmann::json gpu = bench->gpu();
        outcome.compileOnly = !gpu.is_object() || !gpu.contains("architecture");
    }
    return outcome;
}

Result<OptimizeSummary> OptimizeDriver::run(const OptimizeEvents& events)
{
    // One writer per project (docs/project-format.md): held until the job returns.
    auto writerLock = lockProjectForWriting(m_request.projectDir, "optimize");
    if (!writerLock)
        return writerLock.error();
    OptimizeSummary summary;
    for (std::size_t i = 0; i < m_request.cards.size(); ++i) {
        const OperatorCard& card = m_request.cards[i];
        if (m_stopRequested) {
            summary.notSearched.push_back(cardLabel(card));
            continue;
        }
        const TreeStore store(TreeStore::defaultPath(m_request.projectDir, card.id));
        auto tree = openTree(card, store, events);
        if (!tree)
            return tree.error();
        summary.cards.push_back(searchCard(card, i, std::move(tree.value()), store, events));
        if (events.cardFinished)
            events.cardFinished(summary.cards.back());
    }
    summary.stopped = m_stopRequested;
    return summary;
}

} // namespace kforge::core
