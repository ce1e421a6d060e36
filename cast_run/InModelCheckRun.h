#pragma once
// Export's in-model check (docs/cast-format.md, "In-model check"), run in the exporting process
// through libkforge_runtime on the current CUDA device:
// 1. The package's model on the project's captured inputs, eager, gives the reference.
// 2. With every custom kernel loaded, the outputs must be as accurate as eager's: judged against
//    the model run in float64, at most twice eager's relative RMSE plus one rounding
//    (core/checks/ModelAccuracy.h); element-wise within the reduction tolerance of their dtype when
//    the model does not run in float64. If they are not, each kernel is tried alone; a kernel
//    that alone fails is dropped; if none does alone, all are dropped (they fail only together).
// 3. Each remaining kernel's removal is timed against the full set, and then the kernels left
//    against none, interleaved (core/cast_export/KernelSpeedCheck.h), by wall time and by GPU time with
//    the host's launch overhead hidden (ForwardGpuTimer.h): a kernel whose removal makes the
//    model's GPU time lower (its wall time, where the GPU time cannot be isolated), or a set of
//    kernels that makes the model slower than none by either clock, is dropped.
// Anything that stops the check from running (no GPU, inputs file gone) is a "not run" result
// with the reason, not an error: export still writes the package and says so in its audit.

#include "cast_export/CastExport.h"
#include "cast_export/KernelSpeedCheck.h"
#include "model/Project.h"

#include <filesystem>

namespace kforge::runtime {

using InModelCheckOptions = core::KernelSpeedCheckOptions;

core::InModelCheck checkPackageInModel(const std::filesystem::path& package, const core::CaptureInfo& capture,
                                       const InModelCheckOptions& options = {});

} // namespace kforge::runtime
