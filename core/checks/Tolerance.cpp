#include "checks/Tolerance.h"

#include "model/InputSpec.h"
#include "pointwise/PointwiseOpTable.h"

#include <array>
#include <cstdio>
#include <string_view>

namespace kforge::core {

OpClass opClassOf(const std::string& op)
{
    static constexpr std::array<std::string_view, 25> reductions = {"aten::softmax",
                                                                    "aten::_softmax",
                                                                    "aten::log_softmax",
                                                                    "aten::_log_softmax",
                                                                    "aten::layer_norm",
                                                                    "aten::native_layer_norm",
                                                                    "aten::group_norm",
                                                                    "aten::native_group_norm",
                                                                    "aten::batch_norm",
                                                                    "aten::native_batch_norm",
                                                                    "aten::rms_norm",
                                                                    "aten::_fused_rms_norm",
                                                                    "aten::mean",
                                                                    "aten::sum",
                                                                    "aten::var",
                                                                    "aten::std",
                                                                    "aten::adaptive_avg_pool2d",
                                                                    "aten::_adaptive_avg_pool2d",
                                                                    "aten::avg_pool1d",
                                                                    "aten::avg_pool2d",
                                                                    "aten::avg_pool3d",
                                                                    "aten::norm",
                                                                    "aten::logsumexp",
                                                                    "aten::cumsum",
                                                                    "aten::cumprod"};
    // max pooling selects an input value (no arithmetic): held to the tightest class.
    static constexpr std::array<std::string_view, 31> elementwise = {
        "aten::relu",     "aten::relu_",      "aten::gelu",       "aten::silu",       "aten::silu_",
        "aten::sigmoid",  "aten::tanh",       "aten::add",        "aten::add_",       "aten::sub",
        "aten::sub_",     "aten::mul",        "aten::mul_",       "aten::div",        "aten::div_",
        "aten::neg",      "aten::exp",        "aten::log",        "aten::sqrt",       "aten::rsqrt",
        "aten::abs",      "aten::clamp",      "aten::where",      "aten::pow",        "aten::embedding",
        "aten::hardtanh", "aten::max_pool1d", "aten::max_pool2d", "aten::max_pool3d", "aten::cos",
        "aten::sin"};
    for (std::string_view name : reductions) {
        if (op == name)
            return OpClass::Reduction;
    }
    for (std::string_view name : elementwise) {
        if (op == name)
            return OpClass::Elementwise;
    }
    // Every op of the pointwise table computes one value per element from its operands' values,
    // with one rounding; batch_norm's several (a normalization) keep the class it had.
    if (op == "aten::batch_norm")
        return OpClass::Other;
    if (isPointwiseOpName(op))
        return OpClass::Elementwise;
    return OpClass::Other;
}

bool eagerRoundsEveryStep(const std::string& op)
{
    return op == "aten::cumsum" || op == "aten::cumprod";
}

const char* opClassName(OpClass opClass)
{
    switch (opClass) {
    case OpClass::Elementwise:
        return "elementwise";
    case OpClass::Reduction:
        return "reduction";
    case OpClass::Other:
        return "other";
    }
    return "other";
}

std::string Tolerance::describe() const
{
    if (exact)
        return "exact";
    char text[64];
    std::snprintf(text, sizeof text, "atol %.3g, rtol %.3g", atol, rtol);
    return text;
}

OpClass opClassOf(const OperatorCard& card)
{
    if (!card.region)
        return opClassOf(card.op);
    // A chain is held to its loosest member's class: one kernel computing it in fp32 and rounding as
    // eager rounds stays within each member's tolerance.
    OpClass loosest = OpClass::Elementwise;
    for (const ChainMember& member : card.region->members) {
        const OpClass memberClass = opClassOf(member.op);
        if (memberClass == OpClass::Reduction)
            return OpClass::Reduction;
        if (memberClass == OpClass::Other)
            loosest = OpClass::Other;
    }
    return loosest;
}

Tolerance toleranceFor(const std::string& dtype, OpClass opClass)
{
    if (!isFloatingDtype(dtype))
        return Tolerance{0, 0, true};
    // Unit roundoff u of each format: float64 1.1e-16, float32 6.0e-8, float16 4.9e-4, bfloat16 3.9e-3.
    // Elementwise ops: eager rounds once, a candidate may round differently (fast intrinsics are
    // not allowed to exceed this): about 2 ulp relative. Reductions accumulate in a different order
    // (fp32 accumulators in both): a few ulp of the output format relative, plus an absolute term
    // for outputs near zero (softmax tails, normalized values that cancel).
    const bool reduction = opClass != OpClass::Elementwise;
    if (dtype == "float64")
        return reduction ? Tolerance{1e-12, 1e-10, false} : Tolerance{1e-14, 1e-13, false};
    if (dtype == "float32")
        return reduction ? Tolerance{1e-5, 1e-4, false} : Tolerance{1e-6, 1e-5, false};
    if (dtype == "float16")
        return reduction ? Tolerance{1e-3, 4e-3, false} : Tolerance{1e-4, 2e-3, false};
    // bfloat16
    return reduction ? Tolerance{8e-3, 1.6e-2, false} : Tolerance{1e-3, 1.6e-2, false};
}

} // namespace kforge::core
