#pragma once
// Parsing JSON from untrusted files (packages, project files) within fixed bounds. A JSON value
// costs up to about 40 bytes of memory per byte of text once parsed into nlohmann::json, and
// copying, comparing or dumping a parsed value recurses once per nesting level: caps on the size and
// on the number of values bound the first, a depth cap the second. They are checked by a streaming
// pre-scan that allocates nothing per value, before the document is built.

#include "util/Result.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace kforge::core {

struct JsonLimits {
    std::size_t maxBytes = 64u << 20; // text size
    int maxDepth = 64;                // arrays and objects nested in one another
    std::size_t maxValues = 4000000;  // values of any kind (an object's keys not counted)
};

/// Parses `text` as one JSON document, or says why not in one line with no context (the caller
/// names the file): "malformed JSON at byte N: <detail>", "N bytes, over the limit of M bytes",
/// "nested deeper than 64 levels", "more than N values". Never throws (std::bad_alloc aside).
Result<nlohmann::json> parseBoundedJson(std::string_view text, const JsonLimits& limits);

/// An nlohmann exception's message for a one-line error: without its "[json.exception.<kind>.<id>] "
/// prefix, control characters escaped, cut at 200 bytes.
std::string jsonExceptionText(const nlohmann::json::exception& e);

/// The deepest nesting of arrays and objects in `value` (0 for a scalar), computed without
/// recursion; stops counting at `cap + 1`. For values built in memory rather than parsed.
int jsonDepth(const nlohmann::json& value, int cap);

} // namespace kforge::core
