#pragma once
// What each compiled kernel uses of an SM, read from ptxas's verbose report in the NVRTC log (every
// compile asks for it: --ptxas-options=-v). ptxas writes, per entry:
//
//   ptxas info    : Compiling entry function 'kf_softmax' for 'sm_90'
//   ptxas info    : Function properties for kf_softmax
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 32 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0]
//
// Torch-free; no state.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::core {

struct KernelResources {
    std::string entry; // the kernel's name ("kf_softmax")
    int registers = 0; // per thread
    int barriers = 0;
    std::int64_t sharedBytes = 0; // static shared memory per block (a launch adds its dynamic bytes)
    std::int64_t stackFrameBytes = 0;
    std::int64_t spillStoreBytes = 0;
    std::int64_t spillLoadBytes = 0;

    bool operator==(const KernelResources&) const = default;
};

/// Every entry function the log reports, in the log's order; an entry whose "Used" line is missing
/// is left out. Empty for a log without ptxas's report.
std::vector<KernelResources> parsePtxasResources(std::string_view log);

/// Whether `line` belongs to ptxas's verbose report (resource use and compile time, not a
/// diagnostic): the compiler-message parser leaves these lines to parsePtxasResources.
bool isPtxasReportLine(std::string_view line);

} // namespace kforge::core
