// kforge export: packages the best proven kernel of every card of a project into a .cast file
// (docs/cast-format.md, "Export"). The work is core/engine/ExportDriver (shared with the desktop app);
// this file parses the flags, resolves --cards prefixes and prints the audit.

#include "Commands.h"
#include "Interruptible.h"
#include "util/ArgParser.h"

#include "cast/CastWriter.h"
#include "cast_export/CastExport.h"
#include "engine/ExportDriver.h"
#include "engine/InModelCheckTool.h"
#include "kernel/NvrtcCompiler.h"
#include "project/ProjectStore.h"
#include "protocol/WorkerPath.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <unistd.h>

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json decisionJson(const core::ExportDecision& d)
{
    return json{{"card", d.cardId},
                {"op", d.op},
                {"kernel", d.kernelId},
                {"decision", d.custom ? "custom" : "fallback"},
                {"reason", d.reason},
                {"node", d.nodeId.empty() ? json() : json(d.nodeId)},
                {"speedup", d.speedup ? json(*d.speedup) : json()},
                {"median_us", d.speedup ? json(d.medianUs) : json()},
                {"spread_percent", d.speedup ? json(d.spreadPercent) : json()},
                {"architectures", d.architectures},
                {"sanitizer", d.sanitizer.is_null() ? json() : d.sanitizer}};
}

// Runs the export on a worker thread; the main thread shows a live progress line on a terminal and
// turns Ctrl-C (or SIGTERM) into a clean cancellation after the card in work: nothing is written,
// and sanitizer passes found so far are remembered for the next export.
core::Result<core::ExportOutcome> runWithProgress(InterruptSignals& signals, core::ExportRequest request,
                                                  bool showProgress)
{
    core::ExportProgress progress;
    request.progress = &progress;
    request.stop = &g_interruptRequested;
    bool toldStopping = false;
    auto result = runInterruptible(
        signals, [&] { return core::exportProject(request); },
        [&] {
            if (g_interruptRequested && !toldStopping) {
                std::fprintf(stderr, "%skforge: export: stopping after the card in work ...\n",
                             showProgress ? "\r\033[K" : "");
                toldStopping = true;
            }
            if (!showProgress || toldStopping)
                return;
            if (progress.checkingModel)
                std::fprintf(stderr, "\r\033[Kkforge: export: in-model check");
            else if (progress.cards > 0 && progress.sanitizing > 0)
                std::fprintf(stderr, "\r\033[Kkforge: export: card %d/%d, sanitizer on %d kernel(s)",
                             progress.card.load(), progress.cards.load(), progress.sanitizing.load());
            else if (progress.cards > 0)
                std::fprintf(stderr, "\r\033[Kkforge: export: card %d/%d", progress.card.load(), progress.cards.load());
            std::fflush(stderr);
        });
    if (showProgress)
        std::fprintf(stderr, "\r\033[K");
    return result;
}

// --dry-run: core::previewExport as the audit table (or JSON). Exit 0; 1 when the trees cannot be read.
int printPreview(const fs::path& projectDir, const core::ExportRequest& request, bool asJson)
{
    auto rows = core::previewExport(projectDir, request.cardIds, request.minSpeedup);
    if (!rows)
        return fail(rows.error().toString());
    std::size_t ships = 0;
    for (const core::ExportPreviewRow& row : rows.value())
        ships += row.ships ? 1 : 0;
    if (asJson) {
        json cards = json::array();
        for (const core::ExportPreviewRow& row : rows.value())
            cards.push_back({{"card", row.cardId},
                             {"op", row.op},
                             {"would_ship", row.ships},
                             {"node", row.nodeId},
                             {"speedup", row.speedup ? json(*row.speedup) : json()},
                             {"reason", row.reason}});
        std::cout << json{{"project", projectDir.string()},
                          {"dry_run", true},
                          {"min_speedup", request.minSpeedup},
                          {"would_ship", ships},
                          {"cards", cards}}
                         .dump(2)
                  << "\n";
        return 0;
    }
    char line[1024];
    std::snprintf(line, sizeof line, "%-18s %-28s %-9s %s\n", "card", "op", "would be", "reason");
    std::cout << line;
    for (const core::ExportPreviewRow& row : rows.value()) {
        std::snprintf(line, sizeof line, "%-18s %-28s %-9s %s\n", row.cardId.c_str(), row.op.c_str(),
                      row.ships ? "custom" : "fallback", row.reason.c_str());
        std::cout << line;
    }
    std::cout << "dry run: " << ships << " of " << rows->size()
              << " cards would ship a custom kernel if each compiles and passes the sanitizer gate and the "
                 "in-model check; nothing written\n";
    return 0;
}

} // namespace

