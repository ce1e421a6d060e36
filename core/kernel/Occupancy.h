#pragma once
// Theoretical occupancy of a kernel launch: how many of its blocks fit on one SM at once, limited
// by threads, blocks, registers and shared memory, as the CUDA occupancy calculator computes it
// (the same figure cudaOccupancyMaxActiveBlocksPerMultiprocessor gives, without a GPU). Achieved
// occupancy can only be lower (tails, imbalance); a profiler measures that.
//
// Torch-free; the per-architecture limits are the CUDA C Programming Guide's "Technical
// Specifications per Compute Capability".

#include <optional>
#include <string>

namespace kforge::core {

struct Occupancy {
    int blocksPerSm = 0;
    int warpsPerSm = 0; // active warps: blocksPerSm * warps per block
    int maxWarpsPerSm = 0;
    double fraction = 0;   // warpsPerSm / maxWarpsPerSm
    std::string limitedBy; // "warps", "blocks", "registers" or "shared memory"
};

/// The occupancy of blocks of `threadsPerBlock` threads using `registersPerThread` registers and
/// `sharedBytesPerBlock` bytes of shared memory (static + dynamic) on `architecture` ("sm_90",
/// "sm_90a"). nullopt for an architecture without a table entry, or a block that cannot run at all
/// (too many threads, registers or bytes): blocksPerSm 0 is reported as such, not as nullopt.
std::optional<Occupancy> theoreticalOccupancy(const std::string& architecture, int threadsPerBlock,
                                              int registersPerThread, long long sharedBytesPerBlock);

} // namespace kforge::core
