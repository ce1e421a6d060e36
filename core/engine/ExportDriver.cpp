#include "engine/ExportDriver.h"

#include "cast/CastReader.h"
#include "cast/CastWriter.h"
#include "cast_export/SanitizerVerdictCache.h"
#include "engine/InModelCheckTool.h"
#include "evaluation/CandidateBench.h"
#include "evaluation/SanitizerTool.h"
#include "kernel/CachingCompiler.h"
#include "model/EvaluationReport.h"
#include "project/ProjectStore.h"
#include "protocol/WorkerClient.h"
#include "protocol/WorkerPath.h"
#include "util/AtomicFile.h"
#include "util/CacheDirectory.h"
#include "util/Hash.h"
#include "util/UtcTime.h"
#include "util/Version.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>

namespace kforge::core {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// "2.11.0+cu128" -> "2.11".
std::string majorMinor(const std::string& version)
{
    const auto first = version.find('.');
    if (first == std::string::npos)
        return version;
    const auto second = version.find_first_not_of("0123456789", first + 1);
    return version.substr(0, second);
}

std::string firstCompileError(const CompiledKernel& kernel)
{
    for (const Diagnostic& d : kernel.diagnostics) {
        if (d.severity == DiagnosticSeverity::Error)
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
// check() may run on several threads at once (ExportOptions::sanitizeConcurrency): each call
// borrows a GPU worker of its own from a pool that grows to as many as run at once.
class SanitizerGate {
public:
    SanitizerGate(SanitizeMode mode, WorkerCommand worker, fs::path projectDir, CachingCompiler& compiler,
                  bool reuseVerdicts, ExportProgress* progress)
        : m_mode(mode), m_workerCommand(std::move(worker)), m_projectDir(std::move(projectDir)), m_compiler(compiler),
          m_reuseVerdicts(reuseVerdicts), m_verdicts(userCacheDirectory() / "sanitizer-verdicts"), m_progress(progress)
    {
    }
    ~SanitizerGate()
    {
        for (const std::unique_ptr<WorkerClient>& worker : m_idleWorkers)
            worker->shutdown();
    }

    /// Wall time during which at least one check() ran, workers' starts included.
    double seconds() const
    {
        std::lock_guard lock(m_mutex);
        return m_seconds;
    }

    Result<SanitizerVerdict> check(const OperatorCard& card, const SearchNode& node)
    {
        {
            std::lock_guard lock(m_mutex);
            if (m_running++ == 0)
                m_busySince = std::chrono::steady_clock::now();
            if (m_progress) {
                m_progress->sanitizing = m_running;
                m_progress->notifyChanged();
            }
        }
        Result<SanitizerVerdict> verdict = verdictFor(card, node);
        std::lock_guard lock(m_mutex);
        if (m_progress) {
            m_progress->sanitizing = m_running - 1;
            m_progress->notifyChanged();
        }
        if (--m_running == 0)
            m_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - m_busySince).count();
        return verdict;
    }

private:
    // A worker for one check, returned to the pool by the deleter.
    using BorrowedWorker = std::unique_ptr<WorkerClient, std::function<void(WorkerClient*)>>;
    BorrowedWorker borrowWorker()
    {
        std::unique_ptr<WorkerClient> worker;
        {
            std::lock_guard lock(m_mutex);
            if (!m_idleWorkers.empty()) {
                worker = std::move(m_idleWorkers.back());
                m_idleWorkers.pop_back();
            }
        }
        if (!worker)
            worker = std::make_unique<WorkerClient>(m_workerCommand);
        return BorrowedWorker(worker.release(), [this](WorkerClient* returned) {
            std::lock_guard lock(m_mutex);
            m_idleWorkers.emplace_back(returned);
        });
    }

    Result<SanitizerVerdict> verdictFor(const OperatorCard& card, const SearchNode& node)
    {
        {
            std::lock_guard lock(m_probeMutex); // the first caller probes, the others wait for its answer
            if (!m_probed)
                probe();
        }
        if (!m_unavailable.empty()) {
            if (m_mode == SanitizeMode::On)
                return makeError(ErrorCode::Unsupported, m_unavailable + ": cannot run the sanitizer gate",
                                 "--sanitize on");
            return SanitizerVerdict{json{{"checked", false}, {"reason", m_unavailable + ": not sanitizer-checked"}},
                                    {}};
        }
        const SanitizerVerdictInputs inputs = sanitizerVerdictInputs(
            card, node, m_projectDir, m_workerInfo, m_compiler.compiler().nvrtcVersion(), m_sanitizerPath);
        const bool tty = ::isatty(STDERR_FILENO);
        if (m_reuseVerdicts) {
            if (std::optional<json> passed = m_verdicts.find(inputs)) {
                if (tty)
                    std::fprintf(stderr, "\r\033[Kkforge: sanitizer: %s %s (%s): passed before, reused\n",
                                 card.id.substr(0, 8).c_str(), card.qualifiedName().c_str(), node.id.c_str());
                return SanitizerVerdict{*passed, {}};
            }
        }
        if (tty)
            std::fprintf(stderr, "\r\033[Kkforge: sanitizer: %s %s (%s) ...\n", card.id.substr(0, 8).c_str(),
                         card.qualifiedName().c_str(), node.id.c_str());
        BenchRequest request;
        request.projectDir = m_projectDir;
        request.card = card;
        request.source = node.candidate.source;
        if (node.candidate.launchPlan.is_object() && !node.candidate.launchPlan.empty())
            request.plan = node.candidate.launchPlan;
        request.evaluationOptions = json{{"time", false}};
        request.sanitize = true;
        BorrowedWorker worker = borrowWorker();
        auto report = benchCandidate(request, m_compiler, *worker);
        if (!report)
            return SanitizerVerdict{json{{"checked", false}, {"reason", report.error().toString()}},
                                    "the gate could not run: " + report.error().toString()};
        const EvaluationReport evaluation = EvaluationReport::fromJson(report.value());
        const std::string& status = evaluation.status;
        // The verdict keeps the report's sanitizer record as it is (the package's audit and the
        // verdict cache store it).
        json record = evaluation.sanitizer ? evaluation.document().at("sanitizer")
                                           : json{{"checked", false}, {"reason", "not reached: validation " + status}};
        if (status == "passed") {
            m_verdicts.storePassed(inputs, record);
            return SanitizerVerdict{record, {}};
        }
        std::string finding = evaluation.reason.line.empty() ? "validation " + status : evaluation.reason.line;
        if (evaluation.sanitizer && !evaluation.sanitizer->tools.empty()) {
            for (const SanitizerToolResult& run : evaluation.sanitizer->tools) {
                const std::string line = firstFinding(run.log);
                if (!line.empty() && finding.find(run.tool) != std::string::npos) {
                    finding += ": " + line;
                    break;
                }
            }
        } else {
            finding = "validation " + status + ": " + finding;
        }
        return SanitizerVerdict{record, finding};
    }

    void probe()
    {
        m_probed = true;
        if (m_mode == SanitizeMode::Off)
            return;
        m_sanitizerPath = findComputeSanitizer();
        if (m_sanitizerPath.empty()) {
            m_unavailable = "compute-sanitizer not found";
            return;
        }
        BorrowedWorker worker = borrowWorker();
        WorkerResponse hello = worker->start();
        if (!hello.ok()) {
            std::string why = hello.describe();
            why = why.substr(0, why.find('\n'));
            m_unavailable = "the GPU worker did not start (" + why + ")";
            return;
        }
        const json gpu = hello.result.value("info", json());
        m_workerInfo = gpu;
        if (!gpu.is_object() || !gpu.contains("architecture") || !gpu.at("architecture").is_string())
            m_unavailable = "no GPU in the worker" +
                (gpu.is_object() && gpu.contains("reason") && gpu.at("reason").is_string()
                     ? " (" + gpu.at("reason").get<std::string>() + ")"
                     : std::string());
    }

    SanitizeMode m_mode;
    WorkerCommand m_workerCommand;
    fs::path m_projectDir;
    CachingCompiler& m_compiler; // shared with the export's own compiles (same cache; thread-safe)
    bool m_reuseVerdicts;
    SanitizerVerdictCache m_verdicts; // one file per kernel's inputs: concurrent checks touch different files
    mutable std::mutex m_mutex;       // the worker pool and the busy-time bookkeeping
    std::vector<std::unique_ptr<WorkerClient>> m_idleWorkers;
    int m_running = 0;
    std::chrono::steady_clock::time_point m_busySince;
    double m_seconds = 0;
    ExportProgress* m_progress; // may be null
    std::mutex m_probeMutex;    // guards the probe and what it sets, which later calls only read
    bool m_probed = false;
    std::string m_unavailable; // why the gate cannot run; empty when it can
    std::string m_sanitizerPath;
    json m_workerInfo; // the worker's hello info (GPU, architecture, versions): part of a verdict's inputs
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
        if (auto existing = openCast(output); !existing)
            return output.string() + ": exists and is not a .cast package; refusing to overwrite it";
    }
    const fs::path parent = output.parent_path().empty() ? fs::path(".") : output.parent_path();
    if (!fs::is_directory(parent, ec))
        return output.string() + ": cannot write: no directory " + parent.string();
    if (::access(parent.c_str(), W_OK | X_OK) != 0)
        return output.string() + ": cannot write: the directory " + parent.string() + " is not writable";
    return std::nullopt;
}

// The in-model check on a private copy of the package (in the user's cache, removed afterwards),
// or why it is not run: no checker in this build, a kernels-only package, no custom kernel.
Result<InModelCheck> runInModelCheck(const ExportRequest& request, const CastPackage& package, const std::string& bytes,
                                     const CaptureInfo& capture)
{
    const bool anyCustom = std::any_of(package.kernels.begin(), package.kernels.end(),
                                       [](const CastKernel& k) { return k.kind == KernelKind::Custom; });
    if (!package.model)
        return InModelCheck{false, false, "kernels-only package: no model to run", {}};
    if (!anyCustom)
        return InModelCheck{false, false, "no custom kernel to check", {}};
    if (!request.inModelCheck)
        return InModelCheck{false, false, "this build has no CUDA runtime (libkforge_runtime)", {}};
    const fs::path dir = userCacheDirectory() / "export-check";
    std::error_code ec;
    fs::create_directories(dir, ec);
    const fs::path copy = dir / (std::to_string(::getpid()) + "-" + fnv1a64Hex(bytes) + ".cast");
    if (auto written = writeFileAtomically(copy, bytes); !written)
        return makeError(written.error().code,
                         "cannot write the package for the in-model check: " + written.error().message, copy.string());
    InModelCheck check = request.inModelCheck(copy, capture);
    fs::remove(copy, ec);
    return check;
}

// The captured model's bytes, read (and hashed, against the captured hash) on the export's thread;
// else why it cannot go into the package. `hint` (kforge export's way out: --no-model) ends the
// message when it is given.
Result<std::string> readCapturedModel(const fs::path& projectDir, const CaptureInfo& capture, bool hint)
{
    const std::string kernelsOnly = hint ? "; pass --no-model for a kernels-only package" : "";
    const std::string& modelPath = capture.modelPath;
    if (modelPath.empty())
        return makeError(ErrorCode::NotFound, "no model_path recorded" + kernelsOnly,
                         (projectDir / ProjectPaths::kProjectFile).string());
    auto model = readWholeFile(modelPath);
    if (!model)
        return makeError(ErrorCode::NotFound,
                         "the project's model cannot be read (" + model.error().message + ")" + kernelsOnly, modelPath);
    if (!capture.modelSha.empty()) {
        const std::string hash = fnv1a64Hex(model.value());
        if (hash != capture.modelSha)
            return makeError(ErrorCode::InvalidArgument,
                             "the model changed since it was captured (fnv1a64 " + hash + ", the project has " +
                                 capture.modelSha + ")" + (hint ? "; capture it again, or pass --no-model" : ""),
                             modelPath);
    }
    return model;
}

} // namespace

