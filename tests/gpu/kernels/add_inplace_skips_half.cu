// Wrong on purpose: updates only the first half of `self` in place. Output 0 starts as a copy of
// self, so the untouched half holds self's old values, which differ from eager's self + other.
/*kforge-plan
{"launches": [{"kernel": "add_inplace", "grid": [250], "block": [256], "args": ["ptr:self", "ptr:other", "ptr:out0", "i32:64000"]}]}
*/
extern "C" __global__ void add_inplace(const float* self, const float* other, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 2)
        out[i] = self[i] + other[i];
}
