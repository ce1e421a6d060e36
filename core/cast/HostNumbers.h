#pragma once
// When a host number may stand in for a packaged kernel's 0-dim device operand (runtime/HostScalars.h):
// the decisions, torch-free, so that they are tested on the CPU.
//
// A trace keeps a Python number (`attn * self.scaling`) as a 0-dim tensor constant on the GPU; eager
// Python passes it as a wrapped 0-dim CPU tensor. Eager computes the two alike only where
//  - promotion agrees: every dimensioned operand is floating of the output's dtype (an integer
//    tensor times a 0-dim float64 tensor is float64, times a Python float the default dtype), and
//  - the value agrees: eager's CUDA kernel (and the packaged one) converts a 0-dim device operand to
//    the output's dtype before the fp32 math, but reads a host number straight into fp32, so the
//    value must survive that conversion.

#include <string>
#include <utility>
#include <vector>

namespace kforge::core {

/// The output dtype a host number may be served into, for a card whose guarded tensors have these
/// dtypes (paired with whether each is 0-dim) and this output dtype; "" when none may. Only
/// "float32", "float16" and "bfloat16" outputs.
std::string hostNumberOutputDtype(const std::vector<std::pair<std::string, bool>>& guardDtypesAndZeroDim,
                                  const std::string& outputDtype);

/// Whether `value`, read into fp32, is unchanged by rounding to `outputDtype` ("float32",
/// "float16", "bfloat16"; false for any other dtype, for NaN and for a value that overflows it).
bool hostNumberSurvivesRounding(double value, const std::string& outputDtype);

} // namespace kforge::core