ExportRequest defaultExportRequest(fs::path projectDir, fs::path output)
{
    ExportRequest request;
    request.projectDir = std::move(projectDir);
    request.output = std::move(output);
    request.workerPath = workerPath(std::nullopt);
    request.inModelCheck = runInModelCheckTool;
    return request;
}

const char* sanitizeModeName(SanitizeMode mode)
{
    switch (mode) {
    case SanitizeMode::Auto:
        return "auto";
    case SanitizeMode::On:
        return "on";
    case SanitizeMode::Off:
        return "off";
    }
    return "auto";
}

std::optional<std::string> exportOutputProblem(const fs::path& output)
{
    return checkOutput(output);
}

Result<std::vector<ExportPreviewRow>> previewExport(const fs::path& projectDir, const std::vector<std::string>& cardIds,
                                                    double minSpeedup)
{
    auto project = openProject(projectDir);
    if (!project)
        return project.error();
    auto trees = loadProjectTrees(projectDir, project.value());
    if (!trees)
        return trees.error();
    return previewCastExport(project.value(), trees.value(), cardIds, minSpeedup);
}

Result<ExportOutcome> exportProject(const ExportRequest& request)
{
    const auto started = std::chrono::steady_clock::now();
    const auto secondsSince = [](std::chrono::steady_clock::time_point from) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
    };
    const fs::path& projectDir = request.projectDir;
    const fs::path& output = request.output;
    auto project = openProject(projectDir);
    if (!project)
        return project.error();
    if (project->cards.empty())
        return makeError(ErrorCode::InvalidArgument, "the project has no cards", projectDir.string());
    if (auto problem = checkOutput(output))
        return makeError(ErrorCode::InvalidArgument, *problem, "export");

    ExportOptions options;
    options.minSpeedup = request.minSpeedup;
    options.cardIds = request.cardIds;
    options.architectures = request.architectures;
    std::string modelNote;
    if (request.model != ModelInclusion::Omitted) {
        auto model = readCapturedModel(projectDir, project->capture, request.model == ModelInclusion::Required);
        if (model)
            options.model = std::move(model.value());
        else if (request.model == ModelInclusion::Required)
            return model.error();
        else
            modelNote = "kernels-only package: " + model.error().message;
    }

    auto trees = loadProjectTrees(projectDir, project.value());
    if (!trees)
        return trees.error();

    CachingCompiler compiler(userCacheDirectory() / "nvrtc");
    options.compile = [&compiler, &request](const std::string& source,
                                            const std::string& arch) -> Result<ExportCompiled> {
        CompileOptions compileOptions;
        compileOptions.architecture = arch; // the options the search compiled with: a cache hit
        compileOptions.stop = request.stop; // a miss (another architecture) compiles under the default timeout
        auto compiled = compiler.compile(source, compileOptions);
        if (!compiled)
            return compiled.error();
        if (!compiled->ok)
            return makeError(ErrorCode::InvalidArgument, firstCompileError(compiled.value()));
        return ExportCompiled{
            std::string(reinterpret_cast<const char*>(compiled->cubin.data()), compiled->cubin.size()), compiled->ptx};
    };
    WorkerCommand worker;
    worker.executable = request.workerPath;
    SanitizerGate gate(request.sanitize, worker, fs::absolute(projectDir), compiler, request.reuseSanitizerVerdicts,
                       request.progress);
    if (request.sanitize != SanitizeMode::Off)
        options.sanitize = [&gate](const OperatorCard& card, const SearchNode& node) { return gate.check(card, node); };
    options.sanitizeConcurrency = request.sanitizeJobs;
    options.producer = std::string("kforge ") + kKforgeVersion;
    options.createdUtc = utcNowIso8601();
    options.minTorchVersion = majorMinor(project->capture.torchVersion);
    options.minCudaVersion = compiler.compiler().nvrtcVersion();
    const auto stopRequested = [&request] { return request.stop && request.stop->load(); };
    options.beforeCard = [&](std::size_t index, std::size_t count) {
        if (request.progress) {
            request.progress->cards = static_cast<int>(count);
            request.progress->card = static_cast<int>(index) + 1;
            request.progress->notifyChanged();
        }
        return !stopRequested();
    };

    auto exported = buildCastExport(project.value(), trees.value(), options);
    if (!exported)
        return exported.error();
    auto bytes = CastWriter::build(exported->package);
    if (!bytes)
        return makeError(bytes.error().code, bytes.error().toString(), output.string());
    if (stopRequested())
        return makeError(ErrorCode::Cancelled, "export cancelled: nothing written", "before the in-model check");
    if (request.progress) {
        request.progress->checkingModel = true;
        request.progress->notifyChanged();
    }
    const auto checkStarted = std::chrono::steady_clock::now();
    auto check = runInModelCheck(request, exported->package, bytes.value(), project->capture);
    const double inModelCheckSeconds = secondsSince(checkStarted);
    if (request.progress) {
        request.progress->checkingModel = false;
        request.progress->notifyChanged();
    }
    if (!check)
        return check.error();
    applyInModelCheck(exported.value(), std::move(check.value()));
    // Rebuilt in every case: the check's audit note is part of the package.
    bytes = CastWriter::build(exported->package);
    if (!bytes)
        return makeError(bytes.error().code, bytes.error().toString(), output.string());
    auto verified = readCast(bytes.value(), output.string());
    if (!verified)
        return makeError(ErrorCode::Internal, "the exported package does not verify: " + verified.error().toString(),
                         "export");
    if (auto written = writeFileAtomically(output, bytes.value()); !written)
        return written.error();
    ExportOutcome outcome;
    outcome.exported = std::move(exported.value());
    outcome.verified = std::move(verified.value());
    outcome.bytes = bytes->size();
    outcome.sanitizerSeconds = gate.seconds();
    outcome.inModelCheckSeconds = inModelCheckSeconds;
    outcome.totalSeconds = secondsSince(started);
    outcome.modelNote = std::move(modelNote);
    return outcome;
}

} // namespace kforge::core
