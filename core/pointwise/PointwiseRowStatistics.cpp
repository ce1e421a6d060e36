// Row statistics as expression nodes (PointwiseExpression::addRowStatistic): var, std, var_mean,
// std_mean, linalg_vector_norm / norm and logsumexp over a row, each as eager's CUDA kernel or
// composition computes it.
#include "pointwise/PointwiseExpression.h"

#include "pointwise/RowReductionArgs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kforge::core {

namespace {

// A norm's order: a number, or the capture's spelling of an infinite one ("inf", "-inf"); 2 where
// the argument is absent or None (norm.ScalarOpt_dim's p). nullopt for anything else.
std::optional<double> normOrder(const ChainMember& member)
{
    const ArgSpec* arg = row_args::named(member, member.op == "aten::norm" ? "p" : "ord");
    if (!arg || arg->kind == ArgKind::None)
        return 2.0;
    if (arg->kind != ArgKind::Value)
        return std::nullopt;
    if (arg->value.is_number())
        return arg->value.get<double>();
    if (arg->value == "inf")
        return std::numeric_limits<double>::infinity();
    if (arg->value == "-inf")
        return -std::numeric_limits<double>::infinity();
    return std::nullopt;
}

// var / std's correction: `correction` (None: 1), or `unbiased` (true: 1), 1 when neither is given.
std::optional<double> correctionOf(const ChainMember& member)
{
    if (const ArgSpec* c = row_args::named(member, "correction"); c && c->kind != ArgKind::None)
        return row_args::number(member, "correction");
    if (const ArgSpec* u = row_args::named(member, "unbiased"); u && u->kind != ArgKind::None) {
        const auto unbiased = row_args::number(member, "unbiased");
        return unbiased ? std::optional<double>(*unbiased != 0 ? 1.0 : 0.0) : std::nullopt;
    }
    return 1.0;
}

} // namespace

Result<std::vector<int>> PointwiseExpression::addRowStatistic(const ChainMember& member, std::string_view name,
                                                              const Row& row)
{
    const auto refuse = [](const std::string& why) { return makeError(ErrorCode::Unsupported, why); };
    const int x = row.x;
    const auto f32 = [&](const char* op, const char* overload, std::vector<int> operands) {
        return applyNode(op, overload, std::move(operands), "float32", false);
    };
    if (name == "var" || name == "std" || name == "var_mean" || name == "std_mean") {
        // Eager's Welford kernel: the mean, the sum of squared deviations m2, and m2 / max(0, N -
        // correction) (0 / 0: NaN, as eager's); std its square root. Computed here in two passes.
        const auto correction = correctionOf(member);
        if (!correction)
            return refuse("correction is not a number");
        const int mean = f32("mul", "Tensor",
                             {reduceOver(row, PointwiseReduce::Sum, x),
                              constantNode(static_cast<double>(1.0f / static_cast<float>(row.length)))});
        const int centred = f32("sub", "Tensor", {x, mean});
        const int m2 = reduceOver(row, PointwiseReduce::Sum, f32("mul", "Tensor", {centred, centred}));
        const double divisor = std::max(0.0, static_cast<double>(row.length) - *correction);
        int var = f32("div", "Tensor", {m2, constantNode(static_cast<double>(static_cast<float>(divisor)))});
        if (name.starts_with("std"))
            var = f32("sqrt", "", {var});
        std::vector<int> results = {roundedTo(var, row.out)};
        if (name.ends_with("_mean"))
            results.push_back(roundedTo(mean, member.outputs[1].dtype));
        return results;
    }
    if (name == "linalg_vector_norm" || name == "norm") {
        // Eager's norm kernels: count of non-zeros (0), sum of |x| (1), sqrt of the sum of squares
        // (2), max / min of |x| (+-inf, NaN propagating), else pow(sum(pow(|x|, p)), 1 / p).
        const auto p = normOrder(member);
        if (!p)
            return refuse("the order is not a number");
        const int magnitude = f32("abs", "", {x});
        int y = -1;
        if (*p == 0)
            y = reduceOver(row, PointwiseReduce::Sum, applyNode("ne", "Scalar", {x, constantNode(0)}, "bool", false));
        else if (*p == 1)
            y = reduceOver(row, PointwiseReduce::Sum, magnitude);
        else if (*p == 2)
            y = f32("sqrt", "", {reduceOver(row, PointwiseReduce::Sum, f32("mul", "Tensor", {x, x}))});
        else if (std::isinf(*p))
            y = reduceOver(row, *p > 0 ? PointwiseReduce::Max : PointwiseReduce::Min, magnitude);
        else {
            const auto order = static_cast<float>(*p);
            const int powered = f32("pow", "Tensor_Scalar", {magnitude, constantNode(static_cast<double>(order))});
            y = f32("pow", "Tensor_Scalar",
                    {reduceOver(row, PointwiseReduce::Sum, powered), constantNode(static_cast<double>(1.0f / order))});
        }
        return std::vector<int>{roundedTo(y, row.out)};
    }
    // logsumexp: eager composes it of ops in the input's dtype, each rounding its result: m = amax
    // (0 where it is infinite), log(sum(exp(x - m))) + m.
    const auto inDtype = [&](const char* op, const char* overload, std::vector<int> operands) {
        return applyNode(op, overload, std::move(operands), row.out, true);
    };
    const int max = reduceOver(row, PointwiseReduce::Max, x);
    const int infinite = applyNode(
        "eq", "Scalar", {f32("abs", "", {max}), constantNode(std::numeric_limits<double>::infinity())}, "bool", false);
    const int m = f32("where", "self", {infinite, constantNode(0), max});
    const int e = inDtype("exp", "", {inDtype("sub", "Tensor", {x, m})});
    const int s = roundedTo(reduceOver(row, PointwiseReduce::Sum, e), row.out);
    return std::vector<int>{inDtype("add", "Tensor", {inDtype("log", "", {s}), m})};
}

} // namespace kforge::core
