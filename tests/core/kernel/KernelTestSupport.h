#pragma once
// Shared helpers of the kernel tests: candidate sources with known error positions and scratch dirs.

#include "../ScratchDir.h"

#include <filesystem>
#include <fstream>
#include <string>

namespace kforge::core::test {

inline void writeText(const std::filesystem::path& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

/// 1-based column of `needle` on 1-based line `lineNumber` of `source` (bytes, a tab counts one);
/// 0 when absent. Tests derive expected positions from the source instead of hard-coding them.
inline int columnOf(const std::string& source, int lineNumber, const std::string& needle)
{
    std::size_t start = 0;
    for (int line = 1; line < lineNumber; ++line) {
        start = source.find('\n', start);
        if (start == std::string::npos)
            return 0;
        ++start;
    }
    const std::size_t end = source.find('\n', start);
    const std::string line = source.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const std::size_t pos = line.find(needle);
    return pos == std::string::npos ? 0 : static_cast<int>(pos) + 1;
}

/// A valid extern "C" kernel named `name`.
inline std::string addKernel(const std::string& name = "kforge_add")
{
    return "extern \"C\" __global__ void " + name +
        "(const float* a, const float* b, float* out, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) out[i] = a[i] + b[i];\n"
        "}\n";
}

/// A row softmax with one warp per row: the "small softmax kernel" of the measurements.
inline std::string softmaxKernel()
{
    return R"(extern "C" __global__ void kforge_softmax(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* in = x + (size_t)row * cols;
    float* out = y + (size_t)row * cols;
    float m = -__int_as_float(0x7f800000); // -inf without <cmath>
    for (int c = lane; c < cols; c += 32) m = fmaxf(m, in[c]);
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float s = 0.f;
    for (int c = lane; c < cols; c += 32) s += __expf(in[c] - m);
    for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
    const float inv = 1.f / s;
    for (int c = lane; c < cols; c += 32) out[c] = __expf(in[c] - m) * inv;
}
)";
}

/// A bf16 row softmax with cub::BlockReduce (CCCL headers + cuda_bf16.h).
inline std::string cubSoftmaxKernel()
{
    return R"(#include <cuda_bf16.h>
#include <cub/block/block_reduce.cuh>

extern "C" __global__ void kforge_softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int cols) {
    using BlockReduce = cub::BlockReduce<float, 256>;
    __shared__ typename BlockReduce::TempStorage storage;
    __shared__ float shared;
    const __nv_bfloat16* in = x + (size_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, __bfloat162float(in[c]));
    m = BlockReduce(storage).Reduce(m, cuda::maximum<float>{});
    if (threadIdx.x == 0) shared = m;
    __syncthreads();
    m = shared;
    __syncthreads();
    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += __expf(__bfloat162float(in[c]) - m);
    s = BlockReduce(storage).Sum(s);
    if (threadIdx.x == 0) shared = s;
    __syncthreads();
    const float inv = 1.f / shared;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        y[(size_t)blockIdx.x * cols + c] = __float2bfloat16(__expf(__bfloat162float(in[c]) - m) * inv);
}
)";
}

} // namespace kforge::core::test
