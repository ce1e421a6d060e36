#include "evaluation/CandidateBench.h"

#include "evaluation/KernelResourceReport.h"
#include "evaluation/SanitizerScope.h"
#include "evaluation/SanitizerTool.h"
#include "model/LaunchPlan.h"
#include "project/ProjectJson.h"
#include "protocol/Base64.h"
#include "util/FailureText.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <future>
#include <map>
#include <regex>

namespace kforge::core {
namespace {

using nlohmann::json;

json diagnosticsJson(const CompiledKernel& kernel)
{
    json list = json::array();
    for (const Diagnostic& d : kernel.diagnostics)
        list.push_back(json{{"file", d.file},
                            {"line", d.line},
                            {"column", d.column},
                            {"severity", diagnosticSeverityName(d.severity)},
                            {"message", d.message}});
    return list;
}

// The report's end: its status, the reason as one line ("reason") and what more it said
// ("reason_detail": `detail`, or the rest of a longer `reason`; never a backtrace), the wall time.
json finish(json report, const std::string& status, const std::string& reason,
            std::chrono::steady_clock::time_point started, const std::string& detail = {})
{
    report["status"] = status;
    const FailureText text = failureText(reason);
    if (!text.line.empty())
        report["reason"] = text.line;
    if (const std::string more = detail.empty() ? text.detail : reasonDetail(detail); !more.empty())
        report["reason_detail"] = more;
    report["wall_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return report;
}

// Runs the captured-sample validation of a candidate under each compute-sanitizer tool, in a
// worker of its own (the tools slow kernels 10-100x and must see the whole process; see
// SanitizerTool.h). Any finding fails the candidate.
// The tools run at once (nothing is timed; each is its own process on the GPU), which makes the
// gate about as long as its slowest tool; the report and the failure line name the tools in the
// fixed order memcheck, racecheck, initcheck, synccheck whatever finishes first. A tool that can
// find nothing in this candidate (SanitizerScope.h: `skip`) is not run; its record says why.
json sanitize(const BenchRequest& request, json payload, const WorkerClient& worker,
              const std::map<std::string, std::string>& skip, std::string& failure)
{
    const std::string tool = findComputeSanitizer();
    if (tool.empty())
        return json{{"checked", false}, {"reason", "compute-sanitizer not found: not sanitizer-checked"}};
    payload["options"] = json{{"time", false}, {"fresh_input_sets", 0}};
    constexpr std::size_t kCount = std::size(kSanitizerTools);
    std::array<std::future<SanitizerToolRun>, kCount> runs;
    for (std::size_t i = 0; i < kCount; ++i)
        if (!skip.contains(kSanitizerTools[i]))
            runs[i] = std::async(std::launch::async, [&, name = std::string(kSanitizerTools[i])] {
                return runSanitizerTool(tool, name, payload, worker.command(), request.sanitizerTimeout);
            });
    json results = json::object();
    for (std::size_t i = 0; i < kCount; ++i) {
        if (const auto skipped = skip.find(kSanitizerTools[i]); skipped != skip.end()) {
            results[kSanitizerTools[i]] = json{{"evaluation", "skipped"}, {"skipped", skipped->second}};
            continue;
        }
        SanitizerToolRun run = runs[i].get();
        if (failure.empty())
            failure = run.failure;
        results[kSanitizerTools[i]] = std::move(run.record);
    }
    return json{{"checked", true}, {"tool", tool}, {"passed", failure.empty()}, {"tools", results}};
}

} // namespace

std::vector<std::string> ptxEntryNames(const std::string& ptx)
{
    static const std::regex entry(R"(\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*))");
    std::vector<std::string> names;
    for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), entry); it != std::sregex_iterator(); ++it)
        names.push_back((*it)[1].str());
    return names;
}

