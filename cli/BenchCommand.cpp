#include "Commands.h"
#include "Interruptible.h"
#include "ProjectCard.h"
#include "util/ArgParser.h"

#include "evaluation/CandidateBench.h"
#include "model/EvaluationReport.h"
#include "protocol/WorkerPath.h"
#include "util/AtomicFile.h"
#include "util/CacheDirectory.h"
#include "util/Utf8Text.h"

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;

} // namespace

int runBenchCommand(const std::vector<std::string>& args)
{
    // First, before any thread starts (Interruptible.h).
    InterruptSignals signals(/*alsoSigterm=*/false);
    core::ArgParser parser;
    parser.option("--card")
        .option("--kernel")
        .option("--plan")
        .option("--arch")
        .option("--worker")
        .option("--timeout")
        .option("--repetitions")
        .option("--fresh-sets")
        .option("--emit-cubin")
        .option("--repeat")
        .flag("--no-timing")
        .flag("--no-cache")
        .flag("--sanitize");
    if (auto error = parser.parse(args))
        return fail("bench: " + *error + " (see 'kforge bench --help')", 2);
    if (parser.positionals().size() != 1)
        return fail("bench: expected exactly one PROJECT_DIR (see 'kforge bench --help')", 2);
    if (!parser.has("--card") || !parser.has("--kernel"))
        return fail("bench: --card ID and --kernel FILE are required", 2);

    const fs::path projectDir = parser.positionals().front();
    auto card = openProjectCard(projectDir.string(), *parser.value("--card"));
    if (!card)
        return fail(card.error().toString());

    core::BenchRequest request;
    request.projectDir = fs::absolute(projectDir);
    request.card = card.value();
    const std::string kernelPath = *parser.value("--kernel");
    auto source = core::readWholeFile(kernelPath);
    if (!source)
        return fail(source.error().toString());
    if (auto bad = core::firstInvalidUtf8(source.value()))
        return fail(kernelPath + ": not UTF-8 text (invalid byte at offset " + std::to_string(*bad) +
                    "); a kernel source is UTF-8");
    request.source = source.value();
    request.sourceName = fs::path(kernelPath).filename().string();
    if (core::firstInvalidUtf8(request.sourceName))
        return fail("--kernel: the file name is not UTF-8; rename the file");
    if (auto planPath = parser.value("--plan")) {
        auto text = core::readWholeFile(*planPath);
        if (!text)
            return fail(text.error().toString());
        try {
            request.plan = nlohmann::json::parse(text.value());
        } catch (const nlohmann::json::parse_error& e) {
            return fail(*planPath + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
        }
    }
    request.architecture = parser.value("--arch");
    if (auto text = parser.value("--timeout")) {
        double seconds = 0;
        if (!core::parseSeconds(*text, seconds))
            return fail(core::secondsError("--timeout", *text), 2);
        request.evaluateTimeout = std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
    }
    for (const auto& [flag, key] :
         {std::pair{"--repetitions", "repetitions"}, std::pair{"--fresh-sets", "fresh_input_sets"}}) {
        if (auto text = parser.value(flag)) {
            int value = 0;
            if (!core::parseNumber(*text, value) || value < 0)
                return fail(std::string(flag) + ": expected a whole number >= 0, got '" + *text + "'", 2);
            request.evaluationOptions[key] = value;
        }
    }
    if (parser.has("--no-timing"))
        request.evaluationOptions["time"] = false;
    request.sanitize = parser.has("--sanitize");

    // Checked before anything runs: a cubin is only ever written to a new file, so an earlier result
    // (or any other file a typo names) is never replaced.
    if (auto cubinPath = parser.value("--emit-cubin")) {
        std::error_code ec;
        if (fs::exists(fs::symlink_status(*cubinPath, ec)))
            return fail("--emit-cubin " + *cubinPath + ": the file exists already; remove it or name a new file", 2);
    }

    int repeat = 1;
    if (auto text = parser.value("--repeat")) {
        if (!core::parseNumber(*text, repeat) || repeat < 1)
            return fail("--repeat: expected a whole number >= 1, got '" + *text + "'", 2);
    }

    core::WorkerCommand command;
    command.executable = core::workerPath(parser.value("--worker"));
    core::WorkerClient worker(command);
    // --no-cache: an in-memory cache that each repetition starts empty, so every run compiles.
    const bool useDiskCache = !parser.has("--no-cache");
    core::Result<nlohmann::json> report = core::makeError(core::ErrorCode::Internal, "not run");
    nlohmann::json wallMs = nlohmann::json::array();
    nlohmann::json memory = nlohmann::json::array();
    for (int i = 0; i < repeat; ++i) {
        core::CachingCompiler compiler(useDiskCache ? core::userCacheDirectory() / "nvrtc" : fs::path());
        // Ctrl-C stops the compile (its NVRTC process) or the evaluation (its worker) and ends here.
        request.stop = &g_interruptRequested;
        request.stopEvaluation = true;
        report = runInterruptible(
            signals, [&] { return core::benchCandidate(request, compiler, worker); }, [] {});
        if (!report && report.error().code == core::ErrorCode::Cancelled) {
            worker.shutdown();
            return fail("bench: interrupted: " + report.error().message, 130);
        }
        if (!report)
            break;
        wallMs.push_back((*report)["wall_ms"]);
        if (report->contains("evaluation") && (*report)["evaluation"].contains("device_memory"))
            memory.push_back((*report)["evaluation"]["device_memory"]);
        if (i == 0) {
            const core::EvaluationReport evaluation = core::EvaluationReport::fromJson(report.value());
            if (auto cubinPath = parser.value("--emit-cubin");
                cubinPath && evaluation.status != "compile-error" && evaluation.compile) {
                // The same source and options as the bench: served from the compiler's cache.
                core::CompileOptions options;
                options.architecture = evaluation.compile->architecture;
                auto compiled = compiler.compile(request.source, options, request.sourceName);
                if (!compiled || !compiled->ok)
                    return fail(*cubinPath + ": cannot emit the cubin");
                if (auto written = core::writeFileAtomically(
                        *cubinPath,
                        std::string_view(reinterpret_cast<const char*>(compiled->cubin.data()),
                                         compiled->cubin.size()));
                    !written)
                    return fail(written.error().toString());
            }
        }
    }
    worker.shutdown();
    if (!report)
        return fail(report.error().toString());
    if (repeat > 1) {
        (*report)["repeat_wall_ms"] = wallMs;
        (*report)["repeat_device_memory"] = memory;
    }
    std::cout << report->dump(2) << "\n";
    const core::EvaluationReport evaluation = core::EvaluationReport::fromJson(report.value());
    if (evaluation.status == "passed" || evaluation.status == "compiled-only")
        return 0;
    return fail("candidate " + evaluation.status + ": " +
                (evaluation.reason.line.empty() ? std::string("see the report") : evaluation.reason.line));
}

} // namespace kforge::cli
