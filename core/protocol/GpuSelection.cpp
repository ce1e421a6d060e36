#include "protocol/GpuSelection.h"

#include "util/ChildProcess.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <sstream>
#include <unistd.h>

namespace kforge::core {

namespace {

std::vector<std::string> splitTrimmed(const std::string& text, char separator)
{
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, separator)) {
        const auto first = part.find_first_not_of(" \t\r");
        const auto last = part.find_last_not_of(" \t\r");
        parts.push_back(first == std::string::npos ? std::string() : part.substr(first, last - first + 1));
    }
    return parts;
}

std::string nvidiaSmi()
{
    for (const char* path : {"/usr/bin/nvidia-smi", "/usr/local/bin/nvidia-smi", "/bin/nvidia-smi"})
        if (::access(path, X_OK) == 0)
            return path;
    return {};
}

} // namespace

std::vector<std::string> visibleGpus()
{
    if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES")) {
        std::vector<std::string> ids;
        for (const std::string& id : splitTrimmed(env, ','))
            if (!id.empty())
                ids.push_back(id);
        return ids;
    }
    const std::string smi = nvidiaSmi();
    if (smi.empty())
        return {};
    auto listed = runChildProcess(smi, {"--query-gpu=index", "--format=csv,noheader"});
    if (!listed || listed->exitCode != 0)
        return {};
    std::vector<std::string> ids;
    for (const std::string& line : splitTrimmed(listed->out, '\n'))
        if (!line.empty())
            ids.push_back(line);
    return ids;
}

Result<std::vector<GpuSlot>> chooseGpus(const std::optional<std::string>& spec, const std::vector<std::string>& visible)
{
    std::vector<GpuSlot> slots;
    if (!spec) {
        for (std::size_t i = 0; i < visible.size(); ++i)
            slots.push_back(GpuSlot{static_cast<int>(i), visible[i]});
        return slots;
    }
    for (const std::string& item : splitTrimmed(*spec, ',')) {
        int ordinal = -1;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), ordinal);
        if (item.empty() || ec != std::errc() || end != item.data() + item.size() || ordinal < 0)
            return makeError(ErrorCode::InvalidArgument,
                             "expected GPU numbers separated by commas (e.g. 0,2), got '" + *spec + "'", "--gpus");
        if (static_cast<std::size_t>(ordinal) >= visible.size())
            return makeError(ErrorCode::InvalidArgument,
                             "GPU " + std::to_string(ordinal) + " is not visible (" + std::to_string(visible.size()) +
                                 " visible" +
                                 (std::getenv("CUDA_VISIBLE_DEVICES") ? " through CUDA_VISIBLE_DEVICES" : "") + ")",
                             "--gpus");
        slots.push_back(GpuSlot{ordinal, visible[static_cast<std::size_t>(ordinal)]});
    }
    if (slots.empty())
        return makeError(ErrorCode::InvalidArgument, "no GPU given", "--gpus");
    return slots;
}

std::optional<std::string> gpuBusyWarning(const GpuSlot& slot, const std::vector<int>& ownPids)
{
    const std::string smi = nvidiaSmi();
    if (smi.empty())
        return std::nullopt;
    auto apps = runChildProcess(
        smi, {"--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader", "-i", slot.visibleId});
    if (!apps || apps->exitCode != 0)
        return std::nullopt;
    std::string others;
    for (const std::string& line : splitTrimmed(apps->out, '\n')) {
        const std::vector<std::string> fields = splitTrimmed(line, ',');
        if (fields.size() < 3)
            continue;
        int pid = 0;
        std::from_chars(fields[0].data(), fields[0].data() + fields[0].size(), pid);
        if (std::find(ownPids.begin(), ownPids.end(), pid) != ownPids.end())
            continue;
        others +=
            (others.empty() ? "" : "; ") + std::string("pid ") + fields[0] + " " + fields[1] + " (" + fields[2] + ")";
    }
    if (others.empty())
        return std::nullopt;
    return "GPU " + std::to_string(slot.ordinal) + " (CUDA_VISIBLE_DEVICES=" + slot.visibleId +
        ") is busy with another process: " + others + "; its timings may be disturbed";
}

std::vector<std::string> gpuBusyWarnings(const std::vector<GpuSlot>& slots)
{
    std::vector<std::string> warnings;
    std::vector<std::string> asked;
    for (const GpuSlot& slot : slots) {
        if (std::find(asked.begin(), asked.end(), slot.visibleId) != asked.end())
            continue; // a GPU listed twice (--gpus 0,0) is asked about once
        asked.push_back(slot.visibleId);
        if (auto busy = gpuBusyWarning(slot))
            warnings.push_back(*busy);
    }
    return warnings;
}

} // namespace kforge::core
