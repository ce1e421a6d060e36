#pragma once
// Where the kforge-worker executable is: an explicit path (--worker), else $KFORGE_WORKER, else
// next to the running executable (bin/kforge-worker installed; build/worker/kforge-worker from
// build/cli/kforge or build/app/kernelforge in a build tree). Used by the CLI and the desktop app.

#include <optional>
#include <string>

namespace kforge::core {

std::string workerPath(const std::optional<std::string>& fromOption);

} // namespace kforge::core
