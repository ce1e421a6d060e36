#include "Commands.h"
#include "Interruptible.h"
#include "OptimizeSummaryText.h"
#include "util/ArgParser.h"

#include "engine/CardSelection.h"
#include "engine/OptimizeDriver.h"
#include "llm_client/LlmClientFactory.h"
#include "llm_client/LlmConfig.h"
#include "model/NodeRanking.h"
#include "project/ProjectStore.h"
#include "protocol/WorkerPath.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unistd.h>

namespace kforge::cli {
namespace {

// The line of a searched card on stdout (docs/search.md, "kforge optimize: outcome and exit status").
void printOutcome(const core::CardOutcome& card, const std::string& opName, const std::vector<core::GpuSlot>& gpus)
{
    const std::string id = card.cardId.substr(0, 8);
    if (!card.error.empty()) {
        std::printf("%s  %-28s failed: %s\n", id.c_str(), opName.c_str(), card.error.c_str());
        std::fflush(stdout);
        return;
    }
    // The best node and its speedup as every tool shows them (model/NodeRanking.h).
    const std::optional<double> speedup = card.best ? core::nodeSpeedup(*card.best) : std::nullopt;
    const core::SearchNode* best = speedup ? &*card.best : nullptr;
    std::printf("%s  %-28s nodes %3zu  %-16s best %s", id.c_str(), opName.c_str(), card.nodes,
                core::stopReasonName(card.reason), best ? "" : "-");
    if (best)
        std::printf("%s %.2f us, %.3fx eager (iteration %d)", best->id.c_str(), best->latency->medianUs, *speedup,
                    best->iteration);
    std::printf("  %.1f s", card.seconds);
    if (card.llmUsage)
        std::printf("  %s", card.llmUsage->summary().c_str());
    std::printf("\n");
    if (!card.failure.empty())
        std::printf("          failed: %s (--resume retries it)\n", card.failure.c_str());
    else if (card.reason == core::StopReason::NothingToRevise && !card.note.empty())
        std::printf("          stopped: %s\n", card.note.c_str());
    if (!card.candidatesPerWorker.empty()) {
        // Throughput per GPU (docs/search.md): candidates each worker evaluated, and in all.
        int total = 0;
        std::printf("          workers:");
        for (std::size_t i = 0; i < card.candidatesPerWorker.size(); ++i) {
            if (i < gpus.size())
                std::printf(" GPU %d %d", gpus[i].ordinal, card.candidatesPerWorker[i]);
            total += card.candidatesPerWorker[i];
        }
        std::printf(" candidates; %d in %.1f s = %.1f per minute\n", total, card.seconds,
                    card.seconds > 0 ? total * 60.0 / card.seconds : 0.0);
    }
    if (card.compileOnly)
        std::printf("          compile-only: no GPU in the worker; candidates were generated and compiled, not "
                    "measured\n");
    std::fflush(stdout);
}

// defaultsFor(provider), then the --llm-config file, then the flags. The file may omit "provider"
// (--proposer names it) but may not contradict it. Errors are one line naming the file or flag;
// no value from the file is echoed (llmConfigFromJson keeps key-like fields out).
core::Result<core::LlmProviderConfig> llmConfigFor(core::LlmProvider provider, const core::ArgParser& parser)
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
    // First, before any thread starts (LLM client, workers, compile threads): Interruptible.h.
    InterruptSignals sigint(/*alsoSigterm=*/false);
    core::ArgParser parser;
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
        text && (!core::parseNumber(*text, budget.maxIterations) || budget.maxIterations < 1))
        return fail("--iterations: expected a whole number >= 1, got '" + *text + "'", 2);
    if (auto text = parser.value("--time-limit"); text && !core::parseSeconds(*text, budget.wallTimeLimitS))
        return fail(core::secondsError("--time-limit", *text), 2);
    std::uint64_t seed = 0;
    if (auto text = parser.value("--seed"); text && !core::parseNumber(*text, seed))
        return fail("--seed: expected a whole number, got '" + *text + "'", 2);
    double timeoutS = 60;
    if (auto text = parser.value("--timeout"); text && !core::parseSeconds(*text, timeoutS))
        return fail(core::secondsError("--timeout", *text), 2);

    const std::string projectDir = parser.positionals().front();
    auto project = core::openProject(projectDir);
    if (!project)
        return fail(project.error().toString());
    auto selection = core::selectCardsToSearch(project.value(), parser.values("--cards"), builtin);
    if (!selection)
        return fail(selection.error().toString(), 2);
    for (const core::SkippedCard& skipped : selection->skipped)
        std::cerr << "kforge: skip " << core::cardLabel(*skipped.card) << ": " << skipped.reason << "\n";
    if (selection->cards.empty())
        return fail(projectDir + (builtin ? ": no card the built-in proposer can search" : ": no card to search"));

