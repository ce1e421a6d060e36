#include "protocol/Base64.h"

#include <array>
#include <cstdint>

namespace kforge::core {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<std::int8_t, 256> makeDecodeTable()
{
    std::array<std::int8_t, 256> table{};
    for (auto& v : table)
        v = -1;
    for (int i = 0; i < 64; ++i)
        table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::int8_t>(i);
    return table;
}

constexpr std::array<std::int8_t, 256> kDecode = makeDecodeTable();

Error badBase64(const std::string& what, size_t offset)
{
    return makeError(ErrorCode::InvalidArgument, what + " at offset " + std::to_string(offset), "base64");
}

} // namespace

std::string base64Encode(std::string_view bytes)
{
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        const std::uint32_t v = (std::uint32_t(static_cast<unsigned char>(bytes[i])) << 16) |
            (std::uint32_t(static_cast<unsigned char>(bytes[i + 1])) << 8) |
            std::uint32_t(static_cast<unsigned char>(bytes[i + 2]));
        out.push_back(kAlphabet[(v >> 18) & 63]);
        out.push_back(kAlphabet[(v >> 12) & 63]);
        out.push_back(kAlphabet[(v >> 6) & 63]);
        out.push_back(kAlphabet[v & 63]);
    }
    const size_t rest = bytes.size() - i;
    if (rest == 1) {
        const std::uint32_t v = std::uint32_t(static_cast<unsigned char>(bytes[i])) << 16;
        out.push_back(kAlphabet[(v >> 18) & 63]);
        out.push_back(kAlphabet[(v >> 12) & 63]);
        out.append("==");
    } else if (rest == 2) {
        const std::uint32_t v = (std::uint32_t(static_cast<unsigned char>(bytes[i])) << 16) |
            (std::uint32_t(static_cast<unsigned char>(bytes[i + 1])) << 8);
        out.push_back(kAlphabet[(v >> 18) & 63]);
        out.push_back(kAlphabet[(v >> 12) & 63]);
        out.push_back(kAlphabet[(v >> 6) & 63]);
        out.push_back('=');
    }
    return out;
}

Result<std::string> base64Decode(std::string_view text)
{
    if (text.size() % 4 != 0)
        return makeError(ErrorCode::InvalidArgument,
                         "length " + std::to_string(text.size()) + " is not a multiple of 4", "base64");
    std::string out;
    out.reserve(text.size() / 4 * 3);
    for (size_t i = 0; i < text.size(); i += 4) {
        const bool last = i + 4 == text.size();
        int padding = 0;
        std::uint32_t v = 0;
        for (size_t k = 0; k < 4; ++k) {
            const unsigned char c = static_cast<unsigned char>(text[i + k]);
            if (c == '=') {
                // '=' only in the last two positions of the last quantum, and then to the end.
                if (!last || k < 2)
                    return badBase64("misplaced '='", i + k);
                ++padding;
                v <<= 6;
                continue;
            }
            if (padding > 0)
                return badBase64("data after '='", i + k);
            const std::int8_t d = kDecode[c];
            if (d < 0)
                return badBase64("invalid character", i + k);
            v = (v << 6) | std::uint32_t(d);
        }
        // Non-zero pad bits mean the text is not the canonical encoding of any byte string.
        if ((padding == 1 && (v & 0xff) != 0) || (padding == 2 && (v & 0xffff) != 0))
            return badBase64("non-zero padding bits", i);
        out.push_back(static_cast<char>((v >> 16) & 0xff));
        if (padding < 2)
            out.push_back(static_cast<char>((v >> 8) & 0xff));
        if (padding < 1)
            out.push_back(static_cast<char>(v & 0xff));
    }
    return out;
}

} // namespace kforge::core
