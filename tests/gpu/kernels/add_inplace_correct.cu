// In-place x.add_(other) on float32 [64, 1000]: `self` and `out0` are the same buffer (the
// evaluator binds the written argument to output 0), so neither pointer is __restrict__.
/*kforge-plan
{"launches": [{"kernel": "add_inplace", "grid": [250], "block": [256], "args": ["ptr:self", "ptr:other", "ptr:out0", "i32:64000"]}]}
*/
extern "C" __global__ void add_inplace(const float* self, const float* other, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = self[i] + other[i];
}
