// Row reductions as expression nodes (PointwiseOptions::rowReductions): each covered member over the
// trailing dims of its input becomes Reduce nodes and the fp32 pointwise ops around them, as eager's
// CUDA kernels compute it (accumulation and every intermediate in fp32, one rounding of the result).
// Here: which dims a member reduces, softmax, the plain reductions and the norms; the statistics
// (var, std, vector norms, logsumexp) are PointwiseRowStatistics.cpp.
#include "pointwise/PointwiseExpression.h"

#include "pointwise/RowReductionArgs.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

namespace kforge::core {

namespace {

// clang-format off
constexpr std::array<std::string_view, 24> kRowReductions = {
    "softmax", "_softmax", "log_softmax", "_log_softmax",
    "sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "prod",
    "var", "std", "var_mean", "std_mean", "logsumexp", "linalg_vector_norm", "norm",
    "layer_norm", "rms_norm", "group_norm", "instance_norm"};
// clang-format on

// The ops whose result is a statistic of the row (addRowStatistic).
bool isStatistic(std::string_view name)
{
    return name == "var" || name == "std" || name == "var_mean" || name == "std_mean" || name == "logsumexp" ||
        name == "linalg_vector_norm" || name == "norm";
}

bool isFloat(const std::string& dtype)
{
    return dtype == "float32" || dtype == "float16" || dtype == "bfloat16";
}

} // namespace

bool isPairReduce(PointwiseReduce r)
{
    return r == PointwiseReduce::ArgMax || r == PointwiseReduce::ArgMin;
}

bool isRowReductionOp(const std::string& op)
{
    std::string_view name(op);
    if (!name.starts_with("aten::"))
        return false;
    name.remove_prefix(6);
    return std::find(kRowReductions.begin(), kRowReductions.end(), name) != kRowReductions.end();
}

int PointwiseExpression::constantNode(double value)
{
    PointwiseNode n;
    n.kind = PointwiseNode::Kind::Constant;
    n.constant = value;
    n.dtype = "float32";
    return intern(std::move(n));
}

int PointwiseExpression::positionNode(int pair)
{
    PointwiseNode n;
    n.kind = PointwiseNode::Kind::Position;
    n.operands = {pair};
    n.dtype = "int64";
    return intern(std::move(n));
}

int PointwiseExpression::applyNode(const char* op, const char* overload, std::vector<int> operands,
                                   const std::string& dtype, bool round)
{
    PointwiseNode n;
    n.kind = PointwiseNode::Kind::Apply;
    n.op = findPointwiseOp(std::string("aten::") + op, overload, {}).value();
    n.operands = std::move(operands);
    n.operands.resize(n.op->operands.size(), -1); // alpha: the formula's default
    n.dtype = dtype;
    n.round = round && (dtype == "float16" || dtype == "bfloat16");
    return intern(std::move(n));
}

int PointwiseExpression::viewedInput(int id, std::vector<std::int64_t> view)
{
    PointwiseNode n = m_nodes.at(static_cast<std::size_t>(id));
    if (n.kind != PointwiseNode::Kind::Input)
        return -1;
    n.view = std::move(view);
    return intern(std::move(n));
}

int PointwiseExpression::reduceNode(PointwiseReduce reduce, int operand, int member,
                                    std::vector<std::int64_t> reducedDims, std::int64_t groups)
{
    PointwiseNode n;
    n.kind = PointwiseNode::Kind::Reduce;
    n.reduce = reduce;
    n.reducedDims = std::move(reducedDims);
    n.groups = groups;
    n.operands = {operand};
    n.dtype = "float32";
    n.member = member;
    return intern(std::move(n));
}

int PointwiseExpression::reduceOver(const Row& row, PointwiseReduce reduce, int operand)
{
    return reduceNode(reduce, operand, row.memberIndex, row.dims, row.groups);
}

int PointwiseExpression::roundedTo(int value, const std::string& dtype)
{
    return dtype == "float32" ? value : applyNode("_to_copy", "", {value}, dtype, true);
}

Result<std::vector<int>> PointwiseExpression::addRowReduction(const ChainMember& member, int memberIndex,
                                                              const std::string& label,
                                                              const std::vector<int>& argNodes)
{
    const auto refuse = [&](const std::string& why) { return makeError(ErrorCode::Unsupported, label + ": " + why); };
    std::string_view name(member.op);
    name.remove_prefix(6);
    const bool grouped = name == "group_norm" || name == "instance_norm";
    const bool norm = name == "layer_norm" || name == "rms_norm" || grouped;
    std::size_t selfIndex = 0;
    const ArgSpec* self = row_args::named(member, norm ? "input" : "self", &selfIndex);
    if (!self || argNodes.at(selfIndex) < 0)
        return refuse("its input is not one tensor");
    // max / min: of every element (no overload) or over a dim with indices (.dim); .other is binary.
    const bool withIndex =
        name == "argmax" || name == "argmin" || ((name == "max" || name == "min") && member.overload == "dim");
    if ((name == "max" || name == "min") && !member.overload.empty() && !withIndex)
        return refuse("max / min of two tensors is not a row reduction (not covered)");
    const bool valueToo = withIndex && (name == "max" || name == "min");
    const std::size_t outputs = name == "var_mean" || name == "std_mean" || valueToo ? 2 : 1;
    if (member.outputs.size() != outputs)
        return refuse("expected " + std::to_string(outputs) + " output" + (outputs > 1 ? "s" : ""));
    const TensorSpec& in = self->tensors[0];
    for (std::size_t o = 0; o < outputs; ++o) {
        const std::string& dtype = member.outputs[o].dtype;
        const bool index = withIndex && o + 1 == outputs;
        if (!isFloat(in.dtype) || (index ? dtype != "int64" : !isFloat(dtype)))
            return refuse(in.dtype + " -> " + dtype + " not covered (float32, float16, bfloat16; int64 indices)");
    }
    const auto rank = static_cast<std::int64_t>(in.sizes.size());
    if (rank == 0)
        return refuse("a 0-dim input (no row to reduce)");
    // The dims reduced: softmax's one dim; a norm's normalized_shape (trailing); group_norm's and
    // instance_norm's every dim after the batch; a reduction's dims, any set of them (every dim: a
    // mean of the whole tensor). Which of them the kernel walks along memory is its business.
    Row row;
    row.x = argNodes[selfIndex];
    row.memberIndex = memberIndex;
    row.out = member.outputs[0].dtype;
    if (grouped) {
        // [N, C, *]: each (n, group) is a row of C / groups channels and every position; instance
        // norm's group is one channel.
        const auto g = name == "instance_norm" && rank >= 2 ? std::optional<double>(static_cast<double>(in.sizes[1]))
                                                            : row_args::number(member, "num_groups");
        if (rank < 2 || !g || *g < 1 || *g != static_cast<double>(static_cast<std::int64_t>(*g)) ||
            in.sizes[1] % static_cast<std::int64_t>(*g) != 0)
            return refuse("num_groups does not divide the channels (or the input has no channel dim)");
        row.groups = static_cast<std::int64_t>(*g);
        for (std::int64_t d = 1; d < rank; ++d)
            row.dims.push_back(d);
    } else if (name == "layer_norm" || name == "rms_norm") {
        const ArgSpec* shape = row_args::named(member, "normalized_shape");
        const bool trailing = shape && shape->kind == ArgKind::Value && shape->value.is_array() &&
            !shape->value.empty() && static_cast<std::int64_t>(shape->value.size()) <= rank &&
            std::equal(shape->value.begin(), shape->value.end(),
                       in.sizes.end() - static_cast<long>(shape->value.size()),
                       [](const nlohmann::json& v, std::int64_t size) {
                           return v.is_number_integer() && v.get<std::int64_t>() == size;
                       });
        if (!trailing)
            return refuse("normalized_shape " + (shape ? shape->value.dump() : std::string("?")) +
                          " is not the input's trailing sizes");
        for (auto d = rank - static_cast<std::int64_t>(shape->value.size()); d < rank; ++d)
            row.dims.push_back(d);
    } else {
        auto dims = row_args::reducedDims(row_args::named(member, "dim"), rank);
        if (!dims || dims->empty())
            return refuse("its dim argument is not a dim or a list of dims of the input");
        if (withIndex && dims->size() != 1 && !row_args::absent(member, "dim"))
            return refuse("an index reduction over several dims");
        if (name.find("softmax") != std::string_view::npos && dims->size() != 1)
            return refuse("softmax over more than one dim");
        row.dims = std::move(*dims);
    }
    row.length = 1;
    for (std::int64_t d : row.dims)
        row.length *= in.sizes[static_cast<std::size_t>(d)];
    if (row.groups > 0)
        row.length /= row.groups;
    if (row.length <= 0)
        return refuse("an empty row");
    if (norm) {
        auto y = addRowNorm(member, name, row, argNodes);
        if (!y)
            return refuse(y.error().message);
        return std::vector<int>{y.value()};
    }
    if (withIndex)
        return addRowIndexReduction(member, name, row);
    // A dtype argument converts the input first: covered where that changes no value in fp32 (to
    // float32, or to the input's own dtype); half_to_float likewise.
    if (!(row.out == in.dtype || row.out == "float32"))
        return refuse("converts " + in.dtype + " to " + row.out + " (only to float32 or its own dtype is covered)");
    if (isStatistic(name)) {
        auto y = addRowStatistic(member, name, row);
        if (!y)
            return refuse(y.error().message);
        return y;
    }
    const int x = row.x;
    const auto f32 = [&](const char* op, const char* overload, std::vector<int> operands) {
        return applyNode(op, overload, std::move(operands), "float32", false);
    };
    const auto result = [&](const char* op, const char* overload, std::vector<int> operands) {
        return applyNode(op, overload, std::move(operands), row.out, true);
    };
    int y = -1;
    if (name.find("softmax") != std::string_view::npos) {
        const int m = reduceOver(row, PointwiseReduce::Max, x);
        const int d = f32("sub", "Tensor", {x, m});
        const int ex = f32("exp", "", {d});
        const int s = reduceOver(row, PointwiseReduce::Sum, ex);
        if (name.find("log") != std::string_view::npos)
            y = result("sub", "Tensor", {d, f32("log", "", {s})});
        else
            y = result("div", "Tensor", {ex, s});
    } else if (name == "sum") {
        y = roundedTo(reduceOver(row, PointwiseReduce::Sum, x), row.out);
    } else if (name == "mean") {
        const int invN = constantNode(static_cast<double>(1.0f / static_cast<float>(row.length)));
        y = result("mul", "Tensor", {reduceOver(row, PointwiseReduce::Sum, x), invN});
    } else if (name == "prod") {
        y = roundedTo(reduceOver(row, PointwiseReduce::Prod, x), row.out);
    } else {
        const bool max = name == "amax" || name == "max";
        y = roundedTo(reduceOver(row, max ? PointwiseReduce::Max : PointwiseReduce::Min, x), row.out);
    }
    return std::vector<int>{y};
}

std::vector<int> PointwiseExpression::addRowIndexReduction(const ChainMember& member, std::string_view name,
                                                           const Row& row)
{
    // One walk of the row carries (value, index) pairs (PointwiseReduce::ArgMax): the index is an
    // int, exact for any row the layouts cover.
    const bool max = name == "max" || name == "argmax";
    const int pair = reduceOver(row, max ? PointwiseReduce::ArgMax : PointwiseReduce::ArgMin, row.x);
    const int index = positionNode(pair);
    if (name.starts_with("arg"))
        return {index};
    return {roundedTo(pair, member.outputs[0].dtype), index};
}

Result<int> PointwiseExpression::addRowNorm(const ChainMember& member, std::string_view name, const Row& row,
                                            const std::vector<int>& argNodes)
{
    const auto refuse = [](const std::string& why) { return makeError(ErrorCode::Unsupported, why); };
    const int x = row.x;
    const auto f32 = [&](const char* op, const char* overload, std::vector<int> operands) {
        return applyNode(op, overload, std::move(operands), "float32", false);
    };
    const auto eps = row_args::number(member, "eps");
    if (!eps)
        return refuse("eps is not a number (None: not covered)");
    const bool instanceNorm = name == "instance_norm";
    if (instanceNorm) {
        const auto useInputStats = row_args::number(member, "use_input_stats");
        if (!useInputStats || *useInputStats == 0)
            return refuse("instance_norm with running statistics (use_input_stats false) is not covered");
        if (!row_args::absent(member, "running_mean") || !row_args::absent(member, "running_var"))
            return refuse("instance_norm updates running statistics in place (not covered)");
    }
    const int epsNode = constantNode(*eps);
    const int invN = constantNode(static_cast<double>(1.0f / static_cast<float>(row.length)));
    std::size_t w = 0, b = 0;
    const ArgSpec* weight = row_args::named(member, "weight", &w);
    const ArgSpec* bias = name == "rms_norm" ? nullptr : row_args::named(member, "bias", &b);
    const bool hasWeight = weight && weight->kind != ArgKind::None;
    const bool hasBias = bias && bias->kind != ArgKind::None;
    if ((hasWeight && argNodes.at(w) < 0) || (hasBias && argNodes.at(b) < 0))
        return refuse("weight or bias is not one tensor");
    if (row.groups > 0) {
        // The weight and bias [C] are read as [C, 1, ...] against the input [N, C, *].
        std::vector<std::int64_t> channelView(row.dims.size(), 1);
        const ArgSpec* input = row_args::named(member, "input");
        channelView[0] = input->tensors[0].sizes[1];
        int weightNode = -1, biasNode = -1;
        if (hasWeight && (weightNode = viewedInput(argNodes[w], channelView)) < 0)
            return refuse("a weight computed in the region is not covered");
        if (hasBias && (biasNode = viewedInput(argNodes[b], channelView)) < 0)
            return refuse("a bias computed in the region is not covered");
        const int mean = f32("mul", "Tensor", {reduceOver(row, PointwiseReduce::Sum, x), invN});
        const int centred = f32("sub", "Tensor", {x, mean});
        const int var = f32("mul", "Tensor",
                            {reduceOver(row, PointwiseReduce::Sum, f32("mul", "Tensor", {centred, centred})), invN});
        if (instanceNorm) {
            // Eager runs batch_norm's training kernel on [1, N * C, *]: invstd = 1 / sqrt(var + eps),
            // then (x - mean) * invstd * weight + bias.
            int y = f32("mul", "Tensor",
                        {centred, f32("reciprocal", "", {f32("sqrt", "", {f32("add", "Tensor", {var, epsNode})})})});
            if (weightNode >= 0)
                y = f32("mul", "Tensor", {y, weightNode});
            if (biasNode >= 0)
                y = f32("add", "Tensor", {y, biasNode});
            return roundedTo(y, row.out);
        }
        // Eager's group_norm kernel: per (n, c) a = rstd * w[c] and b = bias[c] - mean * a, then x * a + b.
        int a = f32("rsqrt", "", {f32("add", "Tensor", {var, epsNode})});
        if (weightNode >= 0)
            a = f32("mul", "Tensor", {a, weightNode});
        int shift = f32("neg", "", {f32("mul", "Tensor", {mean, a})});
        if (biasNode >= 0)
            shift = f32("add", "Tensor", {biasNode, f32("mul", "Tensor", {mean, f32("neg", "", {a})})});
        return roundedTo(f32("add", "Tensor", {f32("mul", "Tensor", {x, a}), shift}), row.out);
    }
    int centred = x;
    if (name == "layer_norm") {
        const int mean = f32("mul", "Tensor", {reduceOver(row, PointwiseReduce::Sum, x), invN});
        centred = f32("sub", "Tensor", {x, mean});
    }
    const int square = f32("mul", "Tensor", {centred, centred});
    const int var = f32("mul", "Tensor", {reduceOver(row, PointwiseReduce::Sum, square), invN});
    const int rstd = f32("rsqrt", "", {f32("add", "Tensor", {var, epsNode})});
    int y = f32("mul", "Tensor", {centred, rstd});
    if (hasWeight)
        y = f32("mul", "Tensor", {y, argNodes[w]});
    if (hasBias)
        y = f32("add", "Tensor", {y, argNodes[b]});
    return roundedTo(y, row.out);
}

} // namespace kforge::core
