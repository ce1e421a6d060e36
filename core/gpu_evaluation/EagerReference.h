#pragma once
// What eager computes for a card: its op through the dispatcher, or a region card's chain replayed
// member by member (capture/ChainReplay.h). The reference every candidate is judged and timed
// against. GPU worker only (CUDA build).

#include "capture/ChainReplay.h"
#include "model/OperatorCard.h"
#include "util/Result.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <memory>
#include <optional>
#include <vector>

namespace kforge::core {

/// The tensors among `values`, lists flattened (aten::cat's tensors), in order.
std::vector<at::Tensor> tensorsOf(const std::vector<c10::IValue>& values);

class EagerReference {
public:
    /// Unsupported when the card's op is not in the dispatcher; a chain that cannot be replayed.
    static Result<EagerReference> of(const OperatorCard& card);

    /// The schema of an op card (for its mutated argument); none for a region.
    const c10::FunctionSchema* schema() const { return m_handle ? &m_handle->schema() : nullptr; }

    /// Eager's outputs for `inputs`. Throws what LibTorch throws; a chain's failure as
    /// std::runtime_error. An in-place op or member writes into `inputs`: pass copies.
    std::vector<at::Tensor> operator()(const std::vector<c10::IValue>& inputs) const;

private:
    std::optional<c10::OperatorHandle> m_handle;
    std::shared_ptr<const ChainReplay> m_chain;
};

} // namespace kforge::core
