#include "ArgParser.h"
#include "Commands.h"

#include "eval/SearchWorkers.h"
#include "llm/LlmClientFactory.h"
#include "llm/LlmConfig.h"
#include "project/ProjectStore.h"
#include "search/NodeRanking.h"
#include "search/SearchRun.h"
#include "search/TreeStore.h"
#include "search/builtin/BuiltinProposer.h"
#include "search/llm/LlmProposer.h"
#include "search/llm/LlmUsage.h"
#include "util/CacheDirectory.h"
#include "worker/GpuSelection.h"
#include "worker/WorkerPath.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <thread>
#include <unistd.h>

namespace kforge::cli {
namespace {

// Ctrl-C while optimize runs: SIGINT is blocked in this thread and so in every thread started
// after it (they inherit the mask; the workers are spawned with an empty one), and this thread
// takes it synchronously with sigtimedwait. No thread may ever receive SIGINT through a handler:
// NVRTC installs one of its own that calls exit() from inside a compile (exit status 4 with no
// output, or a crash when several compile threads exit at once). The previous mask is restored on
// destruction, after any SIGINT still pending was taken.
class SigintBlock {
public:
    SigintBlock()
    {
        sigemptyset(&m_set);
        sigaddset(&m_set, SIGINT);
        pthread_sigmask(SIG_BLOCK, &m_set, &m_old);
    }
    ~SigintBlock()
    {
        while (taken(std::chrono::milliseconds(0))) {}
        pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
    }
    SigintBlock(const SigintBlock&) = delete;
    SigintBlock& operator=(const SigintBlock&) = delete;

