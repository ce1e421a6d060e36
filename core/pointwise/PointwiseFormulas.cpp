#include "pointwise/PointwiseFormulas.h"

#include "pointwise/CudaLiteral.h"

namespace kforge::core::formulas {

namespace {

std::string orDefault(const FormulaOperand& o, double v)
{
    return o.absent() ? floatLiteral(v) : o.expr;
}

std::string call(const char* fn, const std::string& x)
{
    return std::string(fn) + "(" + x + ")";
}

// Eager's ELU kernel in opmath: x > 0 ? x * poscoef : expm1(x * negiptcoef) * negcoef (a NaN takes
// the second branch and stays NaN). selu and celu call it with their own coefficients.
std::string eluWith(const std::string& x, const std::string& negcoef, const std::string& poscoef,
                    const std::string& negiptcoef)
{
    return "(" + x + " > 0.0f ? " + x + " * " + poscoef + " : expm1f(" + x + " * " + negiptcoef + ") * " + negcoef +
        ")";
}

std::string clampBoth(const std::string& x, const std::string& lo, const std::string& hi)
{
    return "kfClampMax(kfClampMin(" + x + ", " + lo + "), " + hi + ")";
}

std::string compare(A a, const char* op)
{
    return boolOf(a[0].expr + " " + op + " " + a[1].expr);
}

} // namespace

std::string elu(A a)
{
    // negcoef = alpha * scale, multiplied in opmath as eager does.
    const std::string scale = orDefault(a[2], 1);
    return eluWith(a[0].expr, "(" + orDefault(a[1], 1) + " * " + scale + ")", scale, orDefault(a[3], 1));
}

std::string selu(A a)
{
    // at::selu is elu(alpha = 1.6732632423543772848, scale = 1.0507009873554804934).
    const std::string scale = floatLiteral(1.0507009873554804934193349852946);
    return eluWith(a[0].expr, "(" + floatLiteral(1.6732632423543772848170429916717) + " * " + scale + ")", scale,
                   floatLiteral(1));
}

std::string celu(A a)
{
    // at::celu is elu(alpha, scale = 1, input_scale = 1 / alpha), 1 / alpha taken in double.
    const double alpha = a[1].constant.value_or(1.0);
    return eluWith(a[0].expr, "(" + orDefault(a[1], 1) + " * " + floatLiteral(1) + ")", floatLiteral(1),
                   floatLiteral(1.0 / alpha));
}

std::string softplus(A a)
{
    // Above the threshold (of x * beta) the input itself, as eager.
    const std::string& x = a[0].expr;
    const std::string beta = orDefault(a[1], 1), threshold = orDefault(a[2], 20);
    return "(" + x + " * " + beta + " > " + threshold + " ? " + x + " : log1pf(expf(" + x + " * " + beta + ")) / " +
        beta + ")";
}

std::string hardtanh(A a)
{
    // at::hardtanh is clamp(min_val, max_val): a NaN input stays NaN.
    return clampBoth(a[0].expr, orDefault(a[1], -1), orDefault(a[2], 1));
}

std::string relu6(A a)
{
    return clampBoth(a[0].expr, floatLiteral(0), floatLiteral(6)); // at::relu6 is hardtanh(0, 6)
}

std::string mish(A a)
{
    return "kfMish(" + a[0].expr + ")";
}

std::string softshrink(A a)
{
    // lambd in the tensor's dtype (inCommonDtype); NaN stays NaN, the middle is +0.
    const std::string& x = a[0].expr;
    const std::string l = orDefault(a[1], 0.5);
    return "(" + x + " != " + x + " ? " + x + " : (" + x + " > " + l + " ? " + x + " - " + l + " : (" + x + " < (-" +
        l + ") ? " + x + " + " + l + " : 0.0f)))";
}

std::string hardshrink(A a)
{
    const std::string& x = a[0].expr;
    const std::string l = orDefault(a[1], 0.5);
    return "((" + x + " >= (-" + l + ") && " + x + " <= " + l + ") ? 0.0f : " + x + ")"; // NaN stays NaN
}

std::string threshold(A a)
{
    // threshold and value in the tensor's dtype (inCommonDtype); a NaN input is kept.
    return "(" + a[0].expr + " <= " + a[1].expr + " ? " + a[2].expr + " : " + a[0].expr + ")";
}

std::string erfinv(A a)
{
    return call("erfinvf", a[0].expr);
}
std::string expm1(A a)
{
    return call("expm1f", a[0].expr);
}
std::string log1p(A a)
{
    return call("log1pf", a[0].expr);
}
std::string log2(A a)
{
    return call("log2f", a[0].expr);
}
std::string log10(A a)
{
    return call("log10f", a[0].expr);
}
std::string exp2(A a)
{
    return call("exp2f", a[0].expr);
}
std::string square(A a)
{
    return "(" + a[0].expr + " * " + a[0].expr + ")"; // at::square is pow(self, 2): a product
}
std::string sign(A a)
{
    return call("kfSign", a[0].expr);
}
std::string floor(A a)
{
    return call("floorf", a[0].expr);
}
std::string ceil(A a)
{
    return call("ceilf", a[0].expr);
}
std::string round(A a)
{
    return call("nearbyintf", a[0].expr); // half to even, as eager's nearbyint
}
std::string trunc(A a)
{
    return call("truncf", a[0].expr);
}
std::string frac(A a)
{
    return "(" + a[0].expr + " - truncf(" + a[0].expr + "))"; // inf gives NaN, as eager
}

std::string maskedFill(A a)
{
    // value becomes self's dtype where the result is stored (the row's dtype is self's).
    return "(" + a[1].expr + " != 0.0f ? " + a[2].expr + " : " + a[0].expr + ")";
}

std::string lerp(A a)
{
    return "kfLerp(" + a[0].expr + ", " + a[1].expr + ", " + a[2].expr + ")";
}

std::string addcmul(A a)
{
    return "(" + a[0].expr + " + " + orDefault(a[3], 1) + " * (" + a[1].expr + " * " + a[2].expr + "))";
}

std::string addcdiv(A a)
{
    return "(" + a[0].expr + " + " + orDefault(a[3], 1) + " * (" + a[1].expr + " / " + a[2].expr + "))";
}

std::string fmod(A a)
{
    // eager: ::fmod(a, b), exact, with the result's sign; the scalar is in self's dtype (kOtherInDtype).
    return "fmodf(" + a[0].expr + ", " + a[1].expr + ")";
}

std::string remainder(A a)
{
    // eager (floating): mod = fmod(a, b), then mod + b where mod is non-zero and its sign is not b's:
    // Python's %, the result takes the divisor's sign.
    return "kfRemainder(" + fmod(a) + ", " + a[1].expr + ")";
}

std::string erfc(A a)
{
    return call("erfcf", a[0].expr);
}

std::string divTrunc(A a)
{
    // By a Python scalar eager multiplies by its opmath reciprocal, as for true division.
    if (a[1].constant)
        return "truncf(" + a[0].expr + " * " + floatLiteral(1.0f / static_cast<float>(*a[1].constant)) + ")";
    return "truncf(" + a[0].expr + " / " + a[1].expr + ")";
}

std::string divFloor(A a)
{
    if (a[1].constant) {
        const float b = static_cast<float>(*a[1].constant);
        if (b == 0.0f) // eager falls back to true division: a * (1 / 0)
            return "(" + a[0].expr + " * " + floatLiteral(1.0f / b) + ")";
        return "kfDivFloorScalar(" + a[0].expr + ", " + a[1].expr + ", " + floatLiteral(1.0f / b) + ")";
    }
    return "kfDivFloor(" + a[0].expr + ", " + a[1].expr + ")";
}

std::string batchNormInference(A a)
{
    // Operands: input, weight, bias, running_mean, running_var, eps. As BatchNormFamily (proven on
    // the GPU against eager): (x - mean) * scale + shift with scale = rsqrt(var + eps) * weight, the
    // weight folded into the scale so nothing cancels against the bias.
    std::string scale = "rsqrtf(" + a[4].expr + " + " + a[5].expr + ")";
    if (!a[1].absent())
        scale = "(" + scale + " * " + a[1].expr + ")";
    const std::string normalized = "(" + a[0].expr + " - " + a[3].expr + ") * " + scale;
    return a[2].absent() ? "(" + normalized + ")" : "(" + normalized + " + " + a[2].expr + ")";
}

std::string eq(A a)
{
    return compare(a, "==");
}
std::string ne(A a)
{
    return compare(a, "!="); // NaN != anything
}
std::string lt(A a)
{
    return compare(a, "<");
}
std::string le(A a)
{
    return compare(a, "<=");
}
std::string gt(A a)
{
    return compare(a, ">");
}
std::string ge(A a)
{
    return compare(a, ">=");
}

std::string boolOf(const std::string& condition)
{
    return "(" + condition + " ? 1.0f : 0.0f)";
}

std::string logicalOf(A a, std::string_view op, const char* zero)
{
    if (op == "not")
        return boolOf(a[0].expr + " == " + zero);
    return boolOf("(" + a[0].expr + " != " + zero + ") " + std::string(op) + " (" + a[1].expr + " != " + zero + ")");
}

// A float is true when non-zero, NaN included (C++'s float -> bool, as eager's kernels).
std::string logicalAnd(A a)
{
    return logicalOf(a, "&&", "0.0f");
}
std::string logicalOr(A a)
{
    return logicalOf(a, "||", "0.0f");
}
std::string logicalXor(A a)
{
    return logicalOf(a, "!=", "0.0f");
}
std::string logicalNot(A a)
{
    return logicalOf(a, "not", "0.0f");
}

std::string helpers()
{
    return R"(// mish, x * tanh(log1p(exp(x))), with one exponential and no tanhf / log1pf (a 16-bit mish was
// bound by those functions' instructions, not by memory): for n = exp(x), tanh(log(1 + n)) =
// n (n + 2) / (n (n + 2) + 2), every term positive, so nothing cancels. Above 20 tanh(softplus(x))
// rounds to 1 in float32 and the result is x (n * n would overflow past 44). NaN stays NaN; -inf
// gives -inf * 0 = NaN, as eager's formula does.
__device__ __forceinline__ float kfMish(float x)
{
    if (x > 20.0f)
        return x;
    const float n = expf(x);
    const float p = n * (n + 2.0f);
    return x * (p / (p + 2.0f));
}
// remainder from fmod's result: plus the divisor where it is non-zero with the other sign.
__device__ __forceinline__ float kfRemainder(float mod, float b)
{
    return (mod != 0.0f && ((b < 0.0f) != (mod < 0.0f))) ? mod + b : mod;
}
// sign as eager computes it, (0 < a) - (a < 0): NaN and -0 give +0.
__device__ __forceinline__ float kfSign(float a) { return (a > 0.0f ? 1.0f : 0.0f) - (a < 0.0f ? 1.0f : 0.0f); }
// lerp: from self below a weight of magnitude 0.5, from end above it (eager's two forms).
__device__ __forceinline__ float kfLerp(float s, float e, float w)
{
    return fabsf(w) < 0.5f ? s + w * (e - s) : e - (e - s) * (1.0f - w);
}
// Python's floor division as eager computes it: div = (a - fmod(a, b)) / b, one lower where the
// remainder's sign is not b's, floored and moved up where the floor dropped more than a half; a
// zero quotient takes the sign of a / b.
__device__ __forceinline__ float kfFloorQuotient(float b, float mod, float div, float signOf)
{
    if (mod != 0.0f && (b < 0.0f) != (mod < 0.0f))
        div -= 1.0f;
    if (div == 0.0f)
        return copysignf(0.0f, signOf);
    const float f = floorf(div);
    return div - f > 0.5f ? f + 1.0f : f;
}
__device__ __forceinline__ float kfDivFloor(float a, float b)
{
    if (b == 0.0f)
        return a / b;
    const float mod = fmodf(a, b);
    return kfFloorQuotient(b, mod, (a - mod) / b, a / b);
}
// By a Python scalar b (not 0): eager multiplies by its reciprocal instead of dividing.
__device__ __forceinline__ float kfDivFloorScalar(float a, float b, float invB)
{
    const float mod = fmodf(a, b);
    return kfFloorQuotient(b, mod, (a - mod) * invB, a * invB);
}
)";
}

} // namespace kforge::core::formulas
