#include "capture/DeviceWaits.h"

#include <algorithm>
#include <array>
#include <map>
#include <string_view>

namespace kforge::core {

namespace {

bool onGpu(const TensorSpec& tensor)
{
    return tensor.device.rfind("cuda", 0) == 0;
}

bool anyInputOnGpu(const OperatorCard& card)
{
    return std::any_of(card.args.begin(), card.args.end(),
                       [](const ArgSpec& arg) { return std::any_of(arg.tensors.begin(), arg.tensors.end(), onGpu); });
}

// Ops whose result the host needs before it can go on: a value read on the host, or an output
// whose size depends on the data.
constexpr std::array<std::string_view, 13> kHostReads = {
    "aten::item",
    "aten::_local_scalar_dense",
    "aten::is_nonzero",
    "aten::equal",
    "aten::allclose",
    "aten::nonzero",
    "aten::masked_select",
    "aten::unique",
    "aten::_unique",
    "aten::_unique2",
    "aten::unique_consecutive",
    "aten::unique_dim",
    "aten::repeat_interleave",
};

// Ops that can copy a tensor to another device (their output says which).
constexpr std::array<std::string_view, 3> kCopies = {"aten::to", "aten::_to_copy", "aten::cpu"};

bool copiesToHost(const OperatorCard& card)
{
    if (card.op == "aten::copy_") { // self (the destination) on the host, src on the GPU
        const ArgSpec* self = card.findArg("self");
        const ArgSpec* src = card.findArg("src");
        return self && src && !self->tensors.empty() && !src->tensors.empty() && !onGpu(self->tensors[0]) &&
            onGpu(src->tensors[0]);
    }
    if (std::find(kCopies.begin(), kCopies.end(), card.op) == kCopies.end())
        return false;
    return anyInputOnGpu(card) && !card.outputs.empty() &&
        std::none_of(card.outputs.begin(), card.outputs.end(), onGpu);
}

} // namespace

bool waitsForTheGpu(const OperatorCard& card)
{
    if (std::find(kHostReads.begin(), kHostReads.end(), card.op) != kHostReads.end())
        return anyInputOnGpu(card);
    return copiesToHost(card);
}

std::optional<std::string> deviceWaitsNote(const std::vector<OperatorCard>& cards)
{
    std::map<std::string, std::int64_t> callsByOp;
    std::int64_t total = 0;
    for (const OperatorCard& card : cards) {
        if (!waitsForTheGpu(card))
            continue;
        callsByOp[card.qualifiedName()] += card.callCount;
        total += card.callCount;
    }
    if (total == 0)
        return std::nullopt;
    std::string which;
    for (const auto& [op, calls] : callsByOp)
        which += (which.empty() ? "" : ", ") + op + " x" + std::to_string(calls);
    return "the model waits for the GPU " + std::to_string(total) + (total == 1 ? " time" : " times") +
        " per forward (" + which +
        " on GPU tensors): its end-to-end time includes these waits, which no kernel removes; a value "
        "that could stay a Python number or on the host avoids them";
}

} // namespace kforge::core
