#pragma once
// The in-memory form of a project directory (format: docs/project-format.md).

#include "model/CallGraph.h"
#include "model/OperatorCard.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::core {

/// How and where the model was captured.
struct CaptureInfo {
    std::string modelPath;       // absolute path of the TorchScript file at capture time
    std::string modelSha;        // fnv1a64 of the model file bytes (detects a changed model)
    std::string inputs;          // the --inputs spec (an inputs file as an absolute path)
    std::uint64_t inputSeed = 0; // the seed synthesized inputs were made with (--seed)
    std::string device;          // "cuda:0" or "cpu"
    std::string deviceName;      // "NVIDIA H200" or "cpu"
    std::string torchVersion;
    std::string kforgeVersion;
    std::string createdUtc;        // ISO 8601
    std::int64_t totalCalls = 0;   // top-level ATen calls recorded
    std::int64_t ignoredCalls = 0; // top-level calls outside the aten namespace (not carded)
    int samplesPerCard = 0;        // --samples
    std::int64_t sampleBudgetBytes = 0;
    double totalEagerUs = 0; // sum of every card's median x call count

    bool operator==(const CaptureInfo&) const = default;
};

struct Project {
    static constexpr int kFormatVersion = 1;

    int formatVersion = kFormatVersion;
    CaptureInfo capture;
    std::vector<OperatorCard> cards; // in order of first call
    CallGraph graph;                 // the forward's dataflow; empty for projects captured before it

    const OperatorCard* findCard(const std::string& idOrPrefix) const;

    bool operator==(const Project&) const = default;
};

} // namespace kforge::core
