#pragma once
// Device copies of host scalars, for calls whose number operand arrives on the host. Internal to
// libkforge_runtime.
//
// Why: a trace keeps a Python number of the model's code (`attn * self.scaling`) as a 0-dim tensor
// constant, which loads onto the GPU, and the card records that operand as a 0-dim CUDA tensor the
// kernel reads through a pointer. The same model run eagerly from Python passes the number as a
// wrapped 0-dim CPU tensor instead, which a guard on device tensors refuses; the attention scale
// of the decoders (one of their largest gains) then never hits in Python. Such a call is served
// with the value copied to the GPU once and kept: values of one model are few and fixed.
//
// Thread: any; the cache is shared by every kernel and survives unloading (values are immutable).

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <utility>
#include <vector>

namespace kforge::runtime {

/// Whether `t` is a 0-dim host tensor of dtype `type` (a Python number's wrapped tensor, or a
/// 0-dim CPU tensor): what a 0-dim device operand of that dtype may be served from.
bool isHostScalarOf(const at::Tensor& t, c10::ScalarType type);

/// The dtype of the output a host scalar may be served into for a card with these guard dtypes
/// (0-dim ones flagged) and this output dtype; Undefined when none may. Eager promotes a wrapped
/// number and a 0-dim tensor alike only where every dimensioned operand is floating of the output's
/// dtype: an integer tensor times a 0-dim float64 tensor gives float64, times a Python float the
/// default dtype. Only float32, float16 and bfloat16 outputs (the built-in kernels' dtypes).
c10::ScalarType hostScalarOutputType(const std::vector<std::pair<c10::ScalarType, bool>>& guardTypesAndZeroDim,
                                     c10::ScalarType output);

/// Whether a host scalar `t` (isHostScalarOf) computes as the card's 0-dim device operand did.
/// Eager's CUDA kernel converts a 0-dim device operand to the output's dtype before the fp32 math
/// (and the packaged kernel does the same), but reads a host scalar straight into fp32: the two
/// agree only where the value survives that conversion (0.0625 in bfloat16 does; 1/sqrt(128)
/// does not, and the call then runs the original kernel).
bool hostScalarComputesAlike(const at::Tensor& t, c10::ScalarType output);

/// The device copy of such a tensor's value on cuda:`device`, made on first use (a copy on the
/// current stream that completes before this returns) and kept for the process's life; nullptr
/// when none can be made now: the current stream is capturing a CUDA graph, the cache already holds
/// its limit of distinct values, or the copy failed. The caller then runs the original kernel.
const at::Tensor* deviceCopyOfHostScalar(const at::Tensor& hostScalar, int device);

} // namespace kforge::runtime
