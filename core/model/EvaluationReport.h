#pragma once
// What one evaluation of a candidate found, typed (value type): the compile result, the validation
// checks, the timings with the paired speedup, the sanitizer verdict and the failure reason.
//
// The worker and the bench speak JSON (the bench report, docs/validation.md), and JSON stays the
// storage format (a node's "evaluation_details" in tree.json, docs/search.md). fromJson() is the one
// place that reads that JSON: the search, export, the CLI and the GUI read the typed fields, never
// the document. The document itself is kept as it came (document()) so that a tree is written back
// with everything it held, fields this build does not know included.
//
// Thread: plain value; safe to read from any thread once copied.

#include "util/FailureText.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kforge::core {

/// Timing of a candidate in microseconds (median and quartiles of the repetitions).
struct LatencyStats {
    double medianUs = 0;
    double q1Us = 0;
    double q3Us = 0;

    bool operator==(const LatencyStats&) const = default;
};

/// One compiler message (NVRTC), as the bench parsed it.
struct CompileDiagnostic {
    std::string file;
    int line = 0;         // 0: unknown
    int column = 0;       // 0: unknown
    std::string severity; // "error", "warning", "remark", "note"
    std::string message;
};

/// One launch's kernel as the compile reported it ("compile.kernels": ptxas's resource report and the
/// theoretical occupancy of the launch's block size, evaluation/KernelResourceReport.h).
struct KernelResourceUse {
    std::string entry;
    std::optional<int> registers; // per thread; absent when the log did not report the kernel
    std::int64_t sharedBytes = 0; // static, per block
    std::int64_t dynamicSharedBytes = 0;
    std::int64_t spillStoreBytes = 0;
    std::int64_t spillLoadBytes = 0;
    std::int64_t threadsPerBlock = 0;
    std::optional<double> occupancy; // resident warps / the SM's maximum
    int warpsPerSm = 0;
    int maxWarpsPerSm = 0;
    std::string occupancyLimitedBy; // "registers", "shared memory", "warps", "blocks"
};

/// The "compile" part of a report.
struct CompileResult {
    bool ok = false;
    std::string architecture; // "sm_90"; empty when the report does not say
    std::optional<double> ms;
    bool fromCache = false;
    std::string log; // the compiler's whole log (kept for failed compiles)
    std::vector<CompileDiagnostic> diagnostics;
    int errors = 0;   // diagnostics of severity "error"
    int warnings = 0; // diagnostics of severity "warning"
    /// Per launch of the plan, its kernel's resource use (reports written before it: empty).
    std::vector<KernelResourceUse> kernels;
};

/// One validation check: "sample call-3: output 0" is the check "output 0" on the input set
/// "sample call-3".
struct ValidationCheck {
    std::string name;     // as reported
    std::string inputSet; // the part of the name before ": " (empty when there is none)
    std::string check;    // the part after it (the whole name when there is no input set)
    bool passed = false;
    std::string detail;
};

/// The check that failed validation (or timing: check "timing"), and why.
struct CheckFailure {
    std::string check;
    std::string message;
};

/// The worker's validation: every check in order, how many input sets, the first failure.
struct ValidationResult {
    std::string status; // the worker's "passed" / "failed"
    std::vector<ValidationCheck> checks;
    std::optional<int> inputSets;
    std::optional<CheckFailure> failure;
    /// The GPU as the worker described it (free-form: name, compute capability, SMs, ...); copied
    /// into export audits as is.
    nlohmann::json device;
};

/// Candidate and eager timed interleaved on the same inputs (docs/validation.md, "Timing").
struct TimingReport {
    std::string method; // "cupti kernel activity, L2 flushed", ...
    std::optional<LatencyStats> candidate;
    std::optional<LatencyStats> eager;
    std::optional<LatencyStats> candidateWarmL2;
    std::optional<LatencyStats> eagerWarmL2;
    std::optional<int> repetitions; // of the cold candidate timing
    /// The median of the per-repetition ratios eager / candidate: the speedup (nodeSpeedup).
    std::optional<double> pairedSpeedup;
    /// The quartiles of those ratios, when the worker reports them (its spread).
    std::optional<double> pairedSpeedupQ1;
    std::optional<double> pairedSpeedupQ3;
    std::optional<double> speedupOfMedians; // eager median / candidate median
};

/// Bytes the op must move over the candidate's median, against the device's copy bandwidth.
struct BandwidthReport {
    std::optional<std::int64_t> bytes;
    std::optional<double> achievedGbPerS;
    std::optional<double> deviceCopyGbPerS;
    std::optional<double> fractionOfCopy;
    std::string unavailable; // why it was not measured, when not
};

/// One compute-sanitizer tool's run.
struct SanitizerToolResult {
    std::string tool;          // "memcheck", ...
    std::optional<int> errors; // its summary's count; absent when its log had none
    std::string evaluation;    // the worker's status under the tool, or why it failed
    std::string log;           // the tool's log
    std::string skipped;       // why the tool did not run (it can find nothing in this candidate)
};

/// The sanitizer gate (docs/validation.md, "Sanitizer gate").
struct SanitizerResult {
    bool checked = false;
    std::optional<bool> passed;
    std::string reason; // why not checked
    std::vector<SanitizerToolResult> tools;
};

struct EvaluationReport {
    /// The bench status: passed, failed, compile-error, invalid-plan, crashed, timed-out,
    /// compiled-only, worker-error; empty when the document does not say (a synthetic evaluator).
    std::string status;
    /// Why it did not pass (or why it was compiled only): one line and an optional detail.
    FailureText reason;
    std::optional<CompileResult> compile;
    std::optional<ValidationResult> validation; // present when the worker evaluated
    std::optional<TimingReport> timing;
    std::optional<BandwidthReport> bandwidth;
    std::optional<SanitizerResult> sanitizer;
    /// The GPU model the evaluating worker named ("NVIDIA H200"); empty when unknown. Timings are
    /// only compared within one GPU model.
    std::string gpuModel;

    /// Reads a report. Never throws: a missing field or one of another type is absent, so reports
    /// of earlier versions, partial ones and garbage all read (garbage as an empty report). The
    /// reason is reduced to one line (FailureText); the document is kept as given.
    static EvaluationReport fromJson(const nlohmann::json& document) noexcept;

    /// The document the report was read from (an empty object for a default report).
    const nlohmann::json& document() const { return m_document; }

    /// Reports are equal when their documents are (the typed fields follow from it).
    bool operator==(const EvaluationReport& other) const { return m_document == other.m_document; }

private:
    nlohmann::json m_document = nlohmann::json::object();
};

} // namespace kforge::core