int runExportCommand(const std::vector<std::string>& args)
{
    // First, before any thread starts (Interruptible.h).
    InterruptSignals signals(/*alsoSigterm=*/true);
    core::ArgParser parser;
    parser.option("--output")
        .alias("-o", "--output")
        .option("--min-speedup")
        .multiOption("--cards")
        .multiOption("--arch")
        .option("--sanitize")
        .flag("--rerun-sanitizer")
        .option("--sanitize-jobs")
        .option("--worker")
        .flag("--no-model")
        .flag("--no-model-check")
        .flag("--dry-run")
        .flag("--json");
    if (auto error = parser.parse(args))
        return fail("export: " + *error + " (see 'kforge export --help')", 2);
    if (parser.positionals().size() != 1)
        return fail("export: expected exactly one PROJECT_DIR (see 'kforge export --help')", 2);
    const bool dryRun = parser.has("--dry-run");
    if (!parser.value("--output") && !dryRun)
        return fail("export: -o FILE.cast is required (see 'kforge export --help')", 2);

    const fs::path projectDir = parser.positionals().front();
    const fs::path output = parser.value("--output").value_or("");
    // The policy both front ends start from (core/engine/ExportDriver.h); the flags change it.
    core::ExportRequest request = core::defaultExportRequest(projectDir, output);
    if (auto text = parser.value("--min-speedup"); text &&
        (!core::parseNumber(*text, request.minSpeedup) || !std::isfinite(request.minSpeedup) ||
         request.minSpeedup <= 0))
        return fail("--min-speedup: expected a number > 0 (e.g. 1.05), got '" + *text + "'", 2);
    if (auto text = parser.value("--sanitize")) {
        if (*text == "on")
            request.sanitize = core::SanitizeMode::On;
        else if (*text == "off")
            request.sanitize = core::SanitizeMode::Off;
        else if (*text != "auto")
            return fail("--sanitize: expected auto, on or off, got '" + *text + "'", 2);
    }
    request.reuseSanitizerVerdicts = !parser.has("--rerun-sanitizer");
    if (auto text = parser.value("--sanitize-jobs"); text &&
        (!core::parseNumber(*text, request.sanitizeJobs) || request.sanitizeJobs < 1 || request.sanitizeJobs > 16))
        return fail("--sanitize-jobs: expected a whole number from 1 to 16, got '" + *text + "'", 2);
    for (const std::string& arch : parser.values("--arch")) {
        if (!core::isArchName(arch) || !core::NvrtcCompiler::isValidArchitecture(arch))
            return fail("--arch: expected sm_NN (e.g. sm_90), got '" + arch + "'", 2);
        if (std::find(request.architectures.begin(), request.architectures.end(), arch) == request.architectures.end())
            request.architectures.push_back(arch);
    }

    auto project = core::openProject(projectDir);
    if (!project)
        return fail(project.error().toString());
    if (project->cards.empty())
        return fail(projectDir.string() + ": the project has no cards");
    for (const std::string& id : parser.values("--cards")) {
        const core::OperatorCard* card = project->findCard(id);
        if (!card)
            return fail("--cards " + id + ": no card with that id (or the prefix is ambiguous)", 2);
        if (std::find(request.cardIds.begin(), request.cardIds.end(), card->id) == request.cardIds.end())
            request.cardIds.push_back(card->id);
    }
    if (dryRun)
        return printPreview(projectDir, request, parser.has("--json"));
    if (parser.has("--no-model"))
        request.model = core::ModelInclusion::Omitted;
    if (parser.value("--worker"))
        request.workerPath = core::workerPath(parser.value("--worker"));
    if (parser.has("--no-model-check"))
        request.inModelCheck = [](const fs::path&, const core::CaptureInfo&) {
            return core::InModelCheck{false, false, "skipped (--no-model-check)", {}};
        };
    auto outcome = runWithProgress(signals, request, ::isatty(STDERR_FILENO));
    if (!outcome)
        return fail(outcome.error().toString(), outcome.error().code == core::ErrorCode::Cancelled ? 130 : 1);
    const core::ExportResult* exported = &outcome->exported;
    const core::CastPackage* verified = &outcome->verified;
    const std::size_t byteCount = outcome->bytes;
    const core::SanitizeMode mode = request.sanitize;
    const double minSpeedup = request.minSpeedup;

    const core::CastHeader& header = verified->header;
    std::string archList;
    for (const std::string& arch : header.architectures)
        archList += (archList.empty() ? "" : ", ") + arch;
    if (parser.has("--json")) {
        json cards = json::array();
        for (const core::ExportDecision& d : exported->decisions)
            cards.push_back(decisionJson(d));
        const json report = {{"file", output.string()},
                             {"ok", true},
                             {"project", projectDir.string()},
                             {"header", core::castHeaderToJson(header)},
                             {"min_speedup", minSpeedup},
                             {"sanitize", core::sanitizeModeName(mode)},
                             {"cards", cards},
                             {"notes", verified->auditNotes},
                             {"in_model_check", core::inModelCheckToJson(exported->inModelCheck)},
                             {"bytes", byteCount},
                             {"seconds",
                              {{"sanitizer", outcome->sanitizerSeconds},
                               {"in_model_check", outcome->inModelCheckSeconds},
                               {"total", outcome->totalSeconds}}}};
        std::cout << report.dump(2) << "\n";
        return 0;
    }
    char line[1024];
    std::snprintf(line, sizeof line, "%-18s %-28s %-9s %s\n", "card", "op", "decision", "reason");
    std::cout << line;
    for (const core::AuditEntry& a : verified->audit) {
        std::snprintf(line, sizeof line, "%-18s %-28s %-9s %s\n", a.cardId.c_str(), a.op.c_str(), a.decision.c_str(),
                      a.reason.c_str());
        std::cout << line;
    }
    std::cout << "wrote " << output.string() << ": " << exported->decisions.size() << " cards, " << header.customCount
              << " custom, " << header.fallbackCount << " fallback; "
              << (archList.empty() ? std::string("no cubins") : "architectures " + archList) << "; model "
              << (header.modelIncluded ? "included" : "not included") << "; " << byteCount << " bytes\n";
    for (const std::string& note : verified->auditNotes)
        std::cout << note << "\n";
    if (header.customCount == 0)
        std::cerr << "kforge: warning: the package has no custom kernel: every call runs PyTorch's own (the "
                     "fallback reasons above say why; `kforge optimize` on a GPU makes kernels to export)\n";
    std::snprintf(line, sizeof line, "took %.1f s (sanitizer gate %.1f s, in-model check %.1f s)\n",
                  outcome->totalSeconds, outcome->sanitizerSeconds, outcome->inModelCheckSeconds);
    std::cout << line;
    return 0;
}

} // namespace kforge::cli
