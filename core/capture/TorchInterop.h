#pragma once
// Conversions between LibTorch values and Kernel Forge's torch-free value types.
// Internal to core: only the few LibTorch adapter files include this header.

#include "model/ArgSpec.h"

#include <ATen/core/ivalue.h>

#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace kforge::core::torchinterop {

/// "float32", "bfloat16", "int64", ... for a scalar type.
std::string dtypeName(c10::ScalarType type);
/// The inverse of dtypeName for canonical names; false for an unknown name.
bool scalarTypeFromName(const std::string& name, c10::ScalarType& out);

TensorSpec tensorSpecOf(const at::Tensor& tensor);

/// Describes one operator argument; `name`/`type` come from the schema.
ArgSpec argSpecOf(const c10::IValue& value, std::string name, std::string type);

/// A copy of `tensor` on `device` with exactly the same sizes and strides (also for expanded,
/// overlapping or non-contiguous layouts): the storage span the view covers is copied as a whole.
/// Host to device copies are staged through pinned memory and ordered on the current stream.
at::Tensor cloneExact(const at::Tensor& tensor, c10::Device device);

/// `value` with every tensor in it, in lists (aten::cat's tensors) and tuples too, replaced by
/// `replace(tensor)` (undefined ones included); everything else as it is.
c10::IValue mapTensors(const c10::IValue& value, const std::function<at::Tensor(const at::Tensor&)>& replace);

/// Deep copy of an argument or result: tensors (also inside lists) via cloneExact, others as is.
c10::IValue cloneValue(const c10::IValue& value, c10::Device device);

/// Bytes of tensor storage an IValue holds (the spans cloneExact copies).
std::int64_t payloadBytes(const c10::IValue& value);

/// One readable line from a LibTorch/TorchScript exception: the innermost error message without
/// C++ or TorchScript tracebacks.
std::string oneLineError(const std::exception& error);

} // namespace kforge::core::torchinterop
