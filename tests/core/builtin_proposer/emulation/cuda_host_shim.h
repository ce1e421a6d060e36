// Host emulation of the CUDA subset the built-in kernels use, for emulate_builtin_families.py:
// every thread of a block is an OS thread; __syncthreads is a block barrier and __shfl_xor_sync,
// __shfl_up_sync and __shfl_sync exchanges between the 32 threads of a warp; __shared__ variables
// are function statics (blocks run one after another). The fast-math intrinsics map to the exact host functions. For
// 16-bit kernels cuda_fp16.h / cuda_bf16.h (host code since CUDA 9) come first, with KF_EMULATE_16BIT, so that the
// macros below replace their __shared__ and friends; the kernel's own #include is then a no-op.
// Numbers from it say whether a kernel's indexing and arithmetic are right, not how fast it is.
#pragma once

#ifdef KF_EMULATE_16BIT
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#include <algorithm>
#include <array>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

struct KfDim3 {
    unsigned x = 0, y = 0, z = 0;
};
inline thread_local KfDim3 threadIdx, blockIdx;
inline KfDim3 blockDim, gridDim;

struct KfWarp {
    std::barrier<> barrier{32};
    std::array<std::uint64_t, 32> slots{};
};
inline std::barrier<>* g_kfBlockBarrier = nullptr;
inline std::vector<std::unique_ptr<KfWarp>> g_kfWarps;

inline void __syncthreads()
{
    g_kfBlockBarrier->arrive_and_wait();
}

// Every lane of the warp publishes `value` and gets the one lane `source(lane)` published (its own
// where that lane is outside the warp, as __shfl_up_sync keeps a lane's value below the offset).
template <class T, class Source>
T kfWarpExchange(T value, Source source)
{
    KfWarp& warp = *g_kfWarps[threadIdx.x / 32];
    const unsigned lane = threadIdx.x % 32;
    std::uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    warp.slots[lane] = bits;
    warp.barrier.arrive_and_wait();
    const int from = source(static_cast<int>(lane));
    bits = warp.slots[from >= 0 && from < 32 ? static_cast<unsigned>(from) : lane];
    warp.barrier.arrive_and_wait();
    T out;
    std::memcpy(&out, &bits, sizeof(T));
    return out;
}

template <class T>
T __shfl_xor_sync(unsigned, T value, int laneMask, int = 32)
{
    return kfWarpExchange(value, [laneMask](int lane) { return lane ^ laneMask; });
}

template <class T>
T __shfl_up_sync(unsigned, T value, unsigned delta, int = 32)
{
    return kfWarpExchange(value, [delta](int lane) { return lane - static_cast<int>(delta); });
}

template <class T>
T __shfl_sync(unsigned, T value, int srcLane, int = 32)
{
    return kfWarpExchange(value, [srcLane](int) { return srcLane % 32; });
}

inline float __int_as_float(unsigned bits)
{
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}
inline float __expf(float x)
{
    return std::exp(x);
}
inline float __logf(float x)
{
    return std::log(x);
}
inline float __fdividef(float a, float b)
{
    return a / b;
}
inline float rsqrtf(float x)
{
    return 1.0f / std::sqrt(x);
}
// The CUDA math library's erfinvf (the host C library has none): Newton steps on erf in double from
// a rough start, accurate far below float's rounding.
inline float erfinvf(float y)
{
    if (!(y > -1.0f && y < 1.0f))
        return y == 1.0f ? INFINITY : (y == -1.0f ? -INFINITY : NAN);
    const double w = -std::log((1.0 - y) * (1.0 + y));
    double x = std::copysign(std::sqrt(std::max(w - std::log(w > 0 ? w : 1.0), 0.0)), static_cast<double>(y));
    if (std::fabs(y) < 0.7)
        x = 0.886226925452758 * y; // sqrt(pi) / 2 * y
    for (int i = 0; i < 60; ++i) {
        const double step = (std::erf(x) - y) / (1.1283791670955126 * std::exp(-x * x));
        x -= step;
        if (std::fabs(step) <= 1e-15 * std::fabs(x))
            break;
    }
    return static_cast<float>(x);
}
using std::max;
using std::min;

#undef __global__
#undef __device__
#undef __forceinline__
#undef __launch_bounds__
#undef __shared__
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static

// Runs `kernel` over a 1-D grid, block by block.
template <class Kernel>
void kfLaunch(Kernel kernel, unsigned grid, unsigned block)
{
    gridDim.x = grid;
    blockDim.x = block;
    for (unsigned b = 0; b < grid; ++b) {
        std::barrier<> barrier(block);
        g_kfBlockBarrier = &barrier;
        g_kfWarps.clear();
        for (unsigned w = 0; w < (block + 31) / 32; ++w)
            g_kfWarps.push_back(std::make_unique<KfWarp>());
        std::vector<std::thread> threads;
        threads.reserve(block);
        for (unsigned t = 0; t < block; ++t)
            threads.emplace_back([&, t] {
                blockIdx.x = b;
                threadIdx.x = t;
                kernel();
            });
        for (std::thread& thread : threads)
            thread.join();
    }
}