    core::OptimizeRequest request;
    request.projectDir = projectDir;
    for (const core::OperatorCard* card : selection->cards)
        request.cards.push_back(*card);
    request.budget = budget;
    request.seed = seed;
    request.savedTrees = resume ? core::SavedTreeMode::Resume
        : restart               ? core::SavedTreeMode::Restart
                                : core::SavedTreeMode::Refuse;
    request.evaluateTimeout = std::chrono::milliseconds(static_cast<long long>(timeoutS * 1000));
    request.workerExecutable = core::workerPath(parser.value("--worker"));
    request.llmClient = llmClient;
    // One worker per GPU (docs/search.md, "Parallel search"); none visible: one worker as is.
    std::vector<std::string> busy;
    auto gpus = core::OptimizeDriver::resolveGpus(parser.value("--gpus"), busy);
    if (!gpus)
        return fail(gpus.error().toString(), 2);
    for (const std::string& warning : busy)
        std::cerr << "kforge: warning: " << warning << "\n";
    request.gpus = gpus.value();
    const std::size_t cardCount = request.cards.size();

    // The driver runs on its own thread; this one takes Ctrl-C and draws the progress line. Both
    // write to the terminal under one mutex, the progress line cleared before any other output.
    core::OptimizeDriver driver(std::move(request));
    const bool showProgress = ::isatty(STDERR_FILENO);
    std::mutex terminal;
    const auto clearProgress = [&] {
        if (showProgress)
            std::fprintf(stderr, "\r\033[K");
    };
    core::OptimizeEvents events;
    events.note = [&](const std::string& line) {
        std::lock_guard lock(terminal);
        clearProgress();
        std::cerr << "kforge: " << line << "\n";
    };
    core::LlmUsage runUsage;
    events.cardFinished = [&](const core::CardOutcome& card) {
        std::lock_guard lock(terminal);
        clearProgress();
        const core::OperatorCard* searched = project->findCard(card.cardId);
        printOutcome(card, searched ? searched->displayName() : card.label, gpus.value());
        if (card.llmUsage)
            runUsage.add(*card.llmUsage);
    };
    std::optional<core::Result<core::OptimizeSummary>> outcome;
    std::atomic<bool> finished{false};
    std::thread searcher([&] {
        outcome.emplace(driver.run(events));
        finished = true;
    });
    // Set by Ctrl-C: the card in flight stops after its candidates in flight, no further card
    // starts, and the command exits 130.
    bool interrupted = false;
    while (!finished) {
        if (sigint.taken(std::chrono::milliseconds(200))) {
            interrupted = true;
            driver.requestStop();
        }
        const core::OptimizeProgress p = driver.progress();
        std::lock_guard lock(terminal);
        if (showProgress && !finished && !p.cardId.empty()) {
            const core::OperatorCard* card = project->findCard(p.cardId);
            std::fprintf(stderr, "\r\033[Kkforge: %s: iteration %d, best %.3fx",
                         card ? core::cardLabel(*card).c_str() : p.cardId.substr(0, 8).c_str(), p.iteration,
                         p.bestSpeedup);
        }
    }
    searcher.join();
    clearProgress();
    if (!outcome->ok())
        return fail(outcome->error().toString());
    const core::OptimizeSummary& summary = outcome->value();
    if (!builtin && cardCount > 1)
        std::printf("total  %s\n", runUsage.summary().c_str());
    std::fputs(formatOptimizeSummary(summary, selection->skipped).c_str(), stdout);
    std::fflush(stdout);
    // One line for every failed card, then the interruption, if any (docs/search.md, "kforge
    // optimize: outcome and exit status").
    const std::size_t failed = summary.failedCount();
    if (failed == 1 && cardCount == 1)
        std::cerr << "kforge: error: " << summary.cards.front().label
                  << " failed: " << summary.cards.front().failureReason() << "\n";
    else if (failed > 0)
        std::cerr << "kforge: error: " << failed << " of " << cardCount << " cards failed: " << summary.failureList()
                  << "\n";
    if (interrupted) {
        std::cerr << "kforge: interrupted: the trees are saved (--resume continues)";
        if (!summary.notSearched.empty()) {
            std::string list;
            for (const std::string& label : summary.notSearched)
                list += (list.empty() ? "" : ", ") + label;
            std::cerr << "; " << summary.notSearched.size() << (summary.notSearched.size() == 1 ? " card" : " cards")
                      << " not searched: " << list;
        }
        std::cerr << "\n";
        return 130;
    }
    return failed == 0 ? 0 : 1;
}

} // namespace kforge::cli
