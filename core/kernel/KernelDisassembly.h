#pragma once
// The SASS of a compiled kernel, as the CUDA toolkit's nvdisasm prints it: what the GUI shows beside
// the source and the PTX (NVRTC gives both the PTX and the cubin; the SASS is the cubin's code).
// Torch-free; runs nvdisasm as a child process on a temporary copy of the cubin.

#include "kernel/NvrtcCompiler.h"
#include "util/Result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::core {

/// The most text disassembleCubin returns; a longer listing is cut with a note saying so.
inline constexpr std::size_t kMaxSassBytes = 4u << 20;

/// nvdisasm: $KFORGE_NVDISASM when set, else from PATH, else the CUDA toolkit's
/// ($CUDA_HOME/bin, /usr/local/cuda/bin); empty when none is installed. (Triton wheels carry a copy
/// in triton/backends/nvidia/bin, which KFORGE_NVDISASM may name.)
std::string findNvdisasm();

/// The code sections of `cubin` in nvdisasm's text (`nvdisasm -c`). Unsupported when nvdisasm is
/// not installed (the message says how to get it); Internal with nvdisasm's first error line when
/// it fails (a cubin it cannot read).
Result<std::string> disassembleCubin(const std::vector<std::uint8_t>& cubin);

/// What a node's kernel compiles to, for reading beside its source.
struct KernelListing {
    std::string ptx;     // empty when the source does not compile
    std::string sass;    // empty when it does not compile or nvdisasm is missing / failed
    std::string problem; // one line when ptx or sass is empty: why
};

/// Compiles `source` for `architecture` ("sm_90") with `compiler` and disassembles its cubin.
KernelListing kernelListing(const NvrtcCompiler& compiler, const std::string& source, const std::string& architecture);

} // namespace kforge::core
