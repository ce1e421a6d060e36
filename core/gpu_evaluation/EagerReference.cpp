#include "gpu_evaluation/EagerReference.h"

#include <stdexcept>

namespace kforge::core {

std::vector<at::Tensor> tensorsOf(const std::vector<c10::IValue>& values)
{
    std::vector<at::Tensor> tensors;
    for (const c10::IValue& value : values) {
        if (value.isTensor())
            tensors.push_back(value.toTensor());
        else if (value.isTensorList())
            for (const at::Tensor& t : value.toTensorVector())
                tensors.push_back(t);
    }
    return tensors;
}

Result<EagerReference> EagerReference::of(const OperatorCard& card)
{
    EagerReference reference;
    if (card.region) {
        auto chain = ChainReplay::prepare(*card.region);
        if (!chain)
            return chain.error();
        reference.m_chain = std::make_shared<ChainReplay>(std::move(chain.value()));
        return reference;
    }
    auto handle = c10::Dispatcher::singleton().findSchema({card.op, card.overload});
    if (!handle)
        return makeError(ErrorCode::Unsupported, "operator not found in the dispatcher", card.qualifiedName());
    reference.m_handle = *handle;
    return reference;
}

std::vector<at::Tensor> EagerReference::operator()(const std::vector<c10::IValue>& inputs) const
{
    if (m_chain) {
        auto outputs = m_chain->run(tensorsOf(inputs));
        if (!outputs)
            throw std::runtime_error(outputs.error().toString());
        return outputs.value();
    }
    std::vector<c10::IValue> stack(inputs.begin(), inputs.end());
    m_handle->callBoxed(stack);
    return tensorsOf(stack);
}

} // namespace kforge::core
