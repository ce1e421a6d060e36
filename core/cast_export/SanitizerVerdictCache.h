#pragma once
// Passed sanitizer-gate verdicts (docs/validation.md), kept in the user's cache so that exporting
// the same kernel again (an export resumed after it was cut off, another --min-speedup or card
// selection, the desktop app after the CLI) does not rerun the four compute-sanitizer tools, which
// take minutes on cards with gigabytes of samples. Only passes are kept: a finding, or a tool that
// did not finish, is checked afresh every time.
//
// A verdict is reused only when everything it depended on is unchanged, compared as text (not
// just by hash): the card's key, the kernel's source and launch plan, the captured samples the
// tools ran on (each file's name, size and modification time), the worker's description (GPU,
// architecture, CUDA driver and torch versions), the NVRTC and kforge versions and the sanitizer's
// path.
//
// Thread: a cache object is immutable; find and storePassed may run from several threads and
// processes (files are written atomically). Torch-free.

#include "model/OperatorCard.h"
#include "model/SearchNode.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace kforge::core {

/// What a verdict depended on: the text compared on reuse.
struct SanitizerVerdictInputs {
    std::string material;
};

/// The inputs of a verdict for `node`'s kernel on `card`, whose samples are in
/// projectDir/samples/<card id>/.
SanitizerVerdictInputs sanitizerVerdictInputs(const OperatorCard& card, const SearchNode& node,
                                              const std::filesystem::path& projectDir, const nlohmann::json& workerInfo,
                                              const std::string& nvrtcVersion, const std::string& sanitizerPath);

class SanitizerVerdictCache {
public:
    explicit SanitizerVerdictCache(std::filesystem::path dir) : m_dir(std::move(dir)) {}

    /// The record of a pass stored for exactly these inputs, with "reused": {"checked_utc": when
    /// the tools ran} added; nullopt when there is none (or the file is unreadable or damaged).
    std::optional<nlohmann::json> find(const SanitizerVerdictInputs& inputs) const;
    /// Stores a passed verdict's record (best effort: a cache that cannot be written is skipped).
    void storePassed(const SanitizerVerdictInputs& inputs, const nlohmann::json& record) const;

private:
    std::filesystem::path fileFor(const SanitizerVerdictInputs& inputs) const;

    std::filesystem::path m_dir;
};

} // namespace kforge::core
