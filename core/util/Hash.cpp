#include "util/Hash.h"

#include <cstdio>

namespace kforge::core {

std::uint64_t fnv1a64(std::string_view bytes)
{
    std::uint64_t hash = 14695981039346656037ull;
    for (unsigned char c : bytes) {
        hash ^= c;
        hash *= 1099511628211ull;
    }
    return hash;
}

std::string fnv1a64Hex(std::string_view bytes)
{
    char buffer[17];
    std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(fnv1a64(bytes)));
    return buffer;
}

} // namespace kforge::core
