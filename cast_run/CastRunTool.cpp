// kforge-cast-run: whole-model runs through libkforge_runtime, in a process of their own.
//
//   kforge-cast-run run FILE.cast --inputs SPEC... [...]   `kforge run` (the CLI execs this)
//   kforge-cast-run check FILE.cast --recorded-inputs TEXT --seed S
//                                                          export's in-model check; prints its JSON
//
// Errors: one "kforge: error:" line on stderr, exit 1 (2 for usage). Kept apart from the CLI so
// that kforge itself never links the CUDA driver.

#include "CastModelRun.h"
#include "InModelCheckRun.h"
#include "cast/RunCommandOptions.h"

#include "util/Version.h"

#include <cstdio>
#include <iostream>

namespace {

using namespace kforge;

int fail(const std::string& message, int code = 1)
{
    std::cerr << "kforge: error: " << message << "\n";
    return code;
}

void printReport(const runtime::CastRunReport& report)
{
    char line[1024];
    std::cout << "model: " << report.model << "\ndevice: " << report.device << "\n";
    std::snprintf(line, sizeof line, "eager   %10.3f ms median (min %.3f, max %.3f) over %d runs\n",
                  report.eager.medianMs, report.eager.minMs, report.eager.maxMs, report.runs);
    std::cout << line;
    if (report.cast) {
        std::snprintf(line, sizeof line, ".cast   %10.3f ms median (min %.3f, max %.3f): %.3fx eager\n",
                      report.cast->medianMs, report.cast->minMs, report.cast->maxMs,
                      report.cast->medianMs > 0 ? report.eager.medianMs / report.cast->medianMs : 0.0);
        std::cout << line;
    }
    if (report.eagerGpuMs) {
        std::snprintf(line, sizeof line, "GPU time (host launch overhead hidden): eager %.3f ms", *report.eagerGpuMs);
        std::cout << line;
        if (report.castGpuMs && *report.castGpuMs > 0) {
            std::snprintf(line, sizeof line, ", .cast %.3f ms: %.3fx eager", *report.castGpuMs,
                          *report.eagerGpuMs / *report.castGpuMs);
            std::cout << line;
        }
        std::cout << "\n";
    }
    if (!report.gpuTimeNote.empty())
        std::cout << report.gpuTimeNote << "\n";
    if (report.output) {
        std::snprintf(line, sizeof line, "output: max abs diff %.3g vs eager (%s: %s)\n", report.output->maxAbsDiff,
                      report.output->tolerance.empty() ? "exact" : report.output->tolerance.c_str(),
                      report.output->withinTolerance ? "within" : "OUT OF TOLERANCE");
        std::cout << line;
        if (!report.output->detail.empty())
            std::cout << "  " << report.output->detail << "\n";
        if (!report.output->float64Error.empty())
            std::cout << "  element-wise, not against float64: " << report.output->float64Error << "\n";
    }
    for (const std::string& note : report.notes)
        std::cout << "note: " << note << "\n";
    if (report.kernels.empty())
        return;
    std::snprintf(line, sizeof line, "%-6s %-18s %-28s %10s %10s  %s\n", "kernel", "card", "op", "hits", "fallbacks",
                  "last fallback reason");
    std::cout << line;
    for (const nlohmann::json& k : report.kernels) {
        std::snprintf(line, sizeof line, "%-6s %-18s %-28s %10llu %10llu  %s\n", k.value("id", "").c_str(),
                      k.value("card", "").c_str(), k.value("op", "").c_str(),
                      static_cast<unsigned long long>(k.value("hits", 0ull)),
                      static_cast<unsigned long long>(k.value("fallbacks", 0ull)),
                      k.value("last_fallback_reason", "").c_str());
        std::cout << line;
    }
}

int runCommand(const std::vector<std::string>& args)
{
    core::RunCommandOptions parsed;
    if (auto error = core::parseRunCommandOptions(args, parsed))
        return fail(*error, 2);
    runtime::CastRunOptions options;
    options.castFile = parsed.castFile;
    options.inputs = parsed.inputs;
    if (parsed.model)
        options.modelFile = *parsed.model;
    options.runs = parsed.runs;
    options.warmup = parsed.warmup;
    options.seed = parsed.seed;
    options.kernels = parsed.kernels;
    auto report = runtime::runCastModel(options);
    if (!report)
        return fail(report.error().toString());
    if (parsed.json)
        std::cout << runtime::toJson(report.value()).dump(2) << "\n";
    else
        printReport(report.value());
    return report->output && !report->output->withinTolerance ? 1 : 0;
}

int checkCommand(const std::vector<std::string>& args)
{
    core::ArgParser parser;
    parser.option("--recorded-inputs").option("--seed");
    if (auto error = parser.parse(args))
        return fail("check: " + *error, 2);
    if (parser.positionals().size() != 1 || !parser.value("--recorded-inputs"))
        return fail("check: expected FILE.cast --recorded-inputs TEXT [--seed S]", 2);
    core::CaptureInfo capture;
    capture.inputs = *parser.value("--recorded-inputs");
    if (auto text = parser.value("--seed"); text && !core::parseNumber(*text, capture.inputSeed))
        return fail("--seed: expected a whole number, got '" + *text + "'", 2);
    const core::InModelCheck check = runtime::checkPackageInModel(parser.positionals().front(), capture);
    std::cout << core::inModelCheckToJson(check).dump() << "\n";
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    const std::vector<std::string> words(argv + 1, argv + argc);
    try {
        if (words.empty())
            return fail("usage: kforge-cast-run run|check ... (see 'kforge run --help')", 2);
        const std::vector<std::string> rest(words.begin() + 1, words.end());
        if (words.front() == "run")
            return runCommand(rest);
        if (words.front() == "check")
            return checkCommand(rest);
        if (words.front() == "--version") {
            std::cout << "kforge-cast-run " << core::kKforgeVersion << "\n";
            return 0;
        }
        return fail("unknown command '" + words.front() + "' (expected run or check)", 2);
    } catch (const std::exception& e) {
        return fail(std::string("unexpected failure: ") + e.what());
    }
}
