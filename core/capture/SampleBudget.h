#pragma once
// How much of a model's activations a capture may keep as samples when the user names no budget
// (docs/project-format.md, "Samples"). Samples are held in host memory until the project is written
// and then stored in it, so the automatic budget follows both: half the space free on the file
// system the project goes to and half the memory available now, whichever is smaller. A real
// model's samples (the first calls of every card) then fit wherever the machine can hold them,
// with no flag to know about; `--sample-budget-mb` still sets a fixed budget.
// Torch-free; thread: any.

#include "util/Result.h"

#include <cstdint>
#include <filesystem>
#include <string>

namespace kforge::core {

/// CaptureOptions::sampleBudgetBytes for "follow the machine" (resolveSampleBudget).
inline constexpr std::int64_t kAutomaticSampleBudget = -1;

struct SampleBudget {
    std::int64_t bytes = 0;
    std::string basis; // "half the free disk space of /p, 40.2 GB free": what set it, for the note
};

/// The automatic budget from the free bytes of the project's file system and the available memory:
/// the smaller half of the two (0 when either is 0).
std::int64_t automaticSampleBudgetBytes(std::int64_t freeDiskBytes, std::int64_t availableMemoryBytes);

/// The automatic budget for a project written to `outputDir` (which need not exist yet: its nearest
/// existing parent's file system counts), measured now. An error when neither can be measured.
Result<SampleBudget> resolveAutomaticSampleBudget(const std::filesystem::path& outputDir);

/// "812 MB" / "11.3 GB": bytes as the capture's notes print them (1 MB = 2^20 bytes).
std::string sampleBytesText(std::int64_t bytes);

} // namespace kforge::core
