#pragma once
// JSON encoding of a search tree (format in docs/search.md). Decoding validates every field and the
// tree structure, and reports the first problem by its JSON path ("nodes[3].status: ...").

#include "model/SearchTree.h"
#include "util/Result.h"

#include <nlohmann/json.hpp>

#include <string>

namespace kforge::core {

/// The "format" value of a tree file and the version this build writes (it reads 1 and 2; version 2
/// added rng_state, root_attempts and text blob references, docs/search.md).
inline constexpr const char* kSearchTreeFormat = "kforge-search-tree";
inline constexpr int kSearchTreeVersion = 2;

nlohmann::json toJson(const SearchTree& tree);

/// The text of a tree's JSON (toJson, or anything built on it). Never throws on invalid UTF-8 in a
/// string (a compiler log quoting a source's bytes): such bytes are written as U+FFFD.
std::string dumpSearchTreeJson(const nlohmann::json& value, int indent);

/// `where` prefixes error contexts (e.g. the file name). Errors: InvalidArgument for a malformed or
/// inconsistent tree (including an rng_draws over SearchRng::kMaxReplayDraws without an
/// rng_state), Unsupported for a newer format version. Never throws.
Result<SearchTree> searchTreeFromJson(const nlohmann::json& json, const std::string& where);

} // namespace kforge::core
