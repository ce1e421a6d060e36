// kforge export: packages the best proven kernel of every card of a project into a .cast file
// (docs/cast-format.md, "Export"). The selection is core/cast/CastExport; this file supplies NVRTC
// (the same compile cache as optimize), the sanitizer gate (a kforge-worker under compute-sanitizer,
// as 'kforge bench --sanitize'), the model file, and the output checks and printing.

#include "ArgParser.h"
#include "Commands.h"

#include "worker/WorkerPath.h"
#include "cast/CastExport.h"
#include "cast/CastReader.h"
#include "cast/CastWriter.h"
#include "eval/CandidateBench.h"
#include "project/ProjectStore.h"
#include "util/UtcTime.h"
#include "util/AtomicFile.h"
#include "util/CacheDirectory.h"
#include "util/Hash.h"
#include "util/Version.h"

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

enum class SanitizeMode { Auto, On, Off };

// "2.11.0+cu128" -> "2.11".
std::string majorMinor(const std::string& version)
{
    const auto first = version.find('.');
    if (first == std::string::npos)
        return version;
    const auto second = version.find_first_not_of("0123456789", first + 1);
    return version.substr(0, second);
}

std::string firstCompileError(const core::CompiledKernel& kernel)
{
    for (const core::Diagnostic& d : kernel.diagnostics) {
        if (d.severity == core::DiagnosticSeverity::Error)
            return d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.message;
    }
    return "the source does not compile";
}

// The first finding of a compute-sanitizer log ("Invalid __global__ read of size 4 bytes"), or "".
std::string firstFinding(const std::string& log)
{
    std::size_t start = 0;
    while (start < log.size()) {
        std::size_t end = log.find('\n', start);
        if (end == std::string::npos)
            end = log.size();
        std::string line = log.substr(start, end - start);
        start = end + 1;
        if (!line.starts_with("========="))
            continue;
        line.erase(0, line.find_first_not_of("= "));
        if (line.empty() || line.starts_with("COMPUTE-SANITIZER") || line.starts_with("ERROR SUMMARY") ||
            line.starts_with("RACECHECK SUMMARY") || line.starts_with("at ") || line.starts_with("Saved host"))
            continue;
        return line;
    }
    return {};
}

// The sanitizer gate over 'kforge bench --sanitize': the kernel is validated again on the card's
// captured samples and fresh inputs (no timing), then on the samples in workers started under each
// compute-sanitizer tool. Whether the gate can run at all (compute-sanitizer installed, a worker
// with a GPU) is found out at the first kernel, so an export without custom kernels starts nothing.
class SanitizerGate {
public:
    SanitizerGate(SanitizeMode mode, core::WorkerCommand worker, fs::path projectDir, core::CachingCompiler& compiler)
        : m_mode(mode), m_worker(std::move(worker)), m_projectDir(std::move(projectDir)), m_compiler(compiler)
    {
    }
    ~SanitizerGate() { m_worker.shutdown(); }

    core::Result<core::SanitizerVerdict> check(const core::OperatorCard& card, const core::SearchNode& node)
    {
        if (!m_probed)
            probe();
        if (!m_unavailable.empty()) {
            if (m_mode == SanitizeMode::On)
                return core::makeError(core::ErrorCode::Unsupported, m_unavailable + ": cannot run the sanitizer gate",
                                       "--sanitize on");
            return core::SanitizerVerdict{json{{"checked", false}, {"reason", m_unavailable + ": not sanitizer-checked"}},
                                          {}};
        }
        if (::isatty(STDERR_FILENO))
            std::fprintf(stderr, "kforge: sanitizer: %s %s (%s) ...\n", card.id.substr(0, 8).c_str(),
                         card.qualifiedName().c_str(), node.id.c_str());
        core::BenchRequest request;
        request.projectDir = m_projectDir;
        request.card = card;
        request.source = node.candidate.source;
        if (node.candidate.launchPlan.is_object() && !node.candidate.launchPlan.empty())
            request.plan = node.candidate.launchPlan;
        request.evaluationOptions = json{{"time", false}};
        request.sanitize = true;
        auto report = core::benchCandidate(request, m_compiler, m_worker);
        if (!report)
            return core::SanitizerVerdict{json{{"checked", false}, {"reason", report.error().toString()}},
                                          "the gate could not run: " + report.error().toString()};
        const std::string status = report->value("status", std::string());
        json record = report->contains("sanitizer")
                          ? (*report)["sanitizer"]
                          : json{{"checked", false}, {"reason", "not reached: validation " + status}};
        if (status == "passed")
            return core::SanitizerVerdict{record, {}};
        std::string finding = report->value("reason", std::string("validation ") + status);
        if (record.contains("tools") && record["tools"].is_object()) {
            for (const auto& [tool, result] : record["tools"].items()) {
                const std::string line = firstFinding(result.value("log", std::string()));
                if (!line.empty() && finding.find(tool) != std::string::npos) {
                    finding += ": " + line;
                    break;
                }
            }
        } else {
            finding = "validation " + status + ": " + finding;
        }
        return core::SanitizerVerdict{record, finding};
    }

private:
    void probe()
    {
        m_probed = true;
        if (m_mode == SanitizeMode::Off)
            return;
        if (core::findComputeSanitizer().empty()) {
            m_unavailable = "compute-sanitizer not found";
            return;
        }
        core::WorkerResponse hello = m_worker.start();
        if (!hello.ok()) {
            std::string why = hello.describe();
            why = why.substr(0, why.find('\n'));
            m_unavailable = "the GPU worker did not start (" + why + ")";
            return;
        }
        const json gpu = hello.result.value("info", json());
        if (!gpu.is_object() || !gpu.contains("architecture") || !gpu.at("architecture").is_string())
            m_unavailable = "no GPU in the worker" + (gpu.is_object() && gpu.contains("reason") && gpu.at("reason").is_string()
                                                           ? " (" + gpu.at("reason").get<std::string>() + ")"
                                                           : std::string());
    }

