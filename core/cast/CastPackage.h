#pragma once
// Value types of a .cast package (docs/cast-format.md): what CastWriter writes
// and openCast() returns. Plain values, safe to copy across threads; nothing
// here touches a file or a GPU.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kforge::core {

/// The format this build writes. Readers accept any 1.x (minor versions only
/// add optional fields) and refuse a newer major version before checking
/// anything else.
inline constexpr int kCastFormatMajor = 1;
inline constexpr int kCastFormatMinor = 1; // 1.1: fused-region kernels (a card's "region")

/// Bounds the reader enforces (docs/cast-format.md, "Limits"). Every size and
/// count is checked from the ZIP central directory or HEADER.json before the
/// bytes or structures it describes are read or built, so that verifying any
/// file needs at most about the file's size twice plus a fixed amount for the
/// JSON entries.
struct CastLimits {
    std::uint64_t maxEntryBytes = 512ull << 20;   // per entry, declared and actual
    std::uint64_t maxTotalBytes = 2ull << 30;     // all entries together
    std::uint64_t maxEntries = 32768;             // ZIP entries
    std::uint64_t maxHeaderBytes = 64ull << 10;   // HEADER.json
    std::uint64_t maxManifestBytes = 16ull << 20; // manifest.json
    std::uint64_t maxAuditBytes = 4ull << 20;     // audit.json
    std::uint64_t maxKernels = 4096;              // manifest kernels, audit ops
    int maxJsonDepth = 64;                        // arrays and objects nested in one another
    std::uint64_t maxJsonValues = 1000000;        // values in one JSON entry
};

/// HEADER.json. `counts*` and `checksumsSha256` are filled by the writer and
/// checked by the reader.
struct CastHeader {
    int formatMajor = kCastFormatMajor;
    int formatMinor = kCastFormatMinor;
    std::string producer;                   // "kforge <kKforgeVersion>"
    std::string createdUtc;                 // ISO 8601, "2026-11-29T16:55:57Z"
    std::vector<std::string> architectures; // "sm_90", ...
    std::string minTorchVersion;            // "2.11"
    std::string minCudaVersion;             // "12.8"
    std::uint64_t kernelCount = 0;
    std::uint64_t customCount = 0;
    std::uint64_t fallbackCount = 0;
    std::uint64_t entryCount = 0; // ZIP entries, HEADER.json and checksums.sha256 included
    bool modelIncluded = false;
    std::string checksumsSha256; // SHA-256 of the checksums.sha256 entry

    bool operator==(const CastHeader&) const = default;
};

/// What the guard requires of one tensor argument of the call.
struct TensorGuard {
    std::string arg;   // schema argument name, "self"
    std::string dtype; // "float16", as in cards.json
    std::vector<std::int64_t> sizes;
    std::vector<std::int64_t> strides;
    std::int64_t alignmentBytes = 1; // data pointer alignment the kernel's vectorized loads need

    bool operator==(const TensorGuard&) const = default;
};

/// A kernel runs only when every tensor guard holds and the device has exactly
/// this capability.
struct KernelGuard {
    std::vector<TensorGuard> tensors; // in the order of the call's tensor arguments
    int capabilityMajor = 0;
    int capabilityMinor = 0;

    bool operator==(const KernelGuard&) const = default;
};

enum class KernelKind {
    Custom,   // a searched kernel replaces the eager one
    Fallback, // listed for the audit; the original PyTorch kernel runs (no code
              // in the package)
};
const char* kernelKindName(KernelKind kind);

/// One manifest entry. Byte blobs are held in memory; their entry paths are
/// derived from `id`.
struct CastKernel {
    std::string id;        // [A-Za-z0-9_-]+, unique in the package; names kernels/<id>/
    std::string cardId;    // the operator card's id in the project
    std::string op;        // "aten::add"
    std::string overload;  // "Tensor"
    nlohmann::json args;   // argument specs as in the project's cards.json
    nlohmann::json region; // a fused-region kernel's chain as cards.json holds it; null for an op
    KernelGuard guard;
    KernelKind kind = KernelKind::Custom;
    std::map<std::string, std::string> cubins; // "sm_90" -> cubin bytes
    std::optional<std::string> ptx;            // PTX for JIT on newer GPUs
    std::string ptxArch;                       // "compute_90": the oldest target the PTX runs on
    std::string source;                        // kernel.cu
    nlohmann::json launchPlan;                 // docs/kernel-contract.md plan object
    double speedup = 1.0;                      // eager median / kernel median
    double medianUs = 0.0;
    double spreadPercent = 0.0; // timing spread (IQR / median), percent
    nlohmann::json validation;  // the validation record
    std::string fallbackReason; // why, for Fallback

    bool operator==(const CastKernel&) const = default;
};

/// One line of audit.json: what happened to each op of the model.
struct AuditEntry {
    std::string cardId;
    std::string op;
    std::string decision; // "custom" or "fallback"
    std::string reason;   // why it fell back, or a short note

    bool operator==(const AuditEntry&) const = default;
};

/// A whole package as written or as read back (after verification).
struct CastPackage {
    CastHeader header;
    std::vector<CastKernel> kernels;
    std::vector<AuditEntry> audit;
    std::optional<std::string> model; // model.pt bytes (TorchScript)
    /// audit.json "notes": package-wide remarks of the export ("in-model check:
    /// not run (...)", kernels that were not sanitizer-checked). Optional in 1.0.
    std::vector<std::string> auditNotes;

    bool operator==(const CastPackage&) const = default;
};

/// "1.0" -> {1, 0}; nullopt unless it is MAJOR.MINOR with decimal digits only.
std::optional<std::pair<int, int>> parseFormatVersion(const std::string& text);

/// Compares dotted numeric versions ("2.11.0+cu128" vs "2.11"); the suffix
/// after '+' or any non-digit is ignored, missing components count as 0.
/// Returns <0, 0, >0.
int compareVersions(const std::string& a, const std::string& b);

/// True for "sm_NN"/"sm_NNN" (optionally followed by "a"), the names cubins are
/// stored under.
bool isArchName(const std::string& arch);
/// The numeric part of "sm_90"/"compute_90" (90); -1 when malformed.
int archNumber(const std::string& arch);

} // namespace kforge::core
