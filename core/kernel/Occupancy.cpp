#include "kernel/Occupancy.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <vector>

namespace kforge::core {

namespace {

struct SmLimits {
    int maxThreadsPerSm;
    int maxBlocksPerSm;
    int registersPerSm;
    int maxRegistersPerThread;
    long long sharedBytesPerSm;    // the most a kernel can be given (carveout at its maximum)
    long long maxSharedPerBlock;   // with the opt-in attribute
    long long reservedSharedBytes; // per block, by the system (sm_80 and newer)
};

constexpr int kWarpSize = 32;
constexpr int kRegisterAllocationUnit = 256; // registers, per warp
constexpr int kSubPartitions = 4;            // an SM's register file is split among 4 schedulers
constexpr long long kSharedAllocationUnit = 128;

struct ArchitectureLimits {
    int number; // sm_<number>
    SmLimits limits;
};

// threads/SM, blocks/SM, registers/SM, registers/thread, shared bytes/SM, per block, reserved/block.
constexpr std::array<ArchitectureLimits, 7> kLimits{{
    {70, {2048, 32, 65536, 255, 96 * 1024, 96 * 1024, 0}},
    {75, {1024, 16, 65536, 255, 64 * 1024, 64 * 1024, 0}},
    {80, {2048, 32, 65536, 255, 164 * 1024, 163 * 1024, 1024}},
    {86, {1536, 16, 65536, 255, 100 * 1024, 99 * 1024, 1024}},
    {89, {1536, 24, 65536, 255, 100 * 1024, 99 * 1024, 1024}},
    {90, {2048, 32, 65536, 255, 228 * 1024, 227 * 1024, 1024}},
    {100, {2048, 32, 65536, 255, 228 * 1024, 227 * 1024, 1024}},
}};

std::optional<SmLimits> limitsFor(const std::string& architecture)
{
    if (architecture.rfind("sm_", 0) != 0)
        return std::nullopt;
    const int number = std::atoi(architecture.c_str() + 3);
    for (const ArchitectureLimits& entry : kLimits)
        if (entry.number == number)
            return entry.limits;
    return std::nullopt;
}

long long roundUp(long long value, long long unit)
{
    return (value + unit - 1) / unit * unit;
}

} // namespace

std::optional<Occupancy> theoreticalOccupancy(const std::string& architecture, int threadsPerBlock,
                                              int registersPerThread, long long sharedBytesPerBlock)
{
    const std::optional<SmLimits> limits = limitsFor(architecture);
    if (!limits || threadsPerBlock <= 0 || registersPerThread < 0 || sharedBytesPerBlock < 0)
        return std::nullopt;
    Occupancy o;
    o.maxWarpsPerSm = limits->maxThreadsPerSm / kWarpSize;
    const int warpsPerBlock = (threadsPerBlock + kWarpSize - 1) / kWarpSize;
    if (threadsPerBlock > 1024 || registersPerThread > limits->maxRegistersPerThread ||
        sharedBytesPerBlock > limits->maxSharedPerBlock) {
        o.limitedBy = threadsPerBlock > 1024                     ? "warps"
            : registersPerThread > limits->maxRegistersPerThread ? "registers"
                                                                 : "shared memory";
        return o;
    }
    struct Limit {
        long long blocks;
        const char* name;
    };
    std::vector<Limit> bounds{{o.maxWarpsPerSm / warpsPerBlock, "warps"}, {limits->maxBlocksPerSm, "blocks"}};
    if (registersPerThread > 0) {
        const long long perWarp =
            roundUp(static_cast<long long>(registersPerThread) * kWarpSize, kRegisterAllocationUnit);
        const long long warps = limits->registersPerSm / kSubPartitions / perWarp * kSubPartitions;
        bounds.push_back({warps / warpsPerBlock, "registers"});
    }
    const long long shared = sharedBytesPerBlock + limits->reservedSharedBytes;
    if (shared > 0)
        bounds.push_back({limits->sharedBytesPerSm / roundUp(shared, kSharedAllocationUnit), "shared memory"});
    const Limit tightest = *std::min_element(bounds.begin(), bounds.end(),
                                             [](const Limit& a, const Limit& b) { return a.blocks < b.blocks; });
    o.blocksPerSm = static_cast<int>(std::max(0LL, tightest.blocks));
    o.limitedBy = tightest.name;
    o.warpsPerSm = o.blocksPerSm * warpsPerBlock;
    o.fraction = o.maxWarpsPerSm > 0 ? static_cast<double>(o.warpsPerSm) / o.maxWarpsPerSm : 0;
    return o;
}

} // namespace kforge::core
