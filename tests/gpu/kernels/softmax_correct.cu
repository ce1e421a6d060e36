// A correct row softmax for bfloat16 rows of length n: one block per row, fp32 accumulation.
/*kforge-plan
{"launches": [{"kernel": "softmax_rows", "grid": [64], "block": [256], "args": ["ptr:self", "ptr:out0", "i32:1000"]}]}
*/
#include <cuda_bf16.h>

__device__ float blockReduce(float value, bool isMax, float* shared)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        const float other = __shfl_xor_sync(0xffffffffu, value, offset);
        value = isMax ? fmaxf(value, other) : value + other;
    }
    const int warp = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0)
        shared[warp] = value;
    __syncthreads();
    if (warp == 0) {
        const int warps = blockDim.x >> 5;
        value = threadIdx.x < warps ? shared[threadIdx.x] : (isMax ? -__int_as_float(0x7f800000) : 0.0f);
        for (int offset = 16; offset > 0; offset >>= 1) {
            const float other = __shfl_xor_sync(0xffffffffu, value, offset);
            value = isMax ? fmaxf(value, other) : value + other;
        }
        if (threadIdx.x == 0)
            shared[0] = value;
    }
    __syncthreads();
    const float result = shared[0];
    __syncthreads();
    return result;
}

extern "C" __global__ void softmax_rows(const __nv_bfloat16* x, __nv_bfloat16* y, int n)
{
    __shared__ float shared[32];
    const __nv_bfloat16* row = x + static_cast<size_t>(blockIdx.x) * n;
    __nv_bfloat16* out = y + static_cast<size_t>(blockIdx.x) * n;
    float m = -__int_as_float(0x7f800000);
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        m = fmaxf(m, __bfloat162float(row[i]));
    m = blockReduce(m, true, shared);
    float sum = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        sum += __expf(__bfloat162float(row[i]) - m);
    sum = blockReduce(sum, false, shared);
    const float inv = 1.0f / sum;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        out[i] = __float2bfloat16(__expf(__bfloat162float(row[i]) - m) * inv);
}
