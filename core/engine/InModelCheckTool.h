#pragma once
// The in-model check of `kforge export` (docs/cast-format.md) as run by kforge-cast-run, the helper
// that links libkforge_runtime and the CUDA driver (cast_run/CastRunTool.cpp): the CLI and the
// desktop app pass runInModelCheckTool as ExportRequest::inModelCheck, so that neither links the
// driver and both start on machines without one. Torch-free.
//
// Blocking: runs the model several times through the runtime (seconds to minutes).

#include "cast_export/CastExport.h"
#include "model/Project.h"

#include <filesystem>
#include <string>

namespace kforge::core {

/// kforge-cast-run: $KFORGE_CAST_RUN, else next to the running executable (build/runtime/ in a
/// build tree). Only CUDA builds have it.
std::string castRunToolPath();

/// The helper's JSON verdict on `package`, run with the capture's recorded inputs, or "not run" with
/// the reason it could not give one (no helper in this build, no GPU, inputs that cannot be built).
/// A helper killed by a signal ran our kernels and crashed: that fails the check and drops every
/// custom kernel.
InModelCheck runInModelCheckTool(const std::filesystem::path& package, const CaptureInfo& capture);

} // namespace kforge::core
