#pragma once
// kforge::region_module: Python's way to the loaded package's region kernels (docs/runtime.md,
// "Fused regions"). Python cannot hand a TorchScript module to a custom op, so the module travels
// as the bytes torch.jit.save writes; it comes back, as bytes too, with the region method added
// (RegionMethod.h). runtime/kforge_runtime.py wraps it as a torch.compile backend.

#include <ATen/core/Tensor.h>

#include <string>
#include <tuple>

namespace kforge::runtime {

inline constexpr const char* kRegionModuleSchema = "region_module(Tensor model) -> (Tensor, str)";

/// `model`: a uint8 tensor of a saved TorchScript module. Returns the module saved again with
/// kRegionMethod added for the loaded package's region kernels, and {"method", "replaced",
/// "notes"} as JSON text. Raises (one line) when no package is loaded or the bytes are no module.
std::tuple<at::Tensor, std::string> regionModule(const at::Tensor& model);

} // namespace kforge::runtime
