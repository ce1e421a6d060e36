#pragma once
// Where Kernel Forge keeps per-user caches (compiled kernels, measured device bandwidth):
// $XDG_CACHE_HOME/kforge, else ~/.cache/kforge, else /tmp/kforge-cache.

#include <filesystem>

namespace kforge::core {

std::filesystem::path userCacheDirectory();

} // namespace kforge::core
