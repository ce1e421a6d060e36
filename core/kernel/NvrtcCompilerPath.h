#pragma once
// Where the kforge-nvrtc executable is (docs/nvrtc-compile.md, "The compiler process"): the way
// protocol/WorkerPath.h finds kforge-worker.

#include <string>

namespace kforge::core {

/// $KFORGE_NVRTC when set and non-empty; else next to the running executable (bin/kforge-nvrtc
/// beside an installed kforge or kernelforge); else nvrtc/kforge-nvrtc beside the running
/// executable's folder (build/cli/kforge, build/app/kernelforge in a build tree); else, for a program
/// that runs from inside the build tree this library was built in (the tests), that build's
/// kforge-nvrtc. When none exists: the path next to the running executable (whose absence the
/// compiler then reports).
std::string nvrtcCompilerPath();

} // namespace kforge::core
