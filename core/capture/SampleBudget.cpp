#include "capture/SampleBudget.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace kforge::core {

namespace fs = std::filesystem;

namespace {

// MemAvailable of /proc/meminfo (what the kernel can hand out without swapping), else the free
// physical pages; -1 when neither is known.
std::int64_t availableMemoryBytes()
{
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::int64_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit)
        if (key == "MemAvailable:")
            return kib * 1024;
    const long pages = ::sysconf(_SC_AVPHYS_PAGES);
    const long pageSize = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && pageSize > 0 ? static_cast<std::int64_t>(pages) * pageSize : -1;
}

// The free bytes (for an unprivileged user) of the file system `path` is or would be created on;
// -1 when no parent of it exists.
std::int64_t freeDiskBytes(fs::path path, fs::path& measured)
{
    std::error_code ec;
    path = fs::absolute(path, ec);
    while (!path.empty()) {
        if (fs::exists(path, ec)) {
            const fs::space_info space = fs::space(path, ec);
            if (ec)
                return -1;
            measured = path;
            return static_cast<std::int64_t>(std::min<std::uintmax_t>(space.available, INT64_MAX));
        }
        if (path == path.parent_path())
            break;
        path = path.parent_path();
    }
    return -1;
}

} // namespace

std::int64_t automaticSampleBudgetBytes(std::int64_t freeDisk, std::int64_t availableMemory)
{
    return std::max<std::int64_t>(0, std::min(freeDisk, availableMemory) / 2);
}

std::string sampleBytesText(std::int64_t bytes)
{
    constexpr double kMiB = 1 << 20;
    const double mb = static_cast<double>(bytes) / kMiB;
    char text[64];
    if (mb < 1024)
        std::snprintf(text, sizeof text, "%.0f MB", mb);
    else
        std::snprintf(text, sizeof text, "%.1f GB", mb / 1024);
    return text;
}

Result<SampleBudget> resolveAutomaticSampleBudget(const fs::path& outputDir)
{
    fs::path measured;
    const std::int64_t disk = freeDiskBytes(outputDir, measured);
    const std::int64_t memory = availableMemoryBytes();
    if (disk < 0 && memory < 0)
        return makeError(ErrorCode::Io,
                         "cannot measure free disk space or available memory for the automatic "
                         "sample budget: pass --sample-budget-mb",
                         outputDir.string());
    // An unmeasurable one does not limit: the other sets the budget.
    const std::int64_t diskLimit = disk < 0 ? memory : disk;
    const std::int64_t memoryLimit = memory < 0 ? disk : memory;
    SampleBudget budget;
    budget.bytes = automaticSampleBudgetBytes(diskLimit, memoryLimit);
    std::ostringstream basis;
    if (diskLimit <= memoryLimit)
        basis << "half the free disk space of " << measured.string() << ", " << sampleBytesText(disk) << " free";
    else
        basis << "half the available memory, " << sampleBytesText(memory);
    budget.basis = basis.str();
    return budget;
}

} // namespace kforge::core