    /// Waits up to `wait` for a SIGINT; true when one came.
    bool taken(std::chrono::milliseconds wait)
    {
        timespec timeout{static_cast<time_t>(wait.count() / 1000), static_cast<long>(wait.count() % 1000) * 1000000L};
        return sigtimedwait(&m_set, nullptr, &timeout) == SIGINT;
    }

private:
    sigset_t m_set;
    sigset_t m_old;
};

std::string cardLabel(const core::OperatorCard& card)
{
    return card.id.substr(0, 8) + " " + card.qualifiedName();
}

// "a (x); b (y)".
std::string joinFailures(const std::vector<std::pair<std::string, std::string>>& failures)
{
    std::string text;
    for (const auto& [label, why] : failures)
        text += (text.empty() ? "" : "; ") + label + " (" + why + ")";
    return text;
}

// The cards to search: the ones named, else every card by share of model time (largest first),
// skipping vendor-backed ones (cuBLAS/cuDNN) and, for the built-in proposer, those it does not
// cover (an LLM may write a kernel for any op).
std::vector<const core::OperatorCard*> chooseCards(const core::Project& project, const std::vector<std::string>& named,
                                                   bool builtin, std::string& error)
{
    std::vector<const core::OperatorCard*> cards;
    if (!named.empty()) {
        for (const std::string& id : named) {
            const core::OperatorCard* card = project.findCard(id);
            if (!card) {
                error = "--cards " + id + ": no card with that id (or the prefix is ambiguous)";
                return {};
            }
            cards.push_back(card);
        }
        return cards;
    }
    for (const core::OperatorCard& card : project.cards)
        cards.push_back(&card);
    std::stable_sort(cards.begin(), cards.end(), [](const core::OperatorCard* a, const core::OperatorCard* b) {
        return a->timeShare > b->timeShare;
    });
    std::vector<const core::OperatorCard*> chosen;
    for (const core::OperatorCard* card : cards) {
        if (card->vendorBacked) {
            std::cerr << "kforge: skip " << card->id.substr(0, 8) << " " << card->qualifiedName()
                      << ": vendor-backed (cuBLAS/cuDNN)\n";
            continue;
        }
        if (auto supported = core::BuiltinProposer::supports(*card); builtin && !supported) {
            std::cerr << "kforge: skip " << card->id.substr(0, 8) << " " << card->qualifiedName() << ": "
                      << supported.error().message << "\n";
            continue;
        }
        chosen.push_back(card);
    }
    return chosen;
}

// defaultsFor(provider), then the --llm-config file, then the flags. The file may omit "provider"
// (--proposer names it) but may not contradict it. Errors are one line naming the file or flag;
// no value from the file is echoed (llmConfigFromJson keeps key-like fields out).
core::Result<core::LlmProviderConfig> llmConfigFor(core::LlmProvider provider, const ArgParser& parser)
{
    core::LlmProviderConfig config = core::LlmProviderConfig::defaultsFor(provider);
    if (auto file = parser.value("--llm-config")) {
        std::ifstream in(*file);
        if (!in)
            return core::makeError(core::ErrorCode::NotFound, "cannot read the file", "--llm-config " + *file);
        nlohmann::json json;
        try {
            json = nlohmann::json::parse(in);
        } catch (const nlohmann::json::exception& e) {
            return core::makeError(core::ErrorCode::InvalidArgument, std::string("not valid JSON: ") + e.what(),
                                   "--llm-config " + *file);
        }
        if (!json.is_object())
            return core::makeError(core::ErrorCode::InvalidArgument, "expected a JSON object", "--llm-config " + *file);
        if (!json.contains("provider"))
            json["provider"] = core::llmProviderName(provider);
        // The flags below override the file; a file that leaves "model" to --model is complete.
        if (auto model = parser.value("--model"); model && !json.contains("model"))
            json["model"] = *model;
        auto parsed = core::llmConfigFromJson(json);
        if (!parsed)
            return core::makeError(parsed.error().code, parsed.error().toString(), "--llm-config " + *file);
        if (parsed->provider != provider)
            return core::makeError(core::ErrorCode::InvalidArgument,
                                   std::string("provider is '") + core::llmProviderName(parsed->provider) +
                                       "' but --proposer is '" + core::llmProviderName(provider) + "'",
                                   "--llm-config " + *file);
        config = parsed.value();
    }
    if (auto model = parser.value("--model"))
        config.model = *model;
    if (auto url = parser.value("--base-url"))
        config.baseUrl = *url;
    if (auto env = parser.value("--api-key-env"))
        config.apiKeyEnv = *env;
    if (config.model.empty())
        return core::makeError(core::ErrorCode::InvalidArgument,
                               "no model: pass --model NAME or set \"model\" in --llm-config", "optimize");
    if (auto valid = config.validate(); !valid)
        return valid.error();
    return config;
}

} // namespace

int runOptimizeCommand(const std::vector<std::string>& args)
{
    // First, before any thread starts (LLM client, workers, compile threads).
    SigintBlock sigint;
    ArgParser parser;
    parser.multiOption("--cards")
        .option("--iterations")
        .option("--time-limit")
        .option("--proposer")
        .option("--seed")
        .option("--timeout")
        .option("--worker")
        .option("--llm-config")
        .option("--model")
        .option("--base-url")
        .option("--api-key-env")
        .option("--gpus")
        .flag("--resume")
        .flag("--restart");
    if (auto error = parser.parse(args))
        return fail("optimize: " + *error + " (see 'kforge optimize --help')", 2);
    if (parser.positionals().size() != 1)
        return fail("optimize: expected exactly one PROJECT_DIR (see 'kforge optimize --help')", 2);
    const bool resume = parser.has("--resume");
    const bool restart = parser.has("--restart");
    if (resume && restart)
        return fail("optimize: --resume continues the saved trees and --restart starts new ones: choose one", 2);
    const std::string proposerName = parser.value("--proposer").value_or("builtin");
    const bool builtin = proposerName == "builtin";
    std::shared_ptr<core::LlmClient> llmClient;
    if (builtin) {
        for (const char* flag : {"--llm-config", "--model", "--base-url", "--api-key-env"}) {
            if (parser.value(flag))
                return fail(std::string(flag) + ": only with --proposer openai or anthropic", 2);
        }
    } else {
        auto provider = core::parseLlmProvider(proposerName);
        if (!provider)
            return fail("--proposer " + proposerName + ": expected builtin, openai or anthropic", 2);
        auto config = llmConfigFor(provider.value(), parser);
        if (!config)
            return fail(config.error().toString(), 2);
        auto client = core::createLlmClient(config.value());
        if (!client)
            return fail(client.error().toString(), 2);
        llmClient = std::move(client.value());
    }
    core::SearchBudget budget;
    if (auto text = parser.value("--iterations");
        text && (!parseNumber(*text, budget.maxIterations) || budget.maxIterations < 1))
        return fail("--iterations: expected a whole number >= 1, got '" + *text + "'", 2);
    if (auto text = parser.value("--time-limit"); text && !parseSeconds(*text, budget.wallTimeLimitS))
        return fail(secondsError("--time-limit", *text), 2);
    std::uint64_t seed = 0;
    if (auto text = parser.value("--seed"); text && !parseNumber(*text, seed))
        return fail("--seed: expected a whole number, got '" + *text + "'", 2);
    double timeoutS = 60;
    if (auto text = parser.value("--timeout"); text && !parseSeconds(*text, timeoutS))
        return fail(secondsError("--timeout", *text), 2);

    const std::string projectDir = parser.positionals().front();
    auto project = core::openProject(projectDir);
    if (!project)
        return fail(project.error().toString());
    // One writer per project (docs/project-format.md): held until the command returns.
    auto writerLock = core::lockProjectForWriting(projectDir, "optimize");
    if (!writerLock)
        return fail(writerLock.error().toString());
    std::string error;
    const auto cards = chooseCards(project.value(), parser.values("--cards"), builtin, error);
    if (!error.empty())
        return fail(error, 2);
    if (cards.empty())
        return fail(projectDir + (builtin ? ": no card the built-in proposer can search" : ": no card to search"));

    core::WorkerCommand worker;
    worker.executable = core::workerPath(parser.value("--worker"));
    // One worker per GPU (docs/search.md, "Parallel search"); none visible: one worker as is.
    auto gpus = core::chooseGpus(parser.value("--gpus"), core::visibleGpus());
    if (!gpus)
        return fail(gpus.error().toString(), 2);
    for (const std::string& busy : core::gpuBusyWarnings(gpus.value()))
        std::cerr << "kforge: warning: " << busy << "\n";
    const bool showProgress = ::isatty(STDERR_FILENO);
    // Set by Ctrl-C: the run in flight stops after its candidates in flight, no further card starts,
    // and the command exits 130.
    bool interrupted = false;
    // Cards whose run failed (an error, or nothing but a failed root), with why; and the cards a
    // Ctrl-C left unsearched.
    std::vector<std::pair<std::string, std::string>> failures;
    std::vector<std::string> notSearched;
    core::LlmUsage runUsage;
    for (const core::OperatorCard* card : cards) {
        if (interrupted || (interrupted = sigint.taken(std::chrono::milliseconds(0)))) {
            notSearched.push_back(cardLabel(*card));
            continue;
        }
        const core::TreeStore store(core::TreeStore::defaultPath(projectDir, card->id));
        if (restart && store.exists()) {
            // Never deleted: the old tree stays next to the new one under a dated name.
            auto kept = store.moveAside();
            if (!kept) {
                return fail(kept.error().toString());
            }
            std::cerr << "kforge: " << cardLabel(*card) << ": the old search tree is kept as " << kept->string()
                      << "\n";
        }
        auto tree = store.openForRun(card->id, seed, resume);
        if (!tree) {
            return fail(tree.error().toString());
        }
        if (tree->empty() && !tree->rootAttempts().empty()) {
            const core::SearchNode& last = tree->rootAttempts().back();
            std::cerr << "kforge: " << cardLabel(*card) << ": retrying the root (attempt "
                      << tree->rootAttempts().size() + 1 << "; the last one was " << core::nodeStatusName(last.status)
                      << ": " << last.failureReason << ")\n";
        }
        // One evaluator (and worker) per GPU slot; slots sharing a GPU take turns on it.
        core::SearchWorkers workers(projectDir, *card, worker, gpus.value(), core::userCacheDirectory() / "nvrtc",
                                    std::chrono::milliseconds(static_cast<long long>(timeoutS * 1000)));
        const std::size_t workerCount = workers.evaluators().size();
        core::BenchEvaluator& evaluator = workers.first();
        std::unique_ptr<core::Proposer> proposer;
        if (builtin) {
            proposer = std::make_unique<core::BuiltinProposer>(*card);
        } else {
            // The worker describes its GPU once it started (after the first evaluation): the
            // proposer asks again before each prompt, on the search thread that owns the evaluator.
            core::LlmProposerOptions options;
            options.hardwareSource = [&evaluator] { return evaluator.gpu(); };
            proposer = std::make_unique<core::LlmProposer>(*card, llmClient, evaluator.gpu(), options);
        }
        core::SearchRun run(std::move(tree.value()), store, *proposer, workers.evaluators(),
                            core::SearchRunOptions{budget, {}, {}, {}});
        std::optional<core::Result<core::SearchOutcome>> outcome;
        std::atomic<bool> finished{false};
        const auto started = std::chrono::steady_clock::now();
        std::thread searcher([&] {
            outcome.emplace(run.run());
            finished = true;
        });
        while (!finished) {
            if (sigint.taken(std::chrono::milliseconds(200))) {
                interrupted = true;
                run.requestStop();
            }
            if (showProgress)
                std::fprintf(stderr, "\r\033[Kkforge: %s %s: iteration %d, best %.3fx", card->id.substr(0, 8).c_str(),
                             card->qualifiedName().c_str(), run.iteration(), run.bestSpeedup());
        }
        searcher.join();
        if (showProgress)
            std::fprintf(stderr, "\r\033[K");
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (!outcome->ok()) {
            std::printf("%s  %-28s failed: %s\n", card->id.substr(0, 8).c_str(), card->qualifiedName().c_str(),
                        outcome->error().toString().c_str());
            std::fflush(stdout);
            failures.emplace_back(cardLabel(*card), outcome->error().toString());
            continue;
        }
        const core::SearchOutcome& result = outcome->value();
        const core::SearchNode* best = core::bestNode(run.tree());
        const std::optional<double> bestSpeedup = best ? core::nodeSpeedup(*best) : std::nullopt;
        std::printf("%s  %-28s nodes %3zu  %-16s best %s", card->id.substr(0, 8).c_str(), card->qualifiedName().c_str(),
                    run.tree().nodes().size(), core::stopReasonName(result.reason), bestSpeedup ? "" : "-");
        if (bestSpeedup)
            std::printf("%s %.2f us, %.3fx eager (iteration %d)", best->id.c_str(), best->latency->medianUs,
                        *bestSpeedup, best->iteration);
        std::printf("  %.1f s", seconds);
        if (!builtin) {
            const core::LlmUsage usage = core::llmUsageOf(run.tree());
            runUsage.add(usage);
            std::printf("  %s", usage.summary().c_str());
        }
        std::printf("\n");
        if (!result.failure.empty()) {
            std::printf("          failed: %s (--resume retries it)\n", result.failure.c_str());
            failures.emplace_back(cardLabel(*card), result.failure);
        } else if (result.reason == core::StopReason::NothingToRevise && !result.note.empty()) {
            std::printf("          stopped: %s\n", result.note.c_str());
        }
        if (workerCount > 1) {
            // Throughput per GPU (docs/search.md): candidates each worker evaluated, and in all.
            const std::vector<int> counts = run.evaluationsPerEvaluator();
            int total = 0;
            std::printf("          workers:");
            for (std::size_t i = 0; i < counts.size(); ++i) {
                std::printf(" GPU %d %d", (*gpus)[i].ordinal, counts[i]);
                total += counts[i];
            }
            std::printf(" candidates; %d in %.1f s = %.1f per minute\n", total, seconds,
                        seconds > 0 ? total * 60.0 / seconds : 0.0);
        }
        const bool anyCompiled =
            std::any_of(run.tree().nodes().begin(), run.tree().nodes().end(),
                        [](const core::SearchNode& node) { return core::isRevisable(node.status); });
        if (!best && anyCompiled) {
            const nlohmann::json gpu = evaluator.gpu();
            if (!gpu.is_object() || !gpu.contains("architecture"))
                std::printf("          compile-only: no GPU in the worker; candidates were generated and compiled, not "
                            "measured\n");
        }
        std::fflush(stdout);
    }
    if (!builtin && cards.size() > 1)
        std::printf("total  %s\n", runUsage.summary().c_str());
    std::fflush(stdout);
    // One line for every failed card, then the interruption, if any (docs/search.md, "kforge
    // optimize: outcome and exit status").
    if (failures.size() == 1 && cards.size() == 1)
        std::cerr << "kforge: error: " << failures.front().first << " failed: " << failures.front().second << "\n";
    else if (!failures.empty())
        std::cerr << "kforge: error: " << failures.size() << " of " << cards.size()
                  << " cards failed: " << joinFailures(failures) << "\n";
    if (interrupted) {
        std::cerr << "kforge: interrupted: the trees are saved (--resume continues)";
        if (!notSearched.empty()) {
            std::string list;
            for (const std::string& label : notSearched)
                list += (list.empty() ? "" : ", ") + label;
            std::cerr << "; " << notSearched.size() << (notSearched.size() == 1 ? " card" : " cards")
                      << " not searched: " << list;
        }
        std::cerr << "\n";
        return 130;
    }
    return failures.empty() ? 0 : 1;
}

} // namespace kforge::cli
