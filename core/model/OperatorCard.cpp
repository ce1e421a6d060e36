#include "model/OperatorCard.h"

#include "util/Hash.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace kforge::core {

std::string OperatorCard::displayName() const
{
    return region ? "region: " + region->text() : qualifiedName();
}

std::string OperatorCard::qualifiedName() const
{
    return overload.empty() ? op : op + "." + overload;
}

double OperatorCard::totalEagerUs() const
{
    return eager ? eager->medianUs * static_cast<double>(callCount) : 0.0;
}

bool OperatorCard::runsOnHost() const
{
    const auto onGpu = [](const TensorSpec& t) { return t.device.rfind("cuda", 0) == 0; };
    for (const ArgSpec& arg : args)
        if (std::any_of(arg.tensors.begin(), arg.tensors.end(), onGpu))
            return false;
    return std::none_of(outputs.begin(), outputs.end(), onGpu);
}

bool OperatorCard::isHostNumberArg(const ArgSpec& arg) const
{
    if (arg.kind != ArgKind::Tensor || arg.tensors.size() != 1 || outputs.empty())
        return false;
    const TensorSpec& t = arg.tensors[0];
    return t.sizes.empty() && t.device == "cpu" && outputs[0].device.rfind("cuda", 0) == 0;
}

const ArgSpec* OperatorCard::findArg(const std::string& name) const
{
    for (const ArgSpec& arg : args) {
        if (arg.name == name)
            return &arg;
    }
    return nullptr;
}

std::string variantKey(const std::string& op, const std::string& overload, const std::vector<ArgSpec>& args)
{
    std::string key = overload.empty() ? op : op + "." + overload;
    key += '(';
    for (size_t i = 0; i < args.size(); ++i) {
        if (i)
            key += ", ";
        key += args[i].keyText();
    }
    key += ')';
    return key;
}

std::string cardIdForKey(const std::string& key)
{
    return fnv1a64Hex(key);
}

bool isVendorBackedOp(const std::string& op)
{
    // Exact names, then prefixes. Kept as data so the list reads as a specification.
    static constexpr std::array<std::string_view, 22> exact = {"aten::linear",
                                                               "aten::addmm",
                                                               "aten::mm",
                                                               "aten::bmm",
                                                               "aten::baddbmm",
                                                               "aten::addbmm",
                                                               "aten::matmul",
                                                               "aten::addmv",
                                                               "aten::mv",
                                                               "aten::dot",
                                                               "aten::vdot",
                                                               "aten::einsum",
                                                               "aten::_addmm_activation",
                                                               "aten::scaled_dot_product_attention",
                                                               "aten::lstm",
                                                               "aten::gru",
                                                               "aten::rnn_tanh",
                                                               "aten::rnn_relu",
                                                               "aten::_scaled_mm",
                                                               "aten::_int_mm",
                                                               "aten::tensordot",
                                                               "aten::bilinear"};
    static constexpr std::array<std::string_view, 9> prefixes = {"aten::conv",
                                                                 "aten::_conv",
                                                                 "aten::convolution",
                                                                 "aten::_convolution",
                                                                 "aten::cudnn_",
                                                                 "aten::miopen_",
                                                                 "aten::_scaled_dot_product_",
                                                                 "aten::_flash_attention",
                                                                 "aten::_efficient_attention"};
    if (std::find(exact.begin(), exact.end(), op) != exact.end())
        return true;
    return std::any_of(prefixes.begin(), prefixes.end(),
                       [&](std::string_view prefix) { return std::string_view(op).starts_with(prefix); });
}

bool isInPlaceOpName(std::string_view op)
{
    if (const std::size_t colons = op.find("::"); colons != std::string_view::npos)
        op.remove_prefix(colons + 2);
    return op.size() > 1 && op.back() == '_' && op[op.size() - 2] != '_' && op.front() != '_';
}

} // namespace kforge::core
