#include "evaluation/SanitizerScope.h"

#include <regex>

namespace kforge::core {
namespace {

// Shared bytes of every launch, when each reports both figures; false when one does not.
bool everyLaunchWithoutSharedMemory(const nlohmann::json& kernels)
{
    if (!kernels.is_array() || kernels.empty())
        return false;
    for (const nlohmann::json& launch : kernels) {
        const auto bytes = [&launch](const char* key) -> std::int64_t {
            return launch.is_object() && launch.contains(key) && launch.at(key).is_number_integer()
                ? launch.at(key).get<std::int64_t>()
                : -1;
        };
        if (bytes("shared_bytes") != 0 || bytes("dynamic_shared_bytes") != 0)
            return false;
    }
    return true;
}

bool usesSynchronization(const std::string& ptx)
{
    // bar.sync, bar.arrive, bar.red, bar.warp.sync, barrier.*, mbarrier.*, and every .sync form
    // (shfl.sync, vote.sync, match.sync, redux.sync, wmma/mma .sync.aligned, ...).
    static const std::regex sync(R"((^|[^A-Za-z0-9_$%])(bar|barrier|mbarrier)\.|\.sync\b)");
    return std::regex_search(ptx, sync);
}

} // namespace

std::map<std::string, std::string> sanitizerToolsToSkip(const std::string& ptx, const nlohmann::json& kernels)
{
    std::map<std::string, std::string> skip;
    if (everyLaunchWithoutSharedMemory(kernels))
        skip["racecheck"] = "no shared memory in any launch (racecheck checks shared memory only)";
    if (!ptx.empty() && !usesSynchronization(ptx))
        skip["synccheck"] = "no barrier or warp-synchronous instruction in the PTX (what synccheck checks)";
    return skip;
}

} // namespace kforge::core
