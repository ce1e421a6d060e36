#pragma once
// Size limits on the text a search keeps, and the helper that enforces them on JSON details
// (docs/search.md, "Bounded storage"; the UTF-8 cuts live in util/Utf8Text.h). Anything an LLM or
// a compiler writes is untrusted: a tree file must stay small whatever a reply holds, and saving
// it must never fail on its bytes.
// Thread: pure functions; reentrant.

#include "util/FailureText.h"
#include "util/Utf8Text.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kforge::core {

/// The largest stored copy of one LLM prompt or response (a text blob, docs/search.md); the rest
/// is replaced by a truncation note.
inline constexpr std::size_t kMaxStoredTextBytes = 1024 * 1024;
/// The largest string kept inside a node's details (evaluation details such as the compiler log,
/// provenance details other than the texts stored as blobs), with a truncation note.
inline constexpr std::size_t kMaxDetailStringBytes = 64 * 1024;
/// The largest failure reason and LLM model name kept on a node.
inline constexpr std::size_t kMaxReasonBytes = kMaxReasonLineBytes;

/// Replaces every string inside `value` (object members and array elements, at any depth) by
/// boundedText(string, maxBytes).
void boundStrings(nlohmann::json& value, std::size_t maxBytes);

} // namespace kforge::core
