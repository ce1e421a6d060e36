#include "protocol/WorkerPath.h"

#include "util/ChildProcess.h"

namespace kforge::core {

std::string workerPath(const std::optional<std::string>& fromOption)
{
    if (fromOption)
        return *fromOption;
    return siblingExecutablePath("kforge-worker", "worker", "KFORGE_WORKER");
}

} // namespace kforge::core
