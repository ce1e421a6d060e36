#include "capture/HostScalarConstants.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>

namespace kforge::core {

namespace {

bool isIntegerScalarConstant(const torch::jit::Node* node)
{
    if (node->kind() != c10::prim::Constant || !node->hasAttribute(c10::attr::value) ||
        node->kindOf(c10::attr::value) != torch::jit::AttributeKind::t)
        return false;
    const at::Tensor& value = node->t(c10::attr::value);
    return value.defined() && value.dim() == 0 && c10::isIntegralType(value.scalar_type(), /*includeBool=*/true);
}

int moveIntegerScalarConstants(torch::jit::Block* block, c10::Device host)
{
    int moved = 0;
    for (torch::jit::Node* node : block->nodes()) {
        for (torch::jit::Block* inner : node->blocks())
            moved += moveIntegerScalarConstants(inner, host);
        if (!isIntegerScalarConstant(node) || node->t(c10::attr::value).device() == host)
            continue;
        // The output's type stays as loaded: a plain Tensor type, which names no device.
        node->t_(c10::attr::value, node->t(c10::attr::value).to(host));
        ++moved;
    }
    return moved;
}

} // namespace

int keepIntegerScalarConstantsOn(torch::jit::Module& module, c10::Device host)
{
    int moved = 0;
    for (torch::jit::Function* function : module._ivalue()->compilation_unit()->get_functions())
        if (function->isGraphFunction())
            moved += moveIntegerScalarConstants(torch::jit::toGraphFunction(*function).graph()->block(), host);
    return moved;
}

} // namespace kforge::core
