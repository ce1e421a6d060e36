#pragma once
// SHA-256 (FIPS 180-4), implemented here so the compile cache needs no new dependency.
// The compile cache keys cubins by this digest: with a 64-bit hash an accidental collision would
// silently hand back another kernel's machine code, which a 256-bit digest rules out in practice.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace kforge::core {

/// Incremental SHA-256. Not thread-safe; one object per digest. Feed bytes with update(), then call
/// finish() once; the object cannot be reused after finish().
class Sha256 {
public:
    Sha256();

    void update(std::string_view bytes);
    void update(const void* data, std::size_t size);

    /// The 32-byte digest.
    std::array<std::uint8_t, 32> finish();
    /// The digest as 64 lowercase hex digits.
    std::string finishHex();

    /// One-shot helper: the hex digest of `bytes`.
    static std::string hex(std::string_view bytes);

private:
    void processBlock(const std::uint8_t* block);

    std::array<std::uint32_t, 8> m_state;
    std::array<std::uint8_t, 64> m_buffer{};
    std::size_t m_bufferSize = 0;
    std::uint64_t m_totalBytes = 0;
};

} // namespace kforge::core
