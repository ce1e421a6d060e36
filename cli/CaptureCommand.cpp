#include "CardsTable.h"
#include "Commands.h"
#include "Interruptible.h"
#include "util/ArgParser.h"

#include "capture/CaptureJob.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <limits>
#include <unistd.h>

namespace kforge::cli {
namespace {

// Runs the capture on a worker thread; the main thread shows a live progress line on a terminal
// and turns Ctrl-C into a clean cancellation (no project is written).
core::Result<core::CaptureReport> runWithProgress(InterruptSignals& signals, const core::CaptureOptions& options,
                                                  bool showProgress)
{
    core::CaptureProgress progress;
    auto result = runInterruptible(
        signals, [&] { return core::runCapture(options, &progress, &g_interruptRequested); },
        [&] {
            if (!showProgress)
                return;
            std::fprintf(stderr, "\r\033[Kkforge: %s", core::capturePhaseName(progress.phase.load()));
            if (progress.total > 0)
                std::fprintf(stderr, " %d/%d", progress.done.load(), progress.total.load());
            std::fflush(stderr);
        });
    if (showProgress)
        std::fprintf(stderr, "\r\033[K");
    return result;
}

} // namespace

int runCaptureCommand(const std::vector<std::string>& args)
{
    // First, before any thread starts (Interruptible.h).
    InterruptSignals signals(/*alsoSigterm=*/false);
    core::ArgParser parser;
    parser.multiOption("--inputs")
        .option("--output")
        .alias("-o", "--output")
        .option("--device")
        .option("--samples")
        .option("--sample-budget-mb")
        .option("--seed")
        .flag("--sample-vendor")
        .flag("--json")
        .flag("--quiet");
    if (auto error = parser.parse(args))
        return fail("capture: " + *error + " (see 'kforge capture --help')", 2);
    if (parser.positionals().size() != 1)
        return fail("capture: expected exactly one MODEL.pt (see 'kforge capture --help')", 2);
    if (!parser.has("--inputs"))
        return fail("capture: --inputs is required (a torch.save file or shape specs like 8x3x224x224:float16)", 2);
    if (!parser.has("--output"))
        return fail("capture: -o PROJECT_DIR is required", 2);

    core::CaptureOptions options;
    options.modelPath = parser.positionals().front();
    options.inputs = parser.values("--inputs");
    options.outputDir = *parser.value("--output");
    options.device = parser.value("--device").value_or("auto");
    options.sampleVendorBacked = parser.has("--sample-vendor");
    if (auto text = parser.value("--samples");
        text && (!core::parseNumber(*text, options.samplesPerCard) || options.samplesPerCard < 0))
        return fail("--samples: expected a whole number >= 0, got '" + *text + "'", 2);
    if (auto text = parser.value("--sample-budget-mb"); text && *text != "auto") {
        // The budget is kept in bytes: the largest MB count whose byte count fits an int64.
        constexpr std::int64_t kMaxMb = std::numeric_limits<std::int64_t>::max() >> 20;
        std::int64_t mb = 0;
        if (!core::parseNumber(*text, mb) || mb < 0 || mb > kMaxMb)
            return fail("--sample-budget-mb: expected auto or a whole number from 0 to " + std::to_string(kMaxMb) +
                            ", got '" + *text + "'",
                        2);
        options.sampleBudgetBytes = mb << 20;
    }
    if (auto text = parser.value("--seed"); text && !core::parseNumber(*text, options.seed))
        return fail("--seed: expected a whole number, got '" + *text + "'", 2);

    const bool quiet = parser.has("--quiet");
    auto report = runWithProgress(signals, options, !quiet && ::isatty(STDERR_FILENO));
    if (!report)
        return fail(report.error().toString(), report.error().code == core::ErrorCode::Cancelled ? 130 : 1);

    for (const std::string& note : report->notes)
        std::cerr << "kforge: note: " << note << "\n";
    const core::CapturePhaseTimes& t = report->times;
    if (!quiet) {
        const auto regions = std::count_if(report->project.cards.begin(), report->project.cards.end(),
                                           [](const core::OperatorCard& card) { return card.isRegion(); });
        std::cerr << std::fixed << std::setprecision(1) << "kforge: wrote " << options.outputDir.string() << " ("
                  << report->project.cards.size() << " cards, " << regions << " of them fused regions) in "
                  << static_cast<long long>(t.totalMs) << " ms: load " << t.loadMs << " ms, forward "
                  << t.plainForwardMs << " ms, recorded forward " << t.recordPassMs << " ms, samples "
                  << t.saveSamplesMs << " ms, eager timing " << t.eagerTimingMs << " ms, regions " << t.regionsMs
                  << " ms\n";
    }
    if (parser.has("--json")) {
        nlohmann::json json = cardsJson(report->project);
        json["phase_ms"] = {{"load", t.loadMs},
                            {"plain_forward", t.plainForwardMs},
                            {"record_pass", t.recordPassMs},
                            {"save_samples", t.saveSamplesMs},
                            {"eager_timing", t.eagerTimingMs},
                            {"regions", t.regionsMs},
                            {"total", t.totalMs}};
        std::cout << json.dump(2) << "\n";
    } else {
        std::cout << formatCardsTable(report->project);
    }
    return 0;
}

} // namespace kforge::cli
