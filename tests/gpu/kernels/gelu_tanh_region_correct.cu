// The fused region of GELU written out with tanh (8 ops: mul, pow, mul, add, mul, tanh, add, mul) on
// float32 [256, 1024]: in0 is x, in1..in4 the traced constants 0.5, 0.044715, sqrt(2/pi) and 1.0
// (0-dim float64 tensors on the GPU, read as eager reads them: cast to float once).
/*kforge-plan
{"launches": [{"kernel": "gelu_tanh_region", "grid": [1024], "block": [256],
  "args": ["ptr:in0", "ptr:in1", "ptr:in2", "ptr:in3", "ptr:in4", "ptr:out0", "i32:262144"]}]}
*/
extern "C" __global__ void gelu_tanh_region(const float* __restrict__ x, const double* half, const double* cubic,
                                            const double* scale, const double* one, float* __restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float v = x[i];
    const float inner = (v + (v * v * v) * static_cast<float>(*cubic)) * static_cast<float>(*scale);
    out[i] = (v * static_cast<float>(*half)) * (tanhf(inner) + static_cast<float>(*one));
}