    SanitizeMode m_mode;
    core::WorkerClient m_worker;
    fs::path m_projectDir;
    core::CachingCompiler& m_compiler; // shared with the export's own compiles (same cache)
    bool m_probed = false;
    std::string m_unavailable; // why the gate cannot run; empty when it can
};

// Refuses an output that is a directory, an existing file that is not a .cast package, or a folder
// that does not exist or cannot be written, before any work is done.
std::optional<std::string> checkOutput(const fs::path& output)
{
    std::error_code ec;
    const fs::file_status status = fs::status(output, ec);
    if (fs::exists(status)) {
        if (fs::is_directory(status))
            return output.string() + ": is a directory";
        if (!fs::is_regular_file(status))
            return output.string() + ": not a regular file; refusing to overwrite it";
        if (auto existing = core::openCast(output); !existing)
            return output.string() + ": exists and is not a .cast package; refusing to overwrite it";
    }
    const fs::path parent = output.parent_path().empty() ? fs::path(".") : output.parent_path();
    if (!fs::is_directory(parent, ec))
        return output.string() + ": cannot write: no directory " + parent.string();
    if (::access(parent.c_str(), W_OK | X_OK) != 0)
        return output.string() + ": cannot write: the directory " + parent.string() + " is not writable";
    return std::nullopt;
}

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

} // namespace

