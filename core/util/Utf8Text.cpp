#include "util/Utf8Text.h"

#include <cstdint>

namespace kforge::core {
namespace {

/// Length of the well-formed UTF-8 sequence at text[at], or 0 when the bytes there are not one;
/// `codePoint` receives its value.
std::size_t sequenceAt(std::string_view text, std::size_t at, std::uint32_t& codePoint)
{
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(at);
    if (lead < 0x80) {
        codePoint = lead;
        return 1;
    }
    std::size_t length = 0;
    std::uint32_t min = 0;
    if ((lead & 0xE0) == 0xC0) {
        length = 2;
        codePoint = lead & 0x1F;
        min = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
        length = 3;
        codePoint = lead & 0x0F;
        min = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
        length = 4;
        codePoint = lead & 0x07;
        min = 0x10000;
    } else {
        return 0;
    }
    if (at + length > text.size())
        return 0;
    for (std::size_t i = 1; i < length; ++i) {
        if ((byte(at + i) & 0xC0) != 0x80)
            return 0;
        codePoint = (codePoint << 6) | (byte(at + i) & 0x3F);
    }
    if (codePoint < min || codePoint > 0x10FFFF || (codePoint >= 0xD800 && codePoint <= 0xDFFF))
        return 0;
    return length;
}

bool isControl(std::uint32_t codePoint)
{
    return codePoint < 0x20 || (codePoint >= 0x7F && codePoint <= 0x9F);
}

} // namespace

std::optional<std::size_t> firstInvalidUtf8(std::string_view text)
{
    std::uint32_t codePoint = 0;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t length = sequenceAt(text, at, codePoint);
        if (length == 0)
            return at;
        at += length;
    }
    return std::nullopt;
}

bool isValidUtf8(std::string_view text)
{
    return !firstInvalidUtf8(text).has_value();
}

bool hasControlCharacter(std::string_view text)
{
    std::uint32_t codePoint = 0;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t length = sequenceAt(text, at, codePoint);
        if (length == 0) {
            ++at;
            continue;
        }
        if (isControl(codePoint))
            return true;
        at += length;
    }
    return false;
}

std::string escapeForTerminal(std::string_view text)
{
    static const char* hex = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    std::uint32_t codePoint = 0;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t length = sequenceAt(text, at, codePoint);
        if (length != 0 && !isControl(codePoint)) {
            if (codePoint == '\\')
                out += '\\';
            out.append(text.substr(at, length));
            at += length;
            continue;
        }
        // A control character or a byte that does not start a well-formed sequence: escape the
        // bytes of the control character, or this one byte, and resynchronize after it.
        if (length == 0)
            length = 1;
        for (std::size_t i = 0; i < length; ++i) {
            const auto u = static_cast<unsigned char>(text[at + i]);
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        }
        at += length;
    }
    return out;
}

std::string excerptForMessage(std::string_view text, std::size_t maxBytes)
{
    std::string out = escapeForTerminal(text.substr(0, maxBytes));
    if (text.size() > maxBytes)
        out += "...";
    return out;
}

std::string_view utf8Prefix(std::string_view text, std::size_t maxBytes)
{
    if (text.size() <= maxBytes)
        return text;
    std::size_t end = maxBytes;
    // Back up over continuation bytes to the start of the sequence the cut falls in, and drop that
    // sequence (at most 3 steps for valid text; arbitrary bytes stop there too).
    std::size_t steps = 0;
    while (end > 0 && steps < 3 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
        --end;
        ++steps;
    }
    return text.substr(0, end);
}

std::string boundedText(std::string_view text, std::size_t maxBytes)
{
    if (text.size() <= maxBytes)
        return std::string(text);
    const std::string_view kept = utf8Prefix(text, maxBytes);
    std::string out(kept);
    out += "\n[kforge: truncated: " + std::to_string(text.size()) + " bytes in all, the first " +
        std::to_string(kept.size()) + " kept]\n";
    return out;
}

} // namespace kforge::core
