#pragma once
// Which captured calls make the host wait for the GPU mid-forward. Torch-free (reads cards only).
//
// A forward pass that reads a GPU value on the host (.item(), a copy to the CPU, a data-dependent
// shape) stops enqueuing until every kernel before it has run. End to end, such a model's time
// includes those waits whatever its kernels gain, and its GPU time cannot be measured with the host
// hidden (the in-model check and `kforge run` then say so). The capture names them so the user can
// remove them (often shape arithmetic or a check on a tensor that could stay a Python number).

#include "model/OperatorCard.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge::core {

/// True when one call of `card` makes the host wait for the GPU: it reads a CUDA tensor's value on
/// the host (aten::item, _local_scalar_dense, is_nonzero, equal, allclose), has an output whose size
/// depends on GPU data (nonzero, masked_select, unique), or copies a CUDA tensor to the CPU.
bool waitsForTheGpu(const OperatorCard& card);

/// "the model waits for the GPU N times per forward (aten::item x12, ...): ..." over `cards` of one
/// captured forward pass (callCount per card), or nullopt when none waits.
std::optional<std::string> deviceWaitsNote(const std::vector<OperatorCard>& cards);

} // namespace kforge::core
