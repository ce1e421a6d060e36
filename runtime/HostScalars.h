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

#include <string>

namespace kforge::runtime {

/// Whether `t` is a 0-dim host tensor of dtype `type` (a Python number's wrapped tensor, or a
/// 0-dim CPU tensor): what a 0-dim device operand of that dtype may be served from.
bool isHostScalarOf(const at::Tensor& t, c10::ScalarType type);

/// Whether a host scalar `t` (isHostScalarOf) computes as the card's 0-dim device operand did in a
/// kernel whose output is `outputDtype` (core/cast/HostNumbers.h: the value must survive rounding to
/// it; which outputs qualify at all is core::hostNumberOutputDtype's decision, made at load).
bool hostScalarComputesAlike(const at::Tensor& t, const std::string& outputDtype);

/// The device copy of such a tensor's value on cuda:`device`, made on first use (a copy on the
/// current stream that completes before this returns) and kept for the process's life; nullptr
/// when none can be made now: the current stream is capturing a CUDA graph, the cache already holds
/// its limit of distinct values, or the copy failed. The caller then runs the original kernel.
const at::Tensor* deviceCopyOfHostScalar(const at::Tensor& hostScalar, int device);

} // namespace kforge::runtime
