#include "search/TextBounds.h"

namespace kforge::core {

std::optional<std::size_t> firstInvalidUtf8(std::string_view text)
{
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    std::size_t i = 0;
    while (i < text.size()) {
        const unsigned char lead = byte(i);
        if (lead < 0x80) {
            ++i;
            continue;
        }
        std::size_t length = 0;
        unsigned char low = 0x80, high = 0xBF; // allowed range of the second byte
        if (lead >= 0xC2 && lead <= 0xDF) {
            length = 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            length = 3;
            if (lead == 0xE0)
                low = 0xA0; // no overlong forms
            else if (lead == 0xED)
                high = 0x9F; // no surrogates
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            length = 4;
            if (lead == 0xF0)
                low = 0x90;
            else if (lead == 0xF4)
                high = 0x8F; // nothing above U+10FFFF
        } else {
            return i;
        }
        if (i + length > text.size() || byte(i + 1) < low || byte(i + 1) > high)
            return i;
        for (std::size_t k = 2; k < length; ++k)
            if ((byte(i + k) & 0xC0) != 0x80)
                return i;
        i += length;
    }
    return std::nullopt;
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

void boundStrings(nlohmann::json& value, std::size_t maxBytes)
{
    if (value.is_string()) {
        const std::string& text = value.get_ref<const std::string&>();
        if (text.size() > maxBytes)
            value = boundedText(text, maxBytes);
    } else if (value.is_object() || value.is_array()) {
        for (auto& child : value)
            boundStrings(child, maxBytes);
    }
}

} // namespace kforge::core
