// Wrong for the GELU-with-tanh region: computes the exact (erf) GELU instead, which differs from the
// tanh form by up to about 1e-3, far outside float32's tolerance.
/*kforge-plan
{"launches": [{"kernel": "gelu_erf", "grid": [1024], "block": [256],
  "args": ["ptr:in0", "ptr:out0", "i32:262144"]}]}
*/
extern "C" __global__ void gelu_erf(const float* __restrict__ x, float* __restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678f));
}
