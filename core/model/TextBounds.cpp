#include "model/TextBounds.h"

namespace kforge::core {

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
