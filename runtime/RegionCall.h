#pragma once
// kforge::region_call, the op a rewritten model graph calls where a fused region's chain ran
// (core/region_rewrite/RegionRewrite.h): the region's inputs are offered to the named region
// kernels of the loaded package; the first whose guard holds computes the region's outputs.
// Internal to libkforge_runtime, which registers the op (PythonOps.cpp).

#include <ATen/core/Tensor.h>

#include <string>
#include <tuple>
#include <vector>

namespace kforge::runtime {

/// The op's name, as a graph calls it.
inline constexpr const char* kRegionCallOp = "kforge::region_call";
/// Its schema: the candidate kernels' ids and the region's inputs in; whether a kernel served the
/// call and, if it did, the region's outputs out (else an empty list: run the original ops).
inline constexpr const char* kRegionCallSchema = "region_call(str[] kernels, Tensor[] inputs) -> (bool, Tensor[])";

/// The op's implementation. Declines (false, no outputs) when autograd would have to record the
/// region (grad mode on and an input that requires a gradient), when no named kernel is loaded, or
/// when no guard holds; declines are counted as the kernels' fallbacks with the reason.
std::tuple<bool, std::vector<at::Tensor>> regionCall(std::vector<std::string> kernels, std::vector<at::Tensor> inputs);

} // namespace kforge::runtime
