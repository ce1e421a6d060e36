#include "evaluation/KernelResourceReport.h"

#include "kernel/Occupancy.h"
#include "kernel/PtxasResources.h"

#include <algorithm>

namespace kforge::core {

nlohmann::json kernelResourceReport(const std::string& compileLog, const LaunchPlan& plan,
                                    const std::string& architecture)
{
    const std::vector<KernelResources> resources = parsePtxasResources(compileLog);
    nlohmann::json kernels = nlohmann::json::array();
    for (const KernelLaunch& launch : plan.launches) {
        nlohmann::json k{{"entry", launch.kernel}};
        const auto found = std::find_if(resources.begin(), resources.end(),
                                        [&](const KernelResources& r) { return r.entry == launch.kernel; });
        if (found != resources.end()) {
            const long long threads =
                static_cast<long long>(launch.block[0]) * launch.block[1] * static_cast<long long>(launch.block[2]);
            k["registers"] = found->registers;
            k["barriers"] = found->barriers;
            k["shared_bytes"] = found->sharedBytes;
            k["dynamic_shared_bytes"] = launch.sharedBytes;
            k["stack_frame_bytes"] = found->stackFrameBytes;
            k["spill_store_bytes"] = found->spillStoreBytes;
            k["spill_load_bytes"] = found->spillLoadBytes;
            k["threads_per_block"] = threads;
            if (const auto o = theoreticalOccupancy(architecture, static_cast<int>(threads), found->registers,
                                                    found->sharedBytes + launch.sharedBytes))
                k["occupancy"] = nlohmann::json{{"blocks_per_sm", o->blocksPerSm},
                                                {"warps_per_sm", o->warpsPerSm},
                                                {"max_warps_per_sm", o->maxWarpsPerSm},
                                                {"fraction", o->fraction},
                                                {"limited_by", o->limitedBy}};
        }
        kernels.push_back(std::move(k));
    }
    return kernels;
}

} // namespace kforge::core
