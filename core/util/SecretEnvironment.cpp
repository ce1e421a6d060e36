#include "util/SecretEnvironment.h"

#include <array>
#include <cctype>
#include <string>

namespace kforge::core {

bool isSecretEnvironmentName(std::string_view name)
{
    static constexpr std::array<std::string_view, 7> kSecretParts = {"KEY",      "KEYS",   "TOKEN",      "SECRET",
                                                                     "PASSWORD", "PASSWD", "CREDENTIALS"};
    std::size_t start = 0;
    while (start <= name.size()) {
        std::size_t end = name.find('_', start);
        if (end == std::string_view::npos)
            end = name.size();
        std::string part;
        for (char c : name.substr(start, end - start))
            part.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
        for (std::string_view secret : kSecretParts) {
            if (part == secret)
                return true;
        }
        if (part.size() >= 6 && part.ends_with("APIKEY"))
            return true;
        start = end + 1;
    }
    return false;
}

} // namespace kforge::core