Result<json> benchCandidate(const BenchRequest& request, CachingCompiler& compiler, WorkerClient& worker)
{
    const auto started = std::chrono::steady_clock::now();
    const OperatorCard& card = request.card;
    json report{{"card", card.id}, {"op", card.qualifiedName()}, {"source", request.sourceName}};
    if (card.outputs.empty())
        return makeError(ErrorCode::Unsupported, "the card's operator returns no tensor", "card " + card.id);

    // The plan: given, or embedded in the source.
    json planJson;
    if (request.plan) {
        planJson = *request.plan;
    } else if (auto text = embeddedPlanText(request.source)) {
        try {
            planJson = json::parse(*text);
        } catch (const json::parse_error& e) {
            return finish(report, "invalid-plan",
                          std::string("the /*kforge-plan ... */ block is not valid JSON: ") + e.what(), started);
        }
    } else {
        return finish(report, "invalid-plan",
                      "no launch plan: pass --plan FILE or put a /*kforge-plan {...} */ block in the source", started);
    }
    auto plan = parseLaunchPlan(planJson, card);
    if (!plan)
        return finish(report, "invalid-plan", plan.error().toString(), started);
    if (auto valid = validateLaunchPlan(plan.value(), card); !valid)
        return finish(report, "invalid-plan", valid.error().toString(), started);
    report["plan"] = toJson(plan.value());

    // The worker first: its GPU decides the architecture. A worker that cannot start is reported
    // after compiling, so that a CPU machine still checks the source.
    auto phaseStart = std::chrono::steady_clock::now();
    WorkerResponse hello = worker.start();
    const double workerStartMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - phaseStart).count();
    json gpu = hello.ok() ? hello.result.value("info", json()) : json();
    // A worker with a GPU describes it ({"gpu": name, "architecture": "sm_90", ...}); one without
    // says {"gpu": false, "reason": ...}.
    const bool hasGpu = gpu.is_object() && gpu.contains("architecture") && gpu.at("architecture").is_string();
    CompileOptions options;
    options.architecture =
        request.architecture ? *request.architecture : (hasGpu ? gpu.at("architecture").get<std::string>() : "sm_90");
    options.timeout = request.evaluateTimeout;
    options.stop = request.stop;
    auto compiled = compiler.compile(request.source, options, request.sourceName);
    if (!compiled)
        return compiled.error();
    report["compile"] = json{{"ok", compiled->ok},
                             {"architecture", options.architecture},
                             {"ms", compiled->compileMs},
                             {"from_cache", compiled->fromCache},
                             {"cache_key", compiled->cacheKey},
                             {"diagnostics", diagnosticsJson(compiled.value())}};
    if (!compiled->ok) {
        std::string first = compiled->unfinished.empty() ? "the source does not compile" : compiled->unfinished;
        for (const Diagnostic& d : compiled->diagnostics) {
            if (d.severity == DiagnosticSeverity::Error && compiled->unfinished.empty()) {
                first = d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.message;
                break;
            }
        }
        report["compile"]["log"] = compiled->log;
        return finish(report, "compile-error", first, started);
    }
    // Every kernel the plan launches must be an entry of the compiled module (also checked by the
    // worker when it loads the cubin; here it is caught without a GPU).
    const std::vector<std::string> entries = ptxEntryNames(compiled->ptx);
    for (const KernelLaunch& launch : plan->launches) {
        if (std::find(entries.begin(), entries.end(), launch.kernel) == entries.end()) {
            std::string names;
            for (const std::string& entry : entries)
                names += (names.empty() ? "" : ", ") + entry;
            return finish(report, "invalid-plan",
                          "no kernel named '" + launch.kernel + "' in the source (kernels: " +
                              (names.empty() ? std::string("none") : names) + "; declare it extern \"C\" __global__)",
                          started);
        }
    }
    report["compile"]["kernels"] = kernelResourceReport(compiled->log, plan.value(), options.architecture);
    if (!hello.ok())
        return finish(report, "worker-error", hello.describe(), started);
    report["worker"] = json{{"pid", hello.result.value("pid", 0)}, {"gpu", gpu}};
    if (!hasGpu)
        return finish(report, "compiled-only",
                      "compiled for " + options.architecture + "; not evaluated: " +
                          (gpu.is_object() && gpu.contains("reason") && gpu.at("reason").is_string()
                               ? gpu.at("reason").get<std::string>()
                               : std::string("the worker has no GPU")),
                      started);
    // Validation needs the card's captured samples; without them the worker could only refuse.
    // Said here in its own words, not as a wrong result.
    if (card.samples.empty())
        return finish(
            report, "no-sample",
            "the card has no captured sample to validate against (" +
                (card.samplesNote.empty() ? std::string("capture with --samples 1 or more") : card.samplesNote) + ")",
            started);

    json payload{
        {"project_dir", request.projectDir.string()},
        {"card", toJson(card)},
        {"plan", planJson},
        {"cubin_base64",
         base64Encode(std::string_view(reinterpret_cast<const char*>(compiled->cubin.data()), compiled->cubin.size()))},
        {"options", request.evaluationOptions}};
    if (gpu.contains("gpu") && gpu.at("gpu").is_string())
        if (const auto best = request.bestSpeedupByGpu.find(gpu.at("gpu").get<std::string>());
            best != request.bestSpeedupByGpu.end())
            payload["options"]["best_speedup"] = best->second;
    phaseStart = std::chrono::steady_clock::now();
    WorkerResponse response =
        worker.request("evaluate", payload, request.evaluateTimeout, request.stopEvaluation ? request.stop : nullptr);
    if (response.outcome == WorkerOutcome::Stopped)
        return makeError(ErrorCode::Cancelled, "stopped during the evaluation (worker killed)", "card " + card.id);
    report["worker"]["restarts"] = worker.restartCount();
    report["worker"]["start_ms"] = workerStartMs;
    report["worker"]["evaluate_ms"] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - phaseStart).count();
    switch (response.outcome) {
    case WorkerOutcome::Ok: {
        report["evaluation"] = response.result;
        const std::string status = response.result.value("status", std::string("failed"));
        std::string reason;
        if (response.result.contains("failure"))
            reason = response.result["failure"].value("check", std::string()) + ": " +
                response.result["failure"].value("message", std::string());
        if (status != "passed")
            return finish(report, "failed", reason, started);
        if (request.sanitize) {
            std::string failure;
            const auto skip = sanitizerToolsToSkip(compiled->ptx, report["compile"]["kernels"]);
            report["sanitizer"] = sanitize(request, payload, worker, skip, failure);
            if (!failure.empty())
                return finish(report, "failed", failure, started);
        } else {
            report["sanitizer"] = json{{"checked", false}, {"reason", "not requested (--sanitize)"}};
        }
        return finish(report, "passed", reason, started);
    }
    case WorkerOutcome::HandlerError:
        return finish(report, "failed", response.describe(), started, response.detail);
    case WorkerOutcome::Timeout:
        return finish(report, "timed-out", response.describe(), started);
    case WorkerOutcome::Crashed:
        return finish(report, "crashed", response.describe(), started);
    default:
        return finish(report, "worker-error", response.describe(), started);
    }
}

} // namespace kforge::core
