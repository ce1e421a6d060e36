// The integer forms of the pointwise table's rows (docs/builtin-proposer.md, "Integer and bool
// tensors"): what an Apply node whose common dtype is an integer type computes, exactly, never
// through fp32. Operands arrive already converted to that common dtype (PointwiseExpression does
// it); every expression here is a C++ integer expression whose value the caller converts to the
// node's dtype (which keeps the low bits: eager's wrap-around). Bool results are 1.0f / 0.0f, as in
// the fp32 formulas.

#include "pointwise/CudaLiteral.h"
#include "pointwise/PointwiseFormulas.h"

#include <string_view>

namespace kforge::core::formulas {

namespace {

std::string call2(const char* fn, const std::string& a, const std::string& b)
{
    return std::string(fn) + "(" + a + ", " + b + ")";
}

bool isOne(const FormulaOperand& o)
{
    return o.absent() || (o.constant && *o.constant == 1);
}

// self + alpha * other modulo 2^64 (add, sub, rsub): eager converts alpha to the common dtype, and
// modular arithmetic makes the order of the wrap-arounds irrelevant.
std::string plusScaled(const char* fn, const std::string& x, const FormulaOperand& y, const FormulaOperand& alpha)
{
    return call2(fn, x, isOne(alpha) ? y.expr : call2("kfIntMul", alpha.expr, y.expr));
}

std::string intAdd(A a)
{
    return plusScaled("kfIntAdd", a[0].expr, a[1], a[2]);
}
std::string intSub(A a)
{
    return plusScaled("kfIntSub", a[0].expr, a[1], a[2]);
}
std::string intRsub(A a)
{
    return plusScaled("kfIntSub", a[1].expr, a[0], a[2]);
}
std::string intMul(A a)
{
    return call2("kfIntMul", a[0].expr, a[1].expr);
}
std::string intNeg(A a)
{
    return "kfIntNeg(" + a[0].expr + ")";
}
std::string intAbs(A a)
{
    return "kfIntAbs(" + a[0].expr + ")"; // the minimum stays itself, as eager's
}
std::string intRelu(A a)
{
    return call2("kfIntMax", a[0].expr, "0LL");
}
std::string intSquare(A a)
{
    return call2("kfIntMul", a[0].expr, a[0].expr);
}
std::string intSign(A a)
{
    const std::string& x = a[0].expr;
    return "(static_cast<long long>(" + x + " > 0) - static_cast<long long>(" + x + " < 0))";
}
std::string intIdentity(A a)
{
    return a[0].expr; // floor, ceil, round, trunc of an integer: the value itself
}
std::string intClamp(A a)
{
    // eager: min(max(self, min), max); a min above max gives max.
    std::string x = a[0].expr;
    if (!a[1].absent())
        x = call2("kfIntMax", x, a[1].expr);
    if (!a[2].absent())
        x = call2("kfIntMin", x, a[2].expr);
    return x;
}
std::string intClampMin(A a)
{
    return call2("kfIntMax", a[0].expr, a[1].expr);
}
std::string intClampMax(A a)
{
    return call2("kfIntMin", a[0].expr, a[1].expr);
}
std::string intSelect(A a)
{
    // where(condition, self, other) and masked_fill(self, mask, value) both pick by a bool (0 / 1).
    return "(" + a[0].expr + " != 0.0f ? " + a[1].expr + " : " + a[2].expr + ")";
}
std::string intWhere(A a)
{
    return intSelect(a);
}
std::string intMaskedFill(A a)
{
    return intSelect({a[1], a[2], a[0]});
}
std::string intDivTrunc(A a)
{
    return call2("kfIntDivTrunc", a[0].expr, a[1].expr);
}
std::string intDivFloor(A a)
{
    return call2("kfIntDivFloor", a[0].expr, a[1].expr);
}
std::string intFmod(A a)
{
    return call2("kfIntFmod", a[0].expr, a[1].expr);
}
std::string intRemainder(A a)
{
    return call2("kfIntRemainder", a[0].expr, a[1].expr);
}
std::string intLogicalAnd(A a)
{
    return logicalOf(a, "&&", "0");
}
std::string intLogicalOr(A a)
{
    return logicalOf(a, "||", "0");
}
std::string intLogicalXor(A a)
{
    return logicalOf(a, "!=", "0");
}
std::string intLogicalNot(A a)
{
    return logicalOf(a, "not", "0");
}
std::string intBitwiseNot(A a)
{
    return "(~" + a[0].expr + ")"; // the caller keeps the dtype's low bits
}
std::string intBitwiseAnd(A a)
{
    return "(" + a[0].expr + " & " + a[1].expr + ")";
}
std::string intBitwiseOr(A a)
{
    return "(" + a[0].expr + " | " + a[1].expr + ")";
}
std::string intBitwiseXor(A a)
{
    return "(" + a[0].expr + " ^ " + a[1].expr + ")";
}

struct IntegerRow {
    std::string_view name;
    std::string_view attributeValue; // div's rounding mode; "" for any
    PointwiseFormula formula;
};

// Comparisons (eq, ..., ge) use the fp32 rows' formulas: `a < b ? 1.0f : 0.0f` is exact on integers.
constexpr IntegerRow kRows[] = {
    {"add", "", intAdd},
    {"sub", "", intSub},
    {"rsub", "", intRsub},
    {"mul", "", intMul},
    {"neg", "", intNeg},
    {"abs", "", intAbs},
    {"relu", "", intRelu},
    {"square", "", intSquare},
    {"sign", "", intSign},
    {"floor", "", intIdentity},
    {"ceil", "", intIdentity},
    {"round", "", intIdentity},
    {"trunc", "", intIdentity},
    {"clamp", "", intClamp},
    {"clip", "", intClamp},
    {"clamp_min", "", intClampMin},
    {"clamp_max", "", intClampMax},
    {"minimum", "", intClampMax}, // min(self, other): clamp_max's form
    {"maximum", "", intClampMin},
    {"where", "", intWhere},
    {"masked_fill", "", intMaskedFill},
    {"div", "\"trunc\"", intDivTrunc},
    {"div", "\"floor\"", intDivFloor},
    {"fmod", "", intFmod},
    {"remainder", "", intRemainder},
    {"eq", "", eq},
    {"ne", "", ne},
    {"lt", "", lt},
    {"le", "", le},
    {"gt", "", gt},
    {"ge", "", ge},
    {"logical_and", "", intLogicalAnd},
    {"logical_or", "", intLogicalOr},
    {"logical_xor", "", intLogicalXor},
    {"logical_not", "", intLogicalNot},
    {"bitwise_not", "", intBitwiseNot},
    {"bitwise_and", "", intBitwiseAnd},
    {"__and__", "", intBitwiseAnd},
    {"bitwise_or", "", intBitwiseOr},
    {"__or__", "", intBitwiseOr},
    {"bitwise_xor", "", intBitwiseXor},
    {"__xor__", "", intBitwiseXor},
};

} // namespace

PointwiseFormula integerFormula(std::string_view name, std::string_view attributeValue)
{
    for (const IntegerRow& row : kRows)
        if (row.name == name && (row.attributeValue.empty() || row.attributeValue == attributeValue))
            return row.formula;
    return nullptr;
}

std::string integerHelpers()
{
    return R"(// Integer arithmetic as eager's kernels wrap it: modulo 2^64 in unsigned long long (signed
// overflow is undefined in C++); the result's dtype keeps the low bits.
__device__ __forceinline__ long long kfIntAdd(long long a, long long b)
{
    return static_cast<long long>(static_cast<unsigned long long>(a) + static_cast<unsigned long long>(b));
}
__device__ __forceinline__ long long kfIntSub(long long a, long long b)
{
    return static_cast<long long>(static_cast<unsigned long long>(a) - static_cast<unsigned long long>(b));
}
__device__ __forceinline__ long long kfIntMul(long long a, long long b)
{
    return static_cast<long long>(static_cast<unsigned long long>(a) * static_cast<unsigned long long>(b));
}
__device__ __forceinline__ long long kfIntNeg(long long a) { return kfIntSub(0, a); }
__device__ __forceinline__ long long kfIntAbs(long long a) { return a < 0 ? kfIntNeg(a) : a; }
__device__ __forceinline__ long long kfIntMin(long long a, long long b) { return b < a ? b : a; }
__device__ __forceinline__ long long kfIntMax(long long a, long long b) { return a < b ? b : a; }
// Integer division and remainder with Python's floor semantics where eager has them (div floor,
// remainder) and C's truncation otherwise (div trunc, fmod). By zero eager raises ZeroDivisionError
// on the CPU and its CUDA kernels divide unchecked: undefined, and 0 here rather than a trap. The
// one quotient that overflows (the minimum over -1) wraps to the minimum, as eager's.
__device__ __forceinline__ long long kfIntDivTrunc(long long a, long long b)
{
    return b == 0 ? 0 : (b == -1 ? kfIntNeg(a) : a / b);
}
__device__ __forceinline__ long long kfIntFmod(long long a, long long b)
{
    return (b == 0 || b == -1) ? 0 : a % b;
}
__device__ __forceinline__ long long kfIntDivFloor(long long a, long long b)
{
    if (b == 0 || b == -1)
        return b == 0 ? 0 : kfIntNeg(a);
    const long long q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ long long kfIntRemainder(long long a, long long b)
{
    const long long r = kfIntFmod(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
)";
}

} // namespace kforge::core::formulas
