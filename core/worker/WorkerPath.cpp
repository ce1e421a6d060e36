#include "worker/WorkerPath.h"

#include <cstdlib>
#include <filesystem>

namespace kforge::core {

std::string workerPath(const std::optional<std::string>& fromOption)
{
    namespace fs = std::filesystem;
    if (fromOption)
        return *fromOption;
    if (const char* fromEnv = std::getenv("KFORGE_WORKER"); fromEnv && *fromEnv)
        return fromEnv;
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec)
        return "kforge-worker";
    for (const fs::path& candidate : {self.parent_path() / "kforge-worker", self.parent_path() / ".." / "worker" / "kforge-worker"}) {
        if (fs::exists(candidate, ec))
            return fs::weakly_canonical(candidate, ec).string();
    }
    return (self.parent_path() / "kforge-worker").string();
}

} // namespace kforge::core
