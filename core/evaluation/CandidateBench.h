#pragma once
// Compile, validate and time one candidate kernel for one card: the engine side of `kforge bench`,
// of every search iteration (BenchEvaluator) and of the app's Benchmark Edit (ManualEditJob).
// Compilation is asked for here (CachingCompiler: NVRTC in kforge-nvrtc, cached); everything that
// touches the GPU runs in a kforge-worker through WorkerClient, so a candidate that faults or hangs
// costs a worker, never the engine. Torch-free.
//
// Thread: one call at a time per WorkerClient (the client is not reentrant).

#include "kernel/CachingCompiler.h"
#include "model/Project.h"
#include "protocol/WorkerClient.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kforge::core {

struct BenchRequest {
    std::filesystem::path projectDir;
    OperatorCard card;
    std::string source; // CUDA source of the candidate
    std::string sourceName = "candidate.cu";
    std::optional<nlohmann::json> plan;               // nullopt: the plan embedded in the source
    std::optional<std::string> architecture;          // nullopt: the worker's GPU, else sm_90
    std::chrono::milliseconds evaluateTimeout{60000}; // the watchdog for the compile, and for validation + timing
    /// When set during the compile, benchCandidate returns Cancelled (not owned; may be null). The
    /// evaluation runs to its end or its timeout unless stopEvaluation, when the flag also kills the
    /// worker (Cancelled): a search keeps the candidate in flight, `kforge bench` stops at once.
    const std::atomic<bool>* stop = nullptr;
    bool stopEvaluation = false;
    nlohmann::json evaluationOptions = nlohmann::json::object(); // see CandidateEvaluator
    /// The best speedup of the card's tree per GPU model: the entry of the worker's GPU goes to the
    /// evaluation as "best_speedup", below which timing may stop early (docs/validation.md).
    std::map<std::string, double> bestSpeedupByGpu;
    /// After a passed evaluation, run the validation on the captured samples again in workers
    /// started under compute-sanitizer (memcheck, racecheck, initcheck, synccheck).
    bool sanitize = false;
    std::chrono::milliseconds sanitizerTimeout{600000}; // per tool
};

/// The kernels a PTX module defines (".entry NAME"), in order.
std::vector<std::string> ptxEntryNames(const std::string& ptx);

/// The report (docs/validation.md): {"status", "reason", "compile", "evaluation", "worker", ...}.
/// "status" is one of passed, failed, compile-error, invalid-plan, crashed, timed-out,
/// compiled-only (no GPU), worker-error. Result errors are for requests that make no sense (a card
/// without outputs), not for candidates that fail.
Result<nlohmann::json> benchCandidate(const BenchRequest& request, CachingCompiler& compiler, WorkerClient& worker);

} // namespace kforge::core
