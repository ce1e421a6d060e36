#include "kernel/NvrtcCompilerPath.h"

#include "util/ChildProcess.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace kforge::core {

std::string nvrtcCompilerPath()
{
    namespace fs = std::filesystem;
    constexpr const char* kEnv = "KFORGE_NVRTC";
    const std::string path = siblingExecutablePath("kforge-nvrtc", "nvrtc", kEnv);
    if (const char* fromEnv = std::getenv(kEnv); fromEnv && *fromEnv)
        return path;
    std::error_code ec;
    if (fs::exists(path, ec))
        return path;
#if defined(KFORGE_NVRTC_BUILD_PATH) && defined(KFORGE_BUILD_DIR)
    // Test programs live in many folders of the build tree; they use the build's own compiler. An
    // installed program never does, even where the build tree still exists.
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    const fs::path buildDir = fs::weakly_canonical(KFORGE_BUILD_DIR, ec);
    if (!self.empty() && !buildDir.empty()) {
        const auto [end, rest] = std::mismatch(buildDir.begin(), buildDir.end(), self.begin(), self.end());
        (void)rest;
        if (end == buildDir.end() && fs::exists(KFORGE_NVRTC_BUILD_PATH, ec))
            return KFORGE_NVRTC_BUILD_PATH;
    }
#endif
    return path;
}

} // namespace kforge::core
