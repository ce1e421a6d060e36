#pragma once
// Capture: run a TorchScript model once with a recording hook, turn every top-level ATen call into
// operator cards, save real samples and eager latencies, and write a new project directory.
// Torch-free header; the implementation is a LibTorch adapter.
//
// Thread: runCapture may run on any thread (it records ops of that thread only). Cancellation: the
// stop flag is polled between phases and between cards; a cancelled or failed capture leaves no
// project behind. Progress is published through atomics for a UI timer to poll.

#include "capture/SampleBudget.h"
#include "model/Project.h"
#include "util/Result.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kforge::core {

struct CaptureOptions {
    std::filesystem::path modelPath;
    std::vector<std::string> inputs; // --inputs values (see parseInputSpec)
    std::filesystem::path outputDir; // must be absent or an empty folder
    std::string device = "auto";     // auto | cpu | cuda | cuda:N
    int samplesPerCard = 2;          // real samples saved per card
    // Total bytes of all samples; kAutomaticSampleBudget: half the free disk space or half the
    // available memory, whichever is smaller (SampleBudget.h).
    std::int64_t sampleBudgetBytes = kAutomaticSampleBudget;
    bool sampleVendorBacked = false; // also sample cuBLAS/cuDNN-backed cards
    std::uint64_t seed = 0;          // for synthesized inputs
};

enum class CapturePhase { Starting, Loading, Warmup, Recording, SavingSamples, TimingEager, Regions, Writing, Done };
const char* capturePhaseName(CapturePhase phase);

/// Polled by a UI: the phase and, within it, items done of total.
struct CaptureProgress {
    std::atomic<CapturePhase> phase{CapturePhase::Starting};
    std::atomic<int> done{0};
    std::atomic<int> total{0};
};

/// Wall times of the capture phases, in milliseconds.
struct CapturePhaseTimes {
    double loadMs = 0;
    double plainForwardMs = 0; // one plain forward after warm-up (median of 3), synchronized
    double recordPassMs = 0;   // the recorded forward, including input/sample copies, synchronized
    double saveSamplesMs = 0;
    double eagerTimingMs = 0;
    double regionsMs = 0; // region cards: the sampling forward, replay checks and chain timing
    double totalMs = 0;
};

struct CaptureReport {
    Project project;
    CapturePhaseTimes times;
    std::vector<std::string> notes; // things the user should know (e.g. "captured on CPU: no GPU")
};

Result<CaptureReport> runCapture(const CaptureOptions& options, CaptureProgress* progress = nullptr,
                                 const std::atomic<bool>* stop = nullptr);

} // namespace kforge::core
