#include "util/CacheDirectory.h"

#include <cstdlib>

namespace kforge::core {

std::filesystem::path userCacheDirectory()
{
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return std::filesystem::path(xdg) / "kforge";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::filesystem::path(home) / ".cache" / "kforge";
    return "/tmp/kforge-cache";
}

} // namespace kforge::core
