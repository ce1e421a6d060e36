#pragma once
// Stable, platform-independent hashing for identifiers that are stored in projects.

#include <cstdint>
#include <string>
#include <string_view>

namespace kforge::core {

/// 64-bit FNV-1a. Stable across runs, machines and compilers (unlike std::hash).
std::uint64_t fnv1a64(std::string_view bytes);

/// fnv1a64 as 16 lowercase hex digits.
std::string fnv1a64Hex(std::string_view bytes);

} // namespace kforge::core
