#pragma once
// CRC-32 (ISO-HDLC, the ZIP checksum: polynomial 0xEDB88320, reflected, init
// and xorout ~0). Implemented here so the .cast container needs no compression
// library.

#include <cstdint>
#include <string_view>

namespace kforge::core {

/// The CRC-32 of `bytes` as stored in ZIP headers. Thread-safe (the table is
/// built once).
std::uint32_t crc32(std::string_view bytes);

} // namespace kforge::core
