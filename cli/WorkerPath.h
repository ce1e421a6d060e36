#pragma once
// Where the kforge-worker executable is: --worker, else $KFORGE_WORKER, else next to kforge
// (bin/kforge-worker installed, build/worker/kforge-worker in a build tree).

#include <optional>
#include <string>

namespace kforge::cli {

std::string workerPath(const std::optional<std::string>& fromOption);

} // namespace kforge::cli
