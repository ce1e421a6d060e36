// Row reductions as expression nodes (PointwiseOptions::rowReductions): each covered member over the
// last dim of its input becomes Reduce nodes and the fp32 pointwise ops around them, as eager's CUDA
// kernels compute it (accumulation and every intermediate in fp32, one rounding of the result).
#include "pointwise/PointwiseExpression.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

namespace kforge::core {

namespace {

constexpr std::array<std::string_view, 11> kRowReductions = {"softmax",    "_softmax", "log_softmax", "_log_softmax",
                                                             "sum",        "mean",     "amax",        "amin",
                                                             "layer_norm", "rms_norm", "group_norm"};

bool isFloat(const std::string& dtype)
{
    return dtype == "float32" || dtype == "float16" || dtype == "bfloat16";
}

const ArgSpec* argNamed(const ChainMember& member, std::string_view name, std::size_t* index = nullptr)
{
    for (std::size_t a = 0; a < member.args.size(); ++a)
        if (member.args[a].name == name) {
            if (index)
                *index = a;
            return &member.args[a];
        }
    return nullptr;
}

// The dims a reduction's `dim` argument names, normalized to 0..rank-1: an int, a list of ints, or
// None / [] for every dim. nullopt when it is none of these or out of range.
std::optional<std::vector<std::int64_t>> reducedDims(const ArgSpec* dim, std::int64_t rank)
{
    std::vector<std::int64_t> dims;
    if (!dim || dim->kind == ArgKind::None || (dim->value.is_array() && dim->value.empty())) {
        for (std::int64_t d = 0; d < std::max<std::int64_t>(rank, 1); ++d)
            dims.push_back(d);
        return dims;
    }
    const auto add = [&](const nlohmann::json& v) {
        if (!v.is_number_integer())
            return false;
        std::int64_t d = v.get<std::int64_t>();
        const std::int64_t wrap = std::max<std::int64_t>(rank, 1);
        if (d < -wrap || d >= wrap)
            return false;
        dims.push_back(d < 0 ? d + wrap : d);
        return true;
    };
    if (dim->kind != ArgKind::Value)
        return std::nullopt;
    if (dim->value.is_array()) {
        for (const nlohmann::json& v : dim->value)
            if (!add(v))
                return std::nullopt;
    } else if (!add(dim->value)) {
        return std::nullopt;
    }
    std::sort(dims.begin(), dims.end());
    dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
    return dims;
}

std::optional<double> numberArg(const ChainMember& member, std::string_view name)
{
    const ArgSpec* arg = argNamed(member, name);
    if (!arg || arg->kind != ArgKind::Value || !arg->value.is_number())
        return std::nullopt;
    return arg->value.get<double>();
}

} // namespace

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

int PointwiseExpression::reduceNode(PointwiseReduce reduce, int operand, int member, int reducedDims,
                                    std::int64_t groups)
{
    PointwiseNode n;
    n.kind = PointwiseNode::Kind::Reduce;
    n.reduce = reduce;
    n.reducedDims = reducedDims;
    n.groups = groups;
    n.operands = {operand};
    n.dtype = "float32";
    n.member = member;
    return intern(std::move(n));
}

Result<int> PointwiseExpression::addRowReduction(const ChainMember& member, int memberIndex, const std::string& label,
                                                 const std::vector<int>& argNodes)
{
    const auto refuse = [&](const std::string& why) { return makeError(ErrorCode::Unsupported, label + ": " + why); };
    std::string_view name(member.op);
    name.remove_prefix(6);
    const bool groupNorm = name == "group_norm";
    const bool norm = name == "layer_norm" || name == "rms_norm" || groupNorm;
    std::size_t selfIndex = 0;
    const ArgSpec* self = argNamed(member, norm ? "input" : "self", &selfIndex);
    if (!self || argNodes.at(selfIndex) < 0)
        return refuse("its input is not one tensor");
    if (member.outputs.size() != 1)
        return refuse("expected one output");
    const TensorSpec& in = self->tensors[0];
    const std::string& out = member.outputs[0].dtype;
    if (!isFloat(in.dtype) || !isFloat(out))
        return refuse(in.dtype + " -> " + out + " not covered (float32, float16, bfloat16)");
    const auto rank = static_cast<std::int64_t>(in.sizes.size());
    if (rank == 0)
        return refuse("a 0-dim input (no row to reduce)");
    // The trailing dims reduced: the last for softmax; a norm's normalized_shape; a reduction's dims,
    // which must be trailing (every dim included: a mean of the whole tensor).
    std::int64_t rowRank = 1;
    std::int64_t groups = 0;
    if (groupNorm) {
        // [N, C, *]: each (n, group) is a row of C / groups channels and every position.
        const auto g = numberArg(member, "num_groups");
        if (rank < 2 || !g || *g < 1 || *g != static_cast<double>(static_cast<std::int64_t>(*g)) ||
            in.sizes[1] % static_cast<std::int64_t>(*g) != 0)
            return refuse("num_groups does not divide the channels (or the input has no channel dim)");
        groups = static_cast<std::int64_t>(*g);
        rowRank = rank - 1;
    } else if (norm) {
        const ArgSpec* shape = argNamed(member, "normalized_shape");
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
        rowRank = static_cast<std::int64_t>(shape->value.size());
    } else if (name.find("softmax") == std::string_view::npos) {
        auto dims = reducedDims(argNamed(member, "dim"), rank);
        if (!dims || dims->empty() || dims->back() != rank - 1 ||
            dims->front() != rank - static_cast<std::int64_t>(dims->size()))
            return refuse("reduces other dims than trailing ones (not covered)");
        rowRank = static_cast<std::int64_t>(dims->size());
    }
    std::int64_t n = 1;
    for (std::int64_t d = rank - rowRank; d < rank; ++d)
        n *= in.sizes[static_cast<std::size_t>(d)];
    if (groups > 0)
        n /= groups;
    if (n <= 0)
        return refuse("an empty row");
    const int x = argNodes[selfIndex];
    const auto reduce = [&](PointwiseReduce r, int operand) {
        return reduceNode(r, operand, memberIndex, static_cast<int>(rowRank), groups);
    };
    const auto f32 = [&](const char* op, const char* overload, std::vector<int> operands) {
        return applyNode(op, overload, std::move(operands), "float32", false);
    };
    const auto result = [&](const char* op, const char* overload, std::vector<int> operands) {
        return applyNode(op, overload, std::move(operands), out, true);
    };
    // An fp32 value as the member's result: rounded once where that is a 16-bit dtype.
    const auto rounded = [&](int value) {
        return out == "float32" ? value : applyNode("_to_copy", "", {value}, out, true);
    };
    const int invN = constantNode(static_cast<double>(1.0f / static_cast<float>(n)));
    int y = -1;
    if (norm) {
        const auto eps = numberArg(member, "eps");
        if (!eps)
            return refuse("eps is not a number (None: not covered)");
        const int epsNode = constantNode(*eps);
        std::size_t w = 0, b = 0;
        const ArgSpec* weight = argNamed(member, "weight", &w);
        const ArgSpec* bias = name == "layer_norm" || groupNorm ? argNamed(member, "bias", &b) : nullptr;
        const bool hasWeight = weight && weight->kind != ArgKind::None;
        const bool hasBias = bias && bias->kind != ArgKind::None;
        if ((hasWeight && argNodes.at(w) < 0) || (hasBias && argNodes.at(b) < 0))
            return refuse("weight or bias is not one tensor");
        if (groupNorm) {
            // Eager's kernel: per (n, c) a = rstd * w[c] and b = bias[c] - mean * a, then x * a + b.
            // The weight and bias [C] are read as [C, 1, ...] against the input.
            std::vector<std::int64_t> channelView(static_cast<std::size_t>(rank - 1), 1);
            channelView[0] = in.sizes[1];
            int weightNode = -1, biasNode = -1;
            if (hasWeight && (weightNode = viewedInput(argNodes[w], channelView)) < 0)
                return refuse("a weight computed in the region is not covered");
            if (hasBias && (biasNode = viewedInput(argNodes[b], channelView)) < 0)
                return refuse("a bias computed in the region is not covered");
            const int mean = f32("mul", "Tensor", {reduce(PointwiseReduce::Sum, x), invN});
            const int centred = f32("sub", "Tensor", {x, mean});
            const int var =
                f32("mul", "Tensor", {reduce(PointwiseReduce::Sum, f32("mul", "Tensor", {centred, centred})), invN});
            int a = f32("rsqrt", "", {f32("add", "Tensor", {var, epsNode})});
            if (weightNode >= 0)
                a = f32("mul", "Tensor", {a, weightNode});
            int shift = f32("neg", "", {f32("mul", "Tensor", {mean, a})});
            if (biasNode >= 0)
                shift = f32("add", "Tensor", {biasNode, f32("mul", "Tensor", {mean, f32("neg", "", {a})})});
            return rounded(f32("add", "Tensor", {f32("mul", "Tensor", {x, a}), shift}));
        }
        int centred = x;
        if (name == "layer_norm") {
            const int mean = f32("mul", "Tensor", {reduce(PointwiseReduce::Sum, x), invN});
            centred = f32("sub", "Tensor", {x, mean});
        }
        const int square = f32("mul", "Tensor", {centred, centred});
        const int var = f32("mul", "Tensor", {reduce(PointwiseReduce::Sum, square), invN});
        const int rstd = f32("rsqrt", "", {f32("add", "Tensor", {var, epsNode})});
        y = f32("mul", "Tensor", {centred, rstd});
        if (hasWeight)
            y = f32("mul", "Tensor", {y, argNodes[w]});
        if (hasBias)
            y = f32("add", "Tensor", {y, argNodes[b]});
        y = rounded(y);
    } else {
        const bool softmax = name.find("softmax") != std::string_view::npos;
        if (softmax) {
            auto dims = reducedDims(argNamed(member, "dim"), rank);
            if (!dims || dims->size() != 1 || dims->front() != rank - 1)
                return refuse("reduces other dims than the last one (not covered)");
        }
        // A dtype argument converts the input first: covered where that changes no value in fp32
        // (to float32, or to the input's own dtype); half_to_float likewise.
        if (!(out == in.dtype || out == "float32"))
            return refuse("converts " + in.dtype + " to " + out + " (only to float32 or its own dtype is covered)");
        if (softmax) {
            const int m = reduce(PointwiseReduce::Max, x);
            const int d = f32("sub", "Tensor", {x, m});
            const int ex = f32("exp", "", {d});
            const int s = reduce(PointwiseReduce::Sum, ex);
            if (name.find("log") != std::string_view::npos)
                y = result("sub", "Tensor", {d, f32("log", "", {s})});
            else
                y = result("div", "Tensor", {ex, s});
        } else if (name == "sum") {
            y = rounded(reduce(PointwiseReduce::Sum, x));
        } else if (name == "mean") {
            y = result("mul", "Tensor", {reduce(PointwiseReduce::Sum, x), invN});
        } else {
            y = rounded(reduce(name == "amax" ? PointwiseReduce::Max : PointwiseReduce::Min, x));
        }
    }
    return y;
}

} // namespace kforge::core