int runExportCommand(const std::vector<std::string>& args)
{
    ArgParser parser;
    parser.option("--output").alias("-o", "--output").option("--min-speedup").multiOption("--cards")
        .multiOption("--arch").option("--sanitize").option("--worker").flag("--no-model").flag("--json");
    if (auto error = parser.parse(args))
        return fail("export: " + *error + " (see 'kforge export --help')", 2);
    if (parser.positionals().size() != 1)
        return fail("export: expected exactly one PROJECT_DIR (see 'kforge export --help')", 2);
    if (!parser.value("--output"))
        return fail("export: -o FILE.cast is required (see 'kforge export --help')", 2);

    core::ExportOptions options;
    if (auto text = parser.value("--min-speedup");
        text && (!parseNumber(*text, options.minSpeedup) || !std::isfinite(options.minSpeedup) || options.minSpeedup <= 0))
        return fail("--min-speedup: expected a number > 0 (e.g. 1.05), got '" + *text + "'", 2);
    SanitizeMode mode = SanitizeMode::Auto;
    if (auto text = parser.value("--sanitize")) {
        if (*text == "on")
            mode = SanitizeMode::On;
        else if (*text == "off")
            mode = SanitizeMode::Off;
        else if (*text != "auto")
            return fail("--sanitize: expected auto, on or off, got '" + *text + "'", 2);
    }
    for (const std::string& arch : parser.values("--arch")) {
        if (!core::isArchName(arch) || !core::NvrtcCompiler::isValidArchitecture(arch))
            return fail("--arch: expected sm_NN (e.g. sm_90), got '" + arch + "'", 2);
        if (std::find(options.architectures.begin(), options.architectures.end(), arch) == options.architectures.end())
            options.architectures.push_back(arch);
    }

    const fs::path projectDir = parser.positionals().front();
    const fs::path output = *parser.value("--output");
    auto project = core::openProject(projectDir);
    if (!project)
        return fail(project.error().toString());
    if (project->cards.empty())
        return fail(projectDir.string() + ": the project has no cards");
    for (const std::string& id : parser.values("--cards")) {
        const core::OperatorCard* card = project->findCard(id);
        if (!card)
            return fail("--cards " + id + ": no card with that id (or the prefix is ambiguous)", 2);
        if (std::find(options.cardIds.begin(), options.cardIds.end(), card->id) == options.cardIds.end())
            options.cardIds.push_back(card->id);
    }
    if (auto problem = checkOutput(output))
        return fail(*problem);

    if (!parser.has("--no-model")) {
        const std::string& modelPath = project->capture.modelPath;
        if (modelPath.empty())
            return fail((projectDir / core::ProjectPaths::kProjectFile).string() +
                        ": no model_path recorded; pass --no-model for a kernels-only package");
        auto model = core::readWholeFile(modelPath);
        if (!model)
            return fail(modelPath + ": the project's model cannot be read (" + model.error().message +
                        "); pass --no-model for a kernels-only package");
        if (!project->capture.modelSha.empty() && core::fnv1a64Hex(model.value()) != project->capture.modelSha)
            return fail(modelPath + ": the model changed since it was captured (fnv1a64 " +
                        core::fnv1a64Hex(model.value()) + ", the project has " + project->capture.modelSha +
                        "); capture it again, or pass --no-model");
        options.model = std::move(model.value());
    }

    auto trees = core::loadProjectTrees(projectDir, project.value());
    if (!trees)
        return fail(trees.error().toString());

    core::CachingCompiler compiler(core::userCacheDirectory() / "nvrtc");
    options.compile = [&compiler](const std::string& source, const std::string& arch)
        -> core::Result<core::ExportCompiled> {
        core::CompileOptions compileOptions;
        compileOptions.architecture = arch; // the options the search compiled with: a cache hit
        auto compiled = compiler.compile(source, compileOptions);
        if (!compiled)
            return compiled.error();
        if (!compiled->ok)
            return core::makeError(core::ErrorCode::InvalidArgument, firstCompileError(compiled.value()));
        return core::ExportCompiled{
            std::string(reinterpret_cast<const char*>(compiled->cubin.data()), compiled->cubin.size()), compiled->ptx};
    };
    core::WorkerCommand worker;
    worker.executable = core::workerPath(parser.value("--worker"));
    SanitizerGate gate(mode, worker, fs::absolute(projectDir), compiler);
    if (mode != SanitizeMode::Off)
        options.sanitize = [&gate](const core::OperatorCard& card, const core::SearchNode& node) {
            return gate.check(card, node);
        };
    options.producer = std::string("kforge ") + core::kKforgeVersion;
    options.createdUtc = core::utcNowIso8601();
    options.minTorchVersion = majorMinor(project->capture.torchVersion);
    options.minCudaVersion = compiler.compiler().nvrtcVersion();

    auto exported = core::buildCastExport(project.value(), trees.value(), options);
    if (!exported)
        return fail(exported.error().toString());
    // Build, read back with the strict reader, then write: a package the reader would refuse is
    // never written, and the file holds the old contents or the whole new package.
    auto bytes = core::CastWriter::build(exported->package);
    if (!bytes)
        return fail(output.string() + ": " + bytes.error().toString());
    auto verified = core::readCast(bytes.value(), output.string());
    if (!verified)
        return fail("internal: the exported package does not verify: " + verified.error().toString());
    if (auto written = core::writeFileAtomically(output, bytes.value()); !written)
        return fail(written.error().toString());

    const core::CastHeader& header = verified->header;
    std::string archList;
    for (const std::string& arch : header.architectures)
        archList += (archList.empty() ? "" : ", ") + arch;
    if (parser.has("--json")) {
        json cards = json::array();
        for (const core::ExportDecision& d : exported->decisions)
            cards.push_back(decisionJson(d));
        const json report = {
            {"file", output.string()},
            {"ok", true},
            {"project", projectDir.string()},
            {"header", core::castHeaderToJson(header)},
            {"min_speedup", options.minSpeedup},
            {"sanitize", mode == SanitizeMode::Auto ? "auto" : mode == SanitizeMode::On ? "on" : "off"},
            {"cards", cards},
            {"notes", verified->auditNotes},
            {"in_model_check", {{"run", exported->inModelCheck.run}, {"reason", exported->inModelCheck.reason}}},
            {"bytes", bytes->size()}};
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
              << (header.modelIncluded ? "included" : "not included") << "; " << bytes->size() << " bytes\n";
    for (const std::string& note : verified->auditNotes)
        std::cout << note << "\n";
    return 0;
}

} // namespace kforge::cli
