#pragma once
// One compute-sanitizer tool's run of a candidate's captured-sample validation: the worker is
// started under the tool, asked to "evaluate", shut down, and the tool's log is read for its
// summary. The export gate (CandidateBench's sanitize) runs the four tools through this. Torch-free.
//
// The tool writes its summary only when it exits, after the worker has: with gigabytes of tracked
// allocations (initcheck keeps a shadow of every byte) and four tools sharing one GPU that takes
// seconds, so the sanitized worker gets kSanitizerExitGrace to exit before it is killed. A log
// without a summary is a failure, never a clean run.

#include "protocol/WorkerClient.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>

namespace kforge::core {

/// How long a sanitized worker (the tool and the worker under it) may take to exit after
/// "shutdown" before it is killed: the tool's summary is written in that time.
inline constexpr std::chrono::milliseconds kSanitizerExitGrace{120000};

/// compute-sanitizer from PATH, else the CUDA toolkit's; empty when not installed.
std::string findComputeSanitizer();

/// Counts the errors a compute-sanitizer log reports ("ERROR SUMMARY: N errors" for memcheck,
/// initcheck and synccheck; "RACECHECK SUMMARY: ... (N errors, M warnings)" for racecheck).
/// nullopt when the log holds no summary (the tool did not finish).
std::optional<int> sanitizerErrorCount(const std::string& log);

struct SanitizerToolRun {
    /// {"errors": N or null, "evaluation": the worker's status or its failure, "seconds": {"start",
    /// "evaluate", "exit"} (wall time of each step), "log" (on failure)}.
    nlohmann::json record;
    /// One line when the tool found something, the evaluation failed or the log has no summary;
    /// empty when the run was clean.
    std::string failure;
};

/// Runs `worker` (its executable, arguments and environment) under `sanitizer --tool toolName`,
/// sends one "evaluate" request with `evaluatePayload` (timeout: the watchdog), shuts it down and
/// reads the tool's log. PyTorch's caching allocator is turned off in that worker, so that every
/// buffer is its own allocation and an access past one is an error the tool can see.
SanitizerToolRun runSanitizerTool(const std::string& sanitizer, const std::string& toolName,
                                  const nlohmann::json& evaluatePayload, const WorkerCommand& worker,
                                  std::chrono::milliseconds timeout);

} // namespace kforge::core
