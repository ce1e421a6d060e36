#include "search/TextBounds.h"

namespace kforge::core {

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
