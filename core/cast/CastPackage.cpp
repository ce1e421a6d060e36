#include "cast/CastPackage.h"

#include <cctype>
#include <sstream>

namespace kforge::core {

const char* kernelKindName(KernelKind kind)
{
    switch (kind) {
    case KernelKind::Custom:
        return "custom";
    case KernelKind::Fallback:
        return "fallback";
    }
    return "?";
}

std::optional<std::pair<int, int>> parseFormatVersion(const std::string& text)
{
    const auto dot = text.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == text.size() || dot > 4 || text.size() - dot - 1 > 4)
        return std::nullopt;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (i != dot && !std::isdigit(static_cast<unsigned char>(text[i])))
            return std::nullopt;
    }
    return std::pair<int, int>{std::stoi(text.substr(0, dot)), std::stoi(text.substr(dot + 1))};
}

namespace {

std::vector<long> versionParts(const std::string& text)
{
    std::vector<long> parts;
    long current = -1;
    for (char c : text) {
        if (std::isdigit(static_cast<unsigned char>(c))) {
            current = (current < 0 ? 0 : current * 10) + (c - '0');
            if (current > 1000000)
                current = 1000000;
        } else if (c == '.') {
            parts.push_back(current < 0 ? 0 : current);
            current = -1;
        } else {
            break;
        }
    }
    if (current >= 0)
        parts.push_back(current);
    return parts;
}

} // namespace

int compareVersions(const std::string& a, const std::string& b)
{
    const auto pa = versionParts(a);
    const auto pb = versionParts(b);
    for (std::size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
        const long x = i < pa.size() ? pa[i] : 0;
        const long y = i < pb.size() ? pb[i] : 0;
        if (x != y)
            return x < y ? -1 : 1;
    }
    return 0;
}

int archNumber(const std::string& arch)
{
    std::string digits;
    std::size_t i = 0;
    if (arch.rfind("sm_", 0) == 0)
        i = 3;
    else if (arch.rfind("compute_", 0) == 0)
        i = 8;
    else
        return -1;
    for (; i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i])); ++i)
        digits += arch[i];
    if (digits.empty() || digits.size() > 3)
        return -1;
    const std::string rest = arch.substr(i);
    if (!rest.empty() && rest != "a")
        return -1;
    return std::stoi(digits);
}

bool isArchName(const std::string& arch)
{
    return arch.rfind("sm_", 0) == 0 && archNumber(arch) >= 0;
}

} // namespace kforge::core
