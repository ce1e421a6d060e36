#pragma once
// Which GPUs a search runs its workers on (one kforge-worker per GPU; docs/search.md, "Parallel
// search"). Torch-free: the GPUs are named as CUDA_VISIBLE_DEVICES names them, else as nvidia-smi
// numbers them, and each worker is started with CUDA_VISIBLE_DEVICES set to its own GPU.

#include "util/Result.h"

#include <optional>
#include <string>
#include <vector>

namespace kforge::core {

struct GpuSlot {
    int ordinal = 0;       // the GPU's number as --gpus counts (0 = the first visible GPU)
    std::string visibleId; // what the worker's CUDA_VISIBLE_DEVICES gets ("2", or a GPU UUID)
};

/// The GPUs this process may use: the entries of CUDA_VISIBLE_DEVICES when it is set (an empty
/// value means none), else the indexes nvidia-smi lists; empty when there is neither a variable
/// nor a working nvidia-smi (a machine without a GPU).
std::vector<std::string> visibleGpus();

/// The workers' GPUs: `spec` ("0,2"; an ordinal may repeat, to put two workers on one GPU) or,
/// without one, every visible GPU. Errors (one line): a malformed list, an ordinal that is not
/// visible. Empty when no GPU is visible and no spec was given: one worker, inherited environment.
Result<std::vector<GpuSlot>> chooseGpus(const std::optional<std::string>& spec,
                                        const std::vector<std::string>& visible);

/// "GPU 1 (CUDA_VISIBLE_DEVICES=1) is busy with another process: pid 4242 python3 (1200 MiB)"
/// when nvidia-smi lists a compute process on it that is not one of `ownPids`; nullopt otherwise
/// (including when nvidia-smi cannot tell).
std::optional<std::string> gpuBusyWarning(const GpuSlot& slot, const std::vector<int>& ownPids = {});
/// gpuBusyWarning of each distinct GPU among `slots`, in order.
std::vector<std::string> gpuBusyWarnings(const std::vector<GpuSlot>& slots);

} // namespace kforge::core
