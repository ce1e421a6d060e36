#include "pointwise/PointwiseOpTable.h"

#include "pointwise/CudaLiteral.h"
#include "pointwise/PointwiseFormulas.h"

#include <algorithm>
#include <array>

namespace kforge::core {

namespace {

using A = const std::vector<FormulaOperand>&;

bool isConstant(const FormulaOperand& o, double v)
{
    return o.constant && *o.constant == v;
}

// `x + alpha * y` as eager's add / sub kernels compute it in opmath; alpha 1 drops out exactly.
std::string plusScaled(const std::string& x, const char* sign, const FormulaOperand& y, const FormulaOperand& alpha)
{
    if (alpha.absent() || isConstant(alpha, 1))
        return "(" + x + " " + sign + " " + y.expr + ")";
    return "(" + x + " " + sign + " " + alpha.expr + " * " + y.expr + ")";
}

std::string addFormula(A a)
{
    return plusScaled(a[0].expr, "+", a[1], a[2]);
}
std::string subFormula(A a)
{
    return plusScaled(a[0].expr, "-", a[1], a[2]);
}
std::string rsubFormula(A a)
{
    return plusScaled(a[1].expr, "-", a[0], a[2]);
}
std::string mulFormula(A a)
{
    return "(" + a[0].expr + " * " + a[1].expr + ")";
}
std::string divFormula(A a)
{
    // Eager's CUDA true division by a CPU scalar multiplies by its reciprocal, taken in opmath.
    if (a[1].constant)
        return "(" + a[0].expr + " * " + floatLiteral(1.0f / static_cast<float>(*a[1].constant)) + ")";
    return "(" + a[0].expr + " / " + a[1].expr + ")";
}
std::string negFormula(A a)
{
    return "(-" + a[0].expr + ")";
}
std::string call(const char* fn, const std::string& x)
{
    return std::string(fn) + "(" + x + ")";
}
std::string absFormula(A a)
{
    return call("fabsf", a[0].expr);
}
std::string expFormula(A a)
{
    return call("expf", a[0].expr);
}
std::string logFormula(A a)
{
    return call("logf", a[0].expr);
}
std::string sqrtFormula(A a)
{
    return call("sqrtf", a[0].expr);
}
std::string rsqrtFormula(A a)
{
    return call("rsqrtf", a[0].expr);
}
std::string reciprocalFormula(A a)
{
    return "(1.0f / " + a[0].expr + ")";
}
std::string tanhFormula(A a)
{
    return call("tanhf", a[0].expr);
}
// The CUDA math library's full-range cosf / sinf, as eager's kernels (no fast-math form: rotary
// tables take arguments of thousands of radians).
std::string cosFormula(A a)
{
    return call("cosf", a[0].expr);
}
std::string sinFormula(A a)
{
    return call("sinf", a[0].expr);
}
std::string erfFormula(A a)
{
    return call("erff", a[0].expr);
}
std::string sigmoidFormula(A a)
{
    return "(1.0f / (1.0f + expf(-" + a[0].expr + ")))";
}
std::string siluFormula(A a)
{
    return "(" + a[0].expr + " / (1.0f + expf(-" + a[0].expr + ")))";
}
std::string reluFormula(A a)
{
    return "(" + a[0].expr + " < 0.0f ? 0.0f : " + a[0].expr + ")"; // NaN stays NaN
}
std::string geluFormula(A a)
{
    const std::string& x = a[0].expr;
    return "(" + x + " * 0.5f * (1.0f + erff(" + x + " * 0.70710678118654752f)))";
}
std::string geluTanhFormula(A a)
{
    const std::string& x = a[0].expr;
    return "(0.5f * " + x + " * (1.0f + tanhf(0.79788456080286536f * (" + x + " + 0.044715f * (" + x + " * " + x +
        " * " + x + ")))))";
}
std::string hardswishFormula(A a)
{
    const std::string& x = a[0].expr;
    return "(" + x + " * kfStdMin(kfStdMax(" + x + " + 3.0f, 0.0f), 6.0f) / 6.0f)";
}
std::string hardsigmoidFormula(A a)
{
    return "(kfStdMin(kfStdMax(" + a[0].expr + " + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f))";
}
std::string leakyReluFormula(A a)
{
    const std::string slope = a[1].absent() ? floatLiteral(0.01) : a[1].expr;
    return "(" + a[0].expr + " > 0.0f ? " + a[0].expr + " : " + a[0].expr + " * " + slope + ")";
}
std::string clampFormula(A a)
{
    std::string x = a[0].expr;
    if (!a[1].absent())
        x = "kfClampMin(" + x + ", " + a[1].expr + ")";
    if (!a[2].absent())
        x = "kfClampMax(" + x + ", " + a[2].expr + ")";
    return x;
}
std::string clampMinFormula(A a)
{
    return "kfClampMin(" + a[0].expr + ", " + a[1].expr + ")";
}
std::string clampMaxFormula(A a)
{
    return "kfClampMax(" + a[0].expr + ", " + a[1].expr + ")";
}
std::string minimumFormula(A a)
{
    return "kfMinimum(" + a[0].expr + ", " + a[1].expr + ")";
}
std::string maximumFormula(A a)
{
    return "kfMaximum(" + a[0].expr + ", " + a[1].expr + ")";
}
std::string identityFormula(A a)
{
    return a[0].expr; // the value; its rounding to the new dtype is the store's
}
std::string whereFormula(A a)
{
    return "(" + a[0].expr + " != 0.0f ? " + a[1].expr + " : " + a[2].expr + ")";
}
std::string powFormula(A a)
{
    // Eager's pow(Tensor, Scalar) special-cases these exponents (exact products, sqrt, rsqrt, reciprocal).
    const std::string& x = a[0].expr;
    const FormulaOperand& e = a[1];
    if (isConstant(e, 0))
        return "1.0f";
    if (isConstant(e, 1))
        return x;
    if (isConstant(e, 2))
        return "(" + x + " * " + x + ")";
    if (isConstant(e, 3))
        return "(" + x + " * " + x + " * " + x + ")";
    if (isConstant(e, 0.5))
        return call("sqrtf", x);
    if (isConstant(e, -0.5))
        return call("rsqrtf", x);
    if (isConstant(e, -1))
        return "(1.0f / " + x + ")";
    if (isConstant(e, -2))
        return "(1.0f / (" + x + " * " + x + "))";
    return "powf(" + x + ", " + e.expr + ")";
}

constexpr PointwiseOperand kSelf{"self"};
constexpr PointwiseOperand kOther{"other"};
constexpr PointwiseOperand kAlpha{"alpha", false};
// Python scalars eager converts to the tensor's dtype (scalar_t) before computing.
constexpr PointwiseOperand kOtherInDtype{"other", true, false, true};
constexpr PointwiseOperand kLambd{"lambd", false, false, true};

// The rows of the activations and other unary math added with formulas/PointwiseFormulas.h.
template <class Row>
void addUnaryRows(const Row& row)
{
    namespace f = formulas;
    using R = PointwiseResult;
    row("elu", "", {kSelf, {"alpha", false}, {"scale", false}, {"input_scale", false}}, R::Promote, f::elu,
        "self > 0 ? self * scale : expm1f(self * input_scale) * (alpha * scale)", {}, {});
    row("selu", "", {kSelf}, R::Promote, f::selu, "elu with alpha 1.6732632, scale 1.0507010 (at::selu)", {}, {});
    row("celu", "", {kSelf, {"alpha", false}}, R::Promote, f::celu,
        "elu with scale 1, input_scale 1 / alpha (taken in double, as at::celu)", {}, {});
    row("softplus", "", {kSelf, {"beta", false}, {"threshold", false}}, R::Promote, f::softplus,
        "self * beta > threshold ? self : log1pf(expf(self * beta)) / beta", {}, {});
    row("hardtanh", "", {kSelf, {"min_val", false}, {"max_val", false}}, R::Promote, f::hardtanh,
        "clamp(self, min_val, max_val), NaN stays NaN", {}, {});
    row("relu6", "", {kSelf}, R::Promote, f::relu6, "clamp(self, 0, 6), NaN stays NaN", {}, {});
    row("mish", "", {kSelf}, R::Promote, f::mish, "self * tanh(softplus(self)) with one expf (kfMish)", {}, {});
    row("softshrink", "", {kSelf, kLambd}, R::Promote, f::softshrink,
        "self > lambd ? self - lambd : self < -lambd ? self + lambd : 0 (NaN stays NaN; lambd in self's dtype)", {},
        {});
    row("hardshrink", "", {kSelf, kLambd}, R::Promote, f::hardshrink,
        "-lambd <= self <= lambd ? 0 : self (lambd in self's dtype)", {}, {});
    row("threshold", "", {kSelf, {"threshold", true, false, true}, {"value", true, false, true}}, R::Promote,
        f::threshold, "self <= threshold ? value : self (both in self's dtype)", {}, {});
    row("erfinv", "", {kSelf}, R::PromoteToFloat, f::erfinv, "erfinvf(self)", {}, {});
    row("erfc", "", {kSelf}, R::PromoteToFloat, f::erfc, "erfcf(self)", {}, {});
    row("expm1", "", {kSelf}, R::PromoteToFloat, f::expm1, "expm1f(self)", {}, {});
    row("log1p", "", {kSelf}, R::PromoteToFloat, f::log1p, "log1pf(self)", {}, {});
    row("log2", "", {kSelf}, R::PromoteToFloat, f::log2, "log2f(self)", {}, {});
    row("log10", "", {kSelf}, R::PromoteToFloat, f::log10, "log10f(self)", {}, {});
    row("exp2", "", {kSelf}, R::PromoteToFloat, f::exp2, "exp2f(self)", {}, {});
    row("square", "", {kSelf}, R::Promote, f::square, "self * self", {}, {});
    row("sign", "", {kSelf}, R::Promote, f::sign, "(0 < self) - (self < 0): NaN and -0 give 0", {}, {});
    row("floor", "", {kSelf}, R::Promote, f::floor, "floorf(self)", {}, {});
    row("ceil", "", {kSelf}, R::Promote, f::ceil, "ceilf(self)", {}, {});
    row("round", "", {kSelf}, R::Promote, f::round, "nearbyintf(self): half to even", {}, {});
    row("round", "decimals", {kSelf}, R::Promote, f::round, "nearbyintf(self): half to even", "decimals", "0");
    row("trunc", "", {kSelf}, R::Promote, f::trunc, "truncf(self)", {}, {});
    row("frac", "", {kSelf}, R::Promote, f::frac, "self - truncf(self)", {}, {});
}

// Selection, interpolation, rounding division, comparisons and logical ops.
template <class Row>
void addMultiOperandRows(const Row& row)
{
    namespace f = formulas;
    using R = PointwiseResult;
    for (std::string_view overload : {"Scalar", "Tensor"}) {
        row("masked_fill", overload, {kSelf, {"mask", false}, {"value", false, false, true}}, R::Promote, f::maskedFill,
            "mask ? value : self (value in self's dtype)", {}, {});
        row("lerp", overload, {kSelf, {"end"}, {"weight"}}, R::Promote, f::lerp,
            "|weight| < 0.5 ? self + weight * (end - self) : end - (end - self) * (1 - weight)", {}, {});
    }
    // Inference only (training false): the running statistics are per-channel operands (dim 1 of
    // the input), read through strides PointwiseRegionFamily gives them. The result has the
    // input's dtype whatever the statistics' (Cast: the dtype eager produced).
    row("batch_norm", "",
        {{"input"}, {"weight", false, true}, {"bias", false, true}, {"running_mean"}, {"running_var"}, {"eps", false}},
        R::Cast, f::batchNormInference,
        "(input - running_mean) * (rsqrt(running_var + eps) * weight) + bias, per channel", "training", "false");
    for (std::string_view overload : {"Tensor", "Scalar"}) {
        row("fmod", overload, {kSelf, kOtherInDtype}, R::Promote, f::fmod, "fmodf(self, other): the sign of self", {},
            {});
        row("remainder", overload, {kSelf, kOtherInDtype}, R::Promote, f::remainder,
            "fmodf(self, other), plus other where non-zero with the other's sign opposite: the sign of other", {}, {});
    }
    row("addcmul", "", {kSelf, {"tensor1"}, {"tensor2"}, {"value", false}}, R::Promote, f::addcmul,
        "self + value * (tensor1 * tensor2)", {}, {});
    row("addcdiv", "", {kSelf, {"tensor1"}, {"tensor2"}, {"value", false}}, R::Promote, f::addcdiv,
        "self + value * (tensor1 / tensor2)", {}, {});
    for (std::string_view overload : {"Tensor_mode", "Scalar_mode"}) {
        row("div", overload, {kSelf, kOther}, R::Promote, f::divTrunc,
            "truncf(self / other) (by a Python scalar: truncf(self * (1 / other)))", "rounding_mode", "\"trunc\"");
        row("div", overload, {kSelf, kOther}, R::Promote, f::divFloor,
            "Python's floor division as eager's div_floor (by a Python scalar through 1 / other)", "rounding_mode",
            "\"floor\"");
    }
    for (std::string_view overload : {"Tensor", "Scalar"}) {
        row("eq", overload, {kSelf, kOtherInDtype}, R::Bool, f::eq, "self == other", {}, {});
        row("ne", overload, {kSelf, kOtherInDtype}, R::Bool, f::ne, "self != other (true for NaN)", {}, {});
        row("lt", overload, {kSelf, kOtherInDtype}, R::Bool, f::lt, "self < other", {}, {});
        row("le", overload, {kSelf, kOtherInDtype}, R::Bool, f::le, "self <= other", {}, {});
        row("gt", overload, {kSelf, kOtherInDtype}, R::Bool, f::gt, "self > other", {}, {});
        row("ge", overload, {kSelf, kOtherInDtype}, R::Bool, f::ge, "self >= other", {}, {});
    }
    row("logical_and", "", {kSelf, kOther}, R::Bool, f::logicalAnd, "self != 0 && other != 0", {}, {});
    row("logical_or", "", {kSelf, kOther}, R::Bool, f::logicalOr, "self != 0 || other != 0", {}, {});
    row("logical_xor", "", {kSelf, kOther}, R::Bool, f::logicalXor, "(self != 0) != (other != 0)", {}, {});
    row("logical_not", "", {kSelf}, R::Bool, f::logicalNot, "self == 0", {}, {});
    row("bitwise_not", "", {kSelf}, R::Promote, f::logicalNot, "not self (bool; ~self on integers)", {}, {});
    // `a & b`, `a | b`, `a ^ b` trace as __and__ & co.: bool and integer tensors only (eager refuses
    // floats), logical on bool, bitwise on integers.
    for (std::string_view overload : {"Tensor", "Scalar"}) {
        for (std::string_view name : {"bitwise_and", "__and__"})
            row(name, overload, {kSelf, kOther}, R::Promote, f::logicalAnd, "self & other (bool: and)", {}, {});
        for (std::string_view name : {"bitwise_or", "__or__"})
            row(name, overload, {kSelf, kOther}, R::Promote, f::logicalOr, "self | other (bool: or)", {}, {});
        for (std::string_view name : {"bitwise_xor", "__xor__"})
            row(name, overload, {kSelf, kOther}, R::Promote, f::logicalXor, "self ^ other (bool: xor)", {}, {});
    }
}

std::vector<PointwiseOpRow> makeTable()
{
    using R = PointwiseResult;
    std::vector<PointwiseOpRow> t;
    const auto row = [&](std::string_view name, std::string_view overload, std::vector<PointwiseOperand> operands,
                         R result, PointwiseFormula formula, std::string_view text, std::string_view attribute = {},
                         std::string_view attributeValue = {}) {
        t.push_back({name, overload, std::move(operands), result, attribute, attributeValue, formula, text, nullptr});
    };
    for (std::string_view overload : {"Tensor", "Scalar"}) {
        row("add", overload, {kSelf, kOther, kAlpha}, R::Promote, addFormula, "self + alpha * other");
        row("sub", overload, {kSelf, kOther, kAlpha}, R::Promote, subFormula, "self - alpha * other");
        row("rsub", overload, {kSelf, kOther, kAlpha}, R::Promote, rsubFormula, "other - alpha * self");
        row("mul", overload, {kSelf, kOther}, R::Promote, mulFormula, "self * other");
        row("div", overload, {kSelf, kOther}, R::PromoteToFloat, divFormula,
            "self / other (by a Python scalar: self * (1 / other), as eager)");
    }
    row("div", "Tensor_mode", {kSelf, kOther}, R::PromoteToFloat, divFormula, "self / other", "rounding_mode", "null");
    row("div", "Scalar_mode", {kSelf, kOther}, R::PromoteToFloat, divFormula, "self / other", "rounding_mode", "null");
    row("neg", "", {kSelf}, R::Promote, negFormula, "-self");
    row("abs", "", {kSelf}, R::Promote, absFormula, "fabsf(self)");
    row("exp", "", {kSelf}, R::PromoteToFloat, expFormula, "expf(self)");
    row("log", "", {kSelf}, R::PromoteToFloat, logFormula, "logf(self)");
    row("sqrt", "", {kSelf}, R::PromoteToFloat, sqrtFormula, "sqrtf(self)");
    row("rsqrt", "", {kSelf}, R::PromoteToFloat, rsqrtFormula, "rsqrtf(self)");
    row("reciprocal", "", {kSelf}, R::PromoteToFloat, reciprocalFormula, "1 / self");
    row("sigmoid", "", {kSelf}, R::PromoteToFloat, sigmoidFormula, "1 / (1 + expf(-self))");
    row("tanh", "", {kSelf}, R::PromoteToFloat, tanhFormula, "tanhf(self)");
    row("erf", "", {kSelf}, R::PromoteToFloat, erfFormula, "erff(self)");
    row("cos", "", {kSelf}, R::PromoteToFloat, cosFormula, "cosf(self)");
    row("sin", "", {kSelf}, R::PromoteToFloat, sinFormula, "sinf(self)");
    row("pow", "Tensor_Scalar", {kSelf, {"exponent"}}, R::Promote, powFormula,
        "powf(self, exponent); exponents 0, 1, 2, 3, 0.5, -0.5, -1, -2 as eager's special cases");
    // A tensor exponent: eager's kernel calls pow on the two operands in opmath, no special case.
    row("pow", "Tensor_Tensor", {kSelf, {"exponent"}}, R::Promote, powFormula, "powf(self, exponent)");
    // A Python number's power (`2 ** x`): eager makes the base a 0-dim tensor of the exponent's
    // device and runs the tensor-tensor kernel, the base converted to the common dtype first.
    row("pow", "Scalar", {{"self", true, false, true}, {"exponent"}}, R::Promote, powFormula,
        "powf(self, exponent), self in the exponent's dtype");
    row("relu", "", {kSelf}, R::Promote, reluFormula, "self < 0 ? 0 : self (NaN stays NaN)");
    row("gelu", "", {kSelf}, R::Promote, geluFormula, "self * 0.5 * (1 + erff(self / sqrt(2)))", "approximate",
        "\"none\"");
    row("gelu", "", {kSelf}, R::Promote, geluTanhFormula,
        "0.5 * self * (1 + tanhf(sqrt(2 / pi) * (self + 0.044715 * self^3)))", "approximate", "\"tanh\"");
    row("silu", "", {kSelf}, R::Promote, siluFormula, "self / (1 + expf(-self))");
    row("hardswish", "", {kSelf}, R::Promote, hardswishFormula,
        "self * min(max(self + 3, 0), 6) / 6 (std::min / std::max: NaN stays NaN)");
    row("hardsigmoid", "", {kSelf}, R::Promote, hardsigmoidFormula,
        "min(max(self + 3, 0), 6) * (1 / 6) (std::min / std::max: NaN stays NaN)");
    row("leaky_relu", "", {kSelf, {"negative_slope", false}}, R::Promote, leakyReluFormula,
        "self > 0 ? self : self * negative_slope");
    for (std::string_view overload : {"", "Tensor"}) {
        row("clamp", overload, {kSelf, {"min", true, true}, {"max", true, true}}, R::Promote, clampFormula,
            "min(max(self, min), max), a NaN self or bound propagates");
        row("clip", overload, {kSelf, {"min", true, true}, {"max", true, true}}, R::Promote, clampFormula,
            "clamp's: min(max(self, min), max), a NaN self or bound propagates");
        row("clamp_min", overload, {kSelf, {"min"}}, R::Promote, clampMinFormula, "max(self, min), NaN propagates");
        row("clamp_max", overload, {kSelf, {"max"}}, R::Promote, clampMaxFormula, "min(self, max), NaN propagates");
    }
    row("minimum", "", {kSelf, kOther}, R::Promote, minimumFormula, "fminf with NaN propagating");
    row("maximum", "", {kSelf, kOther}, R::Promote, maximumFormula, "fmaxf with NaN propagating");
    for (std::string_view overload : {"dtype", "dtype_layout", "other"})
        row("to", overload, {kSelf}, R::Cast, identityFormula, "self, rounded to the dtype asked for");
    row("_to_copy", "", {kSelf}, R::Cast, identityFormula, "self, rounded to the dtype asked for");
    row("type_as", "", {kSelf}, R::Cast, identityFormula, "self, rounded to other's dtype");
    for (std::string_view overload : {"self", "ScalarSelf", "ScalarOther", "Scalar"})
        row("where", overload, {{"condition", false}, kSelf, kOther}, R::Promote, whereFormula,
            "condition ? self : other");
    addUnaryRows(row);
    addMultiOperandRows(row);
    for (PointwiseOpRow& r : t)
        if (r.result != R::Cast)
            r.integer = formulas::integerFormula(r.name, r.attributeValue);
    return t;
}

bool isReductionLike(std::string_view name)
{
    static constexpr std::array<std::string_view, 12> kNames = {
        "sum", "mean", "amax", "amin", "max", "min", "prod", "var", "std", "var_mean", "std_mean", "logsumexp"};
    if (name == "batch_norm")
        return false; // its inference form is a row (training is the row's attribute)
    return name.find("norm") != std::string_view::npos || name.find("softmax") != std::string_view::npos ||
        std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

// The argument's value as compact JSON; "null" for None or an argument the call does not have.
std::string attributeText(const std::vector<ArgSpec>& args, std::string_view name)
{
    for (const ArgSpec& arg : args)
        if (arg.name == name)
            return arg.kind == ArgKind::Value ? arg.value.dump() : "null";
    return "null";
}

} // namespace

const std::vector<PointwiseOpRow>& pointwiseOpTable()
{
    static const std::vector<PointwiseOpRow> table = makeTable();
    return table;
}

bool isPointwiseOpName(std::string_view op)
{
    if (!op.starts_with("aten::"))
        return false;
    op.remove_prefix(6);
    if (isInPlaceOpName(op))
        op.remove_suffix(1);
    const auto& table = pointwiseOpTable();
    return std::any_of(table.begin(), table.end(), [op](const PointwiseOpRow& row) { return row.name == op; });
}

Result<const PointwiseOpRow*> findPointwiseOp(const std::string& op, const std::string& overload,
                                              const std::vector<ArgSpec>& args)
{
    const std::string qualified = overload.empty() ? op : op + "." + overload;
    const auto refuse = [&](const std::string& why) {
        return makeError(ErrorCode::Unsupported, qualified + ": " + why);
    };
    std::string_view name(op);
    if (!name.starts_with("aten::"))
        return refuse("not an aten op");
    name.remove_prefix(6);
    if (isInPlaceOpName(name))
        name.remove_suffix(1);
    if (isReductionLike(name))
        return refuse("a reduction, norm or softmax, not pointwise (not covered yet)");
    bool opKnown = false;
    std::string attributeSeen;
    for (const PointwiseOpRow& row : pointwiseOpTable()) {
        if (row.name != name)
            continue;
        opKnown = true;
        if (row.overload != overload)
            continue;
        if (!row.attribute.empty()) {
            const std::string value = attributeText(args, row.attribute);
            // gelu's approximate is "none" by default: a call without the argument is that row.
            if (value != row.attributeValue && !(value == "null" && row.attributeValue == "\"none\"")) {
                attributeSeen = std::string(row.attribute) + " " + value;
                continue;
            }
        }
        return &row;
    }
    if (!attributeSeen.empty())
        return refuse(attributeSeen + " not covered by the pointwise table");
    if (opKnown)
        return refuse("overload not in the pointwise table");
    return refuse("not in the pointwise table");
}

std::string pointwiseHelpers()
{
    return R"(// maximum / minimum: a NaN in either operand is the result (eager's NaN-propagating kernels).
__device__ __forceinline__ float kfMaximum(float a, float b) { return a != a ? a : (b != b ? b : fmaxf(a, b)); }
__device__ __forceinline__ float kfMinimum(float a, float b) { return a != a ? a : (b != b ? b : fminf(a, b)); }
// clamp: a NaN value stays NaN, a NaN bound is the result (eager's clamp kernels).
__device__ __forceinline__ float kfClampMin(float v, float lo) { return v != v ? v : (lo != lo ? lo : fmaxf(v, lo)); }
__device__ __forceinline__ float kfClampMax(float v, float hi) { return v != v ? v : (hi != hi ? hi : fminf(v, hi)); }
// std::max / std::min as eager's hardswish / hardsigmoid call them: the first operand when unordered.
__device__ __forceinline__ float kfStdMax(float a, float b) { return a < b ? b : a; }
__device__ __forceinline__ float kfStdMin(float a, float b) { return b < a ? b : a; }
)" + formulas::helpers();
}

} // namespace kforge::core
