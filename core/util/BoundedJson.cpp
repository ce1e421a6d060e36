#include "util/BoundedJson.h"

#include "util/Utf8Text.h"

#include <utility>
#include <vector>

namespace kforge::core {
namespace {

using nlohmann::json;

// A SAX consumer that only tracks the nesting depth and stops at the first level too many, or at
// the first syntax error (remembering its byte and text). It stores no value.
class DepthScan {
public:
    explicit DepthScan(int maxDepth) : m_maxDepth(maxDepth) {}

    bool null() { return true; }
    bool boolean(bool) { return true; }
    bool number_integer(json::number_integer_t) { return true; }
    bool number_unsigned(json::number_unsigned_t) { return true; }
    bool number_float(json::number_float_t, const json::string_t&) { return true; }
    bool string(json::string_t&) { return true; }
    bool binary(json::binary_t&) { return true; }
    bool key(json::string_t&) { return true; }
    bool start_object(std::size_t) { return enter(); }
    bool end_object() { return leave(); }
    bool start_array(std::size_t) { return enter(); }
    bool end_array() { return leave(); }

    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e)
    {
        m_errorAt = position;
        m_error = e.what();
        return false;
    }

    bool tooDeep() const { return m_tooDeep; }
    const std::string& error() const { return m_error; }
    std::size_t errorAt() const { return m_errorAt; }

private:
    bool enter()
    {
        if (++m_depth > m_maxDepth) {
            m_tooDeep = true;
            return false;
        }
        return true;
    }
    bool leave()
    {
        --m_depth;
        return true;
    }

    int m_maxDepth;
    int m_depth = 0;
    bool m_tooDeep = false;
    std::string m_error;
    std::size_t m_errorAt = 0;
};

// nlohmann's messages read "[json.exception.parse_error.101] parse error at line 1, column 5:
// syntax error while parsing value - ..."; keep what follows the position (or the id).
std::string parserDetail(const std::string& what)
{
    std::size_t from = 0;
    if (const auto column = what.find(", column "); column != std::string::npos) {
        if (const auto colon = what.find(": ", column); colon != std::string::npos)
            from = colon + 2;
    } else if (what.rfind("[json.exception.", 0) == 0) {
        if (const auto bracket = what.find("] "); bracket != std::string::npos)
            from = bracket + 2;
    }
    return escapeForTerminal(std::string_view(what).substr(from));
}

} // namespace

Result<json> parseBoundedJson(std::string_view text, const JsonLimits& limits)
{
    if (text.size() > limits.maxBytes)
        return makeError(ErrorCode::InvalidArgument, std::to_string(text.size()) + " bytes, over the limit of " +
                                                         std::to_string(limits.maxBytes) + " bytes");
    DepthScan scan(limits.maxDepth);
    const bool ok = json::sax_parse(text.begin(), text.end(), &scan);
    if (scan.tooDeep())
        return makeError(ErrorCode::InvalidArgument,
                         "nested deeper than " + std::to_string(limits.maxDepth) + " levels");
    if (!ok)
        return makeError(ErrorCode::InvalidArgument, "malformed JSON at byte " + std::to_string(scan.errorAt()) +
                                                         ": " + parserDetail(scan.error()));
    try {
        return json::parse(text.begin(), text.end());
    } catch (const json::exception& e) {
        // Not reached: the scan above accepted the same text with the same parser.
        return makeError(ErrorCode::InvalidArgument, "malformed JSON: " + parserDetail(e.what()));
    }
}

int jsonDepth(const json& value, int cap)
{
    int deepest = 0;
    std::vector<std::pair<const json*, int>> pending{{&value, 0}};
    while (!pending.empty()) {
        const auto [node, depth] = pending.back();
        pending.pop_back();
        if (!node->is_structured())
            continue;
        const int here = depth + 1;
        if (here > deepest)
            deepest = here;
        if (deepest > cap)
            return deepest;
        for (const json& child : *node)
            pending.emplace_back(&child, here);
    }
    return deepest;
}

} // namespace kforge::core
