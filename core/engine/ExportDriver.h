#pragma once
// `kforge export` as a library call, shared by the CLI and the desktop app: opens the project and
// its trees, selects and compiles each card's kernel (core/cast/CastExport) with NVRTC through the
// user's compile cache (the search's: a cache hit), runs the sanitizer gate in a kforge-worker
// under compute-sanitizer (docs/validation.md), reads the model, runs the in-model check (when the
// caller provides one) on a private copy of the package, and writes the package atomically after
// reading it back with the strict reader (a package the reader would refuse is never written).
// Torch-free.
//
// Thread: any; one call does all the work synchronously (seconds: compiles, sanitizer runs).

#include "cast_export/CastExport.h"

#include "model/Project.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kforge::core {

enum class SanitizeMode { Auto, On, Off };
const char* sanitizeModeName(SanitizeMode mode); // "auto", "on", "off"

/// Runs the in-model check on a written package (the model is in it) with the project's captured
/// inputs. Provided by builds that have libkforge_runtime (cast_run/InModelCheckRun.h).
using InModelChecker = std::function<InModelCheck(const std::filesystem::path& package, const CaptureInfo& capture)>;

/// Where a running export is, for a progress line or bar: written by the export's threads, read by
/// any other (the CLI polls it). `changed`, when set before the export starts, is called after each
/// change on the thread that made it: the export's, or a sanitizer gate's (several with
/// --sanitize-jobs, so it must be thread-safe); it must be quick (the desktop app hands the values
/// on to its GUI thread).
struct ExportProgress {
    std::atomic<int> card{0};               // cards looked at so far (the one in work included)
    std::atomic<int> cards{0};              // cards of the project; 0 before the project is read
    std::atomic<bool> checkingModel{false}; // the in-model check runs
    std::atomic<int> sanitizing{0};         // kernels whose sanitizer gate runs now (--sanitize-jobs at most)
    std::function<void()> changed;

    void notifyChanged() const
    {
        if (changed)
            changed();
    }
};

/// What the export does with the project's model (CaptureInfo::modelPath). Reading it and comparing
/// its hash with the captured one (CaptureInfo::modelSha, fnv1a64) is the export's own work, done on
/// the thread that runs exportProject (the model may be gigabytes: never a GUI thread's work).
enum class ModelInclusion {
    Required,    // in the package; a model that is missing or changed since the capture fails the export
    IfUnchanged, // in the package when its file is still the captured one, else a kernels-only package
                 // and ExportOutcome::modelNote says why (File > Export .cast)
    Omitted,     // a kernels-only package (kforge export --no-model)
};

struct ExportRequest {
    std::filesystem::path projectDir;
    std::filesystem::path output;
    double minSpeedup = kDefaultMinSpeedup;
    std::vector<std::string> cardIds;       // full ids (resolve prefixes first); empty: every card
    std::vector<std::string> architectures; // empty: each node's measured architecture
    SanitizeMode sanitize = SanitizeMode::Auto;
    /// Reuse a passed sanitizer verdict of the same kernel on the same samples, GPU and toolchain
    /// from an earlier export (core/cast_export/SanitizerVerdictCache.h); false runs the tools again.
    bool reuseSanitizerVerdicts = true;
    /// How many kernels' sanitizer gates run at once. Each gate is already five processes with a
    /// CUDA context each (the validation's worker and four compute-sanitizer tools, which reach
    /// their targets through local ports), so the default stays at one.
    int sanitizeJobs = 1;
    ModelInclusion model = ModelInclusion::Required;
    std::string workerPath;             // kforge-worker for the sanitizer gate
    InModelChecker inModelCheck;        // empty: the check is not run (said in the audit)
    ExportProgress* progress = nullptr; // updated when given; must outlive the call
    /// When given and set, the export stops before the next card or before the in-model check
    /// with ErrorCode::Cancelled and writes nothing (the card in work finishes first; sanitizer
    /// passes found so far are remembered). Must outlive the call.
    const std::atomic<bool>* stop = nullptr;
};

struct ExportOutcome {
    ExportResult exported; // decisions, the in-model check
    CastPackage verified;  // the package as the strict reader read it back
    std::size_t bytes = 0;
    /// Where the wall time went: the sanitizer gate (all kernels), the in-model check, everything.
    double sanitizerSeconds = 0;
    double inModelCheckSeconds = 0;
    double totalSeconds = 0;
    /// ModelInclusion::IfUnchanged only: why the model is not in the package ("the model changed
    /// since it was captured ..."); empty when it is in, or was left out on request.
    std::string modelNote;
};

/// The request `kforge export` and File > Export .cast both start from, so that the export policy
/// is spelled once: the defaults above (kDefaultMinSpeedup, every card, each node's measured
/// architecture, the sanitizer gate on Auto reusing earlier verdicts, one gate at a time, the model
/// required), the default kforge-worker (workerPath(nullopt): $KFORGE_WORKER, else next to the
/// executable) and the in-model check through kforge-cast-run (runInModelCheckTool). A front end
/// changes only what its user chose (flags, a menu).
ExportRequest defaultExportRequest(std::filesystem::path projectDir, std::filesystem::path output);

/// Errors are one line: the project, a missing/changed model (ModelInclusion::Required), an output
/// that exists and is not a .cast, a compile or sanitizer infrastructure failure, a write error.
Result<ExportOutcome> exportProject(const ExportRequest& request);

/// What an export of the project in `projectDir` with this minimum speedup and card selection
/// (full ids; empty: every card) would package, card by card, before anything is compiled
/// (core::previewCastExport). Reads the project and its search trees. Errors: the project or a
/// damaged tree (one line).
Result<std::vector<ExportPreviewRow>> previewExport(const std::filesystem::path& projectDir,
                                                    const std::vector<std::string>& cardIds, double minSpeedup);

/// Why `output` may not be written (an existing file that is not a .cast package, a folder), or
/// nullopt when it may.
std::optional<std::string> exportOutputProblem(const std::filesystem::path& output);

} // namespace kforge::core
