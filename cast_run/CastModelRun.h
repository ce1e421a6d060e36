#pragma once
// `kforge run`: the model of a .cast package (or a given TorchScript file) run end to end on the
// GPU, eager and with the package's kernels loaded through libkforge_runtime: latency of each,
// the output difference, and every kernel's hit and fallback counts.
//
// Timing: wall time of forward + device synchronize, median of `runs` per configuration. The runs
// go in up to five blocks per configuration that alternate eager (package not loaded) and the
// loaded package, so a host whose speed drifts during the run (a host-bound model's wall time
// follows it) moves both sides alike; `warmup` untimed passes before each side's first block, one
// before each later block. Kernel hit and fallback counts are summed over the blocks.
// Each configuration's GPU time too (ForwardGpuTimer.h: the host's launch overhead hidden; median
// of up to 10 passes): on a host-bound model the wall time is the host's, the GPU time the kernels'.

#include "RunSummary.h"
#include "util/Result.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kforge::runtime {

struct CastRunOptions {
    std::filesystem::path castFile;
    std::optional<std::filesystem::path> modelFile; // instead of the package's model
    std::vector<std::string> inputs;                // --inputs values
    std::uint64_t seed = 0;
    int runs = 20;
    int warmup = 3;
    bool kernels = true; // false: eager only (--no-kernels)
};

struct CastRunReport {
    std::string model;  // where the model came from
    std::string device; // "cuda:0 NVIDIA H200"
    int runs = 0;
    LatencySummary eager;
    std::optional<LatencySummary> cast;
    std::optional<OutputDifference> output;
    std::optional<double> eagerGpuMs, castGpuMs; // medians; unset when not isolated (gpuTimeNote says why)
    std::string gpuTimeNote;
    nlohmann::json kernels = nlohmann::json::array(); // runtime stats, with last_fallback_reason
    std::vector<std::string> notes;                   // region kernels that never run in this model, and why
};

/// Errors: an unreadable or unverifiable package, no model (kernels-only package and no
/// modelFile), bad inputs, no GPU, a package the runtime refuses.
core::Result<CastRunReport> runCastModel(const CastRunOptions& options);

/// The --json form (docs/cli.md, `kforge run`).
nlohmann::json toJson(const CastRunReport& report);

} // namespace kforge::runtime
