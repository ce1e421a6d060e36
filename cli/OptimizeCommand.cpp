#include "ArgParser.h"
#include "Commands.h"
#include "WorkerPath.h"

#include "eval/BenchEvaluator.h"
#include "project/ProjectStore.h"
#include "search/SearchRun.h"
#include "search/TreeStore.h"
#include "search/builtin/BuiltinProposer.h"
#include "util/CacheDirectory.h"

#include <atomic>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <optional>
#include <thread>
#include <unistd.h>

namespace kforge::cli {
namespace {

std::atomic<core::SearchRun*> g_activeRun{nullptr};

void requestStop(int)
{
    if (core::SearchRun* run = g_activeRun.load())
        run->requestStop();
}

template <class T>
bool parseNumber(const std::string& text, T& out)
{
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && ptr == text.data() + text.size();
}

// The cards to search: the ones named, else every card by share of model time (largest first),
// skipping vendor-backed ones (cuBLAS/cuDNN) and those the built-in proposer does not cover.
std::vector<const core::OperatorCard*> chooseCards(const core::Project& project, const std::vector<std::string>& named,
                                                   std::string& error)
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
    std::stable_sort(cards.begin(), cards.end(),
                     [](const core::OperatorCard* a, const core::OperatorCard* b) { return a->timeShare > b->timeShare; });
    std::vector<const core::OperatorCard*> chosen;
    for (const core::OperatorCard* card : cards) {
        if (card->vendorBacked) {
            std::cerr << "kforge: skip " << card->id.substr(0, 8) << " " << card->qualifiedName()
                      << ": vendor-backed (cuBLAS/cuDNN)\n";
            continue;
        }
        if (auto supported = core::BuiltinProposer::supports(*card); !supported) {
            std::cerr << "kforge: skip " << card->id.substr(0, 8) << " " << card->qualifiedName() << ": "
                      << supported.error().message << "\n";
            continue;
        }
        chosen.push_back(card);
    }
    return chosen;
}

} // namespace

int runOptimizeCommand(const std::vector<std::string>& args)
{
    ArgParser parser;
    parser.multiOption("--cards").option("--iterations").option("--time-limit").option("--proposer").option("--seed")
        .option("--timeout").option("--worker").flag("--resume");
    if (auto error = parser.parse(args))
        return fail("optimize: " + *error + " (see 'kforge optimize --help')", 2);
    if (parser.positionals().size() != 1)
        return fail("optimize: expected exactly one PROJECT_DIR (see 'kforge optimize --help')", 2);
    const std::string proposerName = parser.value("--proposer").value_or("builtin");
    if (proposerName != "builtin")
        return fail("--proposer " + proposerName + ": only 'builtin' is available in this version", 2);
    core::SearchBudget budget;
    if (auto text = parser.value("--iterations"); text && (!parseNumber(*text, budget.maxIterations) || budget.maxIterations < 1))
        return fail("--iterations: expected a whole number >= 1, got '" + *text + "'", 2);
    if (auto text = parser.value("--time-limit"); text && (!parseNumber(*text, budget.wallTimeLimitS) || budget.wallTimeLimitS <= 0))
        return fail("--time-limit: expected seconds > 0, got '" + *text + "'", 2);
    std::uint64_t seed = 0;
    if (auto text = parser.value("--seed"); text && !parseNumber(*text, seed))
        return fail("--seed: expected a whole number, got '" + *text + "'", 2);
    double timeoutS = 60;
    if (auto text = parser.value("--timeout"); text && (!parseNumber(*text, timeoutS) || timeoutS <= 0))
        return fail("--timeout: expected seconds > 0, got '" + *text + "'", 2);

    const std::string projectDir = parser.positionals().front();
    auto project = core::openProject(projectDir);
    if (!project)
        return fail(project.error().toString());
    std::string error;
    const auto cards = chooseCards(project.value(), parser.values("--cards"), error);
    if (!error.empty())
        return fail(error, 2);
    if (cards.empty())
        return fail(projectDir + ": no card the built-in proposer can search");

    core::WorkerCommand worker;
    worker.executable = workerPath(parser.value("--worker"));
    const bool showProgress = ::isatty(STDERR_FILENO);
    auto previousHandler = std::signal(SIGINT, requestStop);
    int exitCode = 0;
    for (const core::OperatorCard* card : cards) {
        const core::TreeStore store(core::TreeStore::defaultPath(projectDir, card->id));
        auto tree = store.openForRun(card->id, seed, parser.has("--resume"));
        if (!tree) {
            std::signal(SIGINT, previousHandler);
            return fail(tree.error().toString());
        }
        core::BuiltinProposer proposer(*card);
        core::BenchEvaluator evaluator(projectDir, *card, worker, core::userCacheDirectory() / "nvrtc",
                                       std::chrono::milliseconds(static_cast<long long>(timeoutS * 1000)));
        core::SearchRun run(std::move(tree.value()), store, proposer, evaluator, core::SearchRunOptions{budget, {}, {}, {}});
        g_activeRun = &run;
        std::optional<core::Result<core::SearchOutcome>> outcome;
        std::atomic<bool> finished{false};
        const auto started = std::chrono::steady_clock::now();
        std::thread searcher([&] {
            outcome.emplace(run.run());
            finished = true;
        });
        while (!finished) {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            if (showProgress)
                std::fprintf(stderr, "\r\033[Kkforge: %s %s: iteration %d, best %.3fx", card->id.substr(0, 8).c_str(),
                             card->qualifiedName().c_str(), run.iteration(), run.bestSpeedup());
        }
        searcher.join();
        g_activeRun = nullptr;
        if (showProgress)
            std::fprintf(stderr, "\r\033[K");
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (!outcome->ok()) {
            std::cerr << "kforge: error: " << card->id.substr(0, 8) << " " << card->qualifiedName() << ": "
                      << outcome->error().toString() << "\n";
            exitCode = 1;
            continue;
        }
        const core::SearchOutcome& result = outcome->value();
        const core::SearchNode* best = run.tree().bestPassed();
        std::printf("%s  %-28s nodes %3zu  %-16s best %s", card->id.substr(0, 8).c_str(), card->qualifiedName().c_str(),
                    run.tree().nodes().size(), core::stopReasonName(result.reason),
                    best && best->speedup ? "" : "-");
        if (best && best->speedup)
            std::printf("%s %.2f us, %.3fx eager (iteration %d)", best->id.c_str(), best->latency->medianUs,
                        *best->speedup, best->iteration);
        std::printf("  %.1f s\n", seconds);
        if (!best) {
            const nlohmann::json gpu = evaluator.gpu();
            if (!gpu.is_object() || !gpu.contains("architecture"))
                std::printf("          compile-only: no GPU in the worker; candidates were generated and compiled, not measured\n");
        }
        if (run.stopRequested())
            break;
    }
    std::signal(SIGINT, previousHandler);
    return exitCode;
}

} // namespace kforge::cli
