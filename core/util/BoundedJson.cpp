#include "util/BoundedJson.h"

#include "util/Utf8Text.h"

#include <utility>
#include <vector>

namespace kforge::core {
namespace {

using nlohmann::json;

// A SAX consumer that only counts values and tracks the nesting depth, and stops at the first
// level or value too many, or at the first syntax error (remembering its byte and text). It stores
// no value.
class LimitScan {
public:
    LimitScan(int maxDepth, std::size_t maxValues) : m_maxDepth(maxDepth), m_maxValues(maxValues) {}

    bool null() { return count(); }
    bool boolean(bool) { return count(); }
    bool number_integer(json::number_integer_t) { return count(); }
    bool number_unsigned(json::number_unsigned_t) { return count(); }
    bool number_float(json::number_float_t, const json::string_t&) { return count(); }
    bool string(json::string_t&) { return count(); }
    bool binary(json::binary_t&) { return count(); }
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
    bool tooMany() const { return m_tooMany; }
    const std::string& error() const { return m_error; }
    std::size_t errorAt() const { return m_errorAt; }

private:
    bool count()
    {
        if (++m_values > m_maxValues) {
            m_tooMany = true;
            return false;
        }
        return true;
    }
    bool enter()
    {
        if (++m_depth > m_maxDepth) {
            m_tooDeep = true;
            return false;
        }
        return count();
    }
    bool leave()
    {
        --m_depth;
        return true;
    }

    int m_maxDepth;
    std::size_t m_maxValues;
    int m_depth = 0;
    std::size_t m_values = 0;
    bool m_tooDeep = false;
    bool m_tooMany = false;
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
    return excerptForMessage(std::string_view(what).substr(from), 200);
}

} // namespace

Result<json> parseBoundedJson(std::string_view text, const JsonLimits& limits)
{
    if (text.size() > limits.maxBytes)
        return makeError(ErrorCode::InvalidArgument,
                         std::to_string(text.size()) + " bytes, over the limit of " + std::to_string(limits.maxBytes) +
                             " bytes");
    LimitScan scan(limits.maxDepth, limits.maxValues);
    const bool ok = json::sax_parse(text.begin(), text.end(), &scan);
    if (scan.tooDeep())
        return makeError(ErrorCode::InvalidArgument,
                         "nested deeper than " + std::to_string(limits.maxDepth) + " levels");
    if (scan.tooMany())
        return makeError(ErrorCode::InvalidArgument, "more than " + std::to_string(limits.maxValues) + " values");
    if (!ok)
        return makeError(ErrorCode::InvalidArgument,
                         "malformed JSON at byte " + std::to_string(scan.errorAt()) + ": " +
                             parserDetail(scan.error()));
    try {
        return json::parse(text.begin(), text.end());
    } catch (const json::exception& e) {
        // Not reached: the scan above accepted the same text with the same parser.
        return makeError(ErrorCode::InvalidArgument, "malformed JSON: " + parserDetail(e.what()));
    }
}

std::string jsonExceptionText(const json::exception& e)
{
    std::string_view text = e.what();
    // "[json.exception.type_error.302] type must be string, but is number" -> "type must be ..."
    if (text.starts_with("[json.exception.")) {
        if (const std::size_t end = text.find("] "); end != std::string_view::npos)
            text.remove_prefix(end + 2);
    }
    return excerptForMessage(text, 200);
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
