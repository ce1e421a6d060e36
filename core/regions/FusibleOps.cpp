#include "regions/FusibleOps.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>

namespace kforge::core {
namespace {

const std::unordered_set<std::string_view>& fusibleOps()
{
    static const std::unordered_set<std::string_view> ops = {
        // Pointwise arithmetic and comparisons.
        "add",
        "sub",
        "rsub",
        "mul",
        "div",
        "neg",
        "pow",
        "rsqrt",
        "sqrt",
        "reciprocal",
        "square",
        "abs",
        "sign",
        "exp",
        "exp2",
        "expm1",
        "log",
        "log1p",
        "log2",
        "sin",
        "cos",
        "erf",
        "erfc",
        "erfinv",
        "log10",
        "frac",
        "floor",
        "ceil",
        "round",
        "trunc",
        "minimum",
        "maximum",
        "fmod",
        "remainder",
        "lerp",
        "addcmul",
        "addcdiv",
        "where",
        "masked_fill",
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        "logical_not",
        "logical_and",
        "logical_or",
        "logical_xor",
        "bitwise_not",
        "bitwise_and",
        "bitwise_or",
        "bitwise_xor",
        "__and__",
        "__or__",
        "__xor__",
        "clamp",
        "clamp_min",
        "clamp_max",
        "clip",
        // Activations.
        "tanh",
        "sigmoid",
        "relu",
        "relu6",
        "gelu",
        "silu",
        "mish",
        "hardswish",
        "hardsigmoid",
        "hardtanh",
        "leaky_relu",
        "elu",
        "selu",
        "celu",
        "softplus",
        "softshrink",
        "hardshrink",
        "threshold",
        "glu",
        "logsigmoid",
        // Casts and copies (an aliasing one, such as a no-op to(), is a view and bounds the region).
        "to",
        "_to_copy",
        "type_as",
        "clone",
        "contiguous",
        // Softmax.
        "softmax",
        "_softmax",
        "log_softmax",
        "_log_softmax",
        // Norms.
        "layer_norm",
        "native_layer_norm",
        "rms_norm",
        "_fused_rms_norm",
        "group_norm",
        "native_group_norm",
        "batch_norm",
        "native_batch_norm",
        "_native_batch_norm_legit_no_training",
        "_batch_norm_impl_index",
        "instance_norm",
        // Reductions.
        "sum",
        "mean",
        "amax",
        "amin",
        "max",
        "min",
        "prod",
        "var",
        "std",
        "var_mean",
        "std_mean",
        "norm",
        "linalg_vector_norm",
        "logsumexp",
        // Concatenation (isFusibleCard's conditions).
        "cat",
    };
    return ops;
}

bool onGpu(const std::string& device)
{
    return device.rfind("cpu", 0) != 0;
}

// A cat the pointwise generator reads as branches: two non-empty tensors or more, each of the
// result's dtype and rank (eager skips empty ones, and promotes mixed dtypes).
bool concatenatesBranches(const OperatorCard& card)
{
    if (card.args.empty() || card.args[0].kind != ArgKind::TensorList || card.outputs.size() != 1)
        return false;
    const TensorSpec& out = card.outputs[0];
    int branches = 0;
    for (const TensorSpec& t : card.args[0].tensors) {
        if (t.numel() == 0)
            continue;
        if (t.dtype != out.dtype || t.sizes.size() != out.sizes.size())
            return false;
        ++branches;
    }
    return branches >= 2;
}

} // namespace

bool isFusibleOpName(const std::string& op)
{
    std::string_view name(op);
    if (!name.starts_with("aten::"))
        return false;
    name.remove_prefix(6);
    if (isInPlaceOpName(name))
        name.remove_suffix(1); // relu_ -> relu
    return fusibleOps().contains(name);
}

bool isConcatenationOp(const std::string& op)
{
    return op == "aten::cat";
}

bool isFusibleCard(const OperatorCard& card, bool gpuCapture)
{
    if (card.vendorBacked || isVendorBackedOp(card.op) || !isFusibleOpName(card.op) || card.outputs.empty())
        return false;
    if (isConcatenationOp(card.op) && !concatenatesBranches(card))
        return false;
    std::string device;
    bool sameDevice = true;
    const auto see = [&](const TensorSpec& spec) {
        if (device.empty())
            device = spec.device;
        else if (spec.device != device)
            sameDevice = false;
    };
    for (const ArgSpec& arg : card.args)
        std::for_each(arg.tensors.begin(), arg.tensors.end(), see);
    std::for_each(card.outputs.begin(), card.outputs.end(), see);
    // A 0-dim CPU tensor mixed into GPU math (a traced scalar constant) is a scalar argument, not
    // a cross-device op; anything else across devices is a copy.
    if (!sameDevice) {
        sameDevice = true;
        device.clear();
        for (const ArgSpec& arg : card.args)
            for (const TensorSpec& spec : arg.tensors)
                if (!(spec.sizes.empty() && !onGpu(spec.device)))
                    see(spec);
        std::for_each(card.outputs.begin(), card.outputs.end(), see);
    }
    if (!sameDevice)
        return false;
    return !(gpuCapture && !onGpu(device));
}

} // namespace kforge::core
