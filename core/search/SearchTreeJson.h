#pragma once
// JSON encoding of a search tree (format in docs/search.md). Decoding validates every field and the
// tree structure, and reports the first problem by its JSON path ("nodes[3].status: ...").

#include "search/SearchTree.h"
#include "util/Result.h"

#include <nlohmann/json.hpp>

#include <string>

namespace kforge::core {

/// The "format" value of a tree file and the version this build writes and reads.
inline constexpr const char* kSearchTreeFormat = "kforge-search-tree";
inline constexpr int kSearchTreeVersion = 1;

nlohmann::json toJson(const SearchTree& tree);

/// `where` prefixes error contexts (e.g. the file name). Errors: InvalidArgument for a malformed or
/// inconsistent tree, Unsupported for a newer format version.
Result<SearchTree> searchTreeFromJson(const nlohmann::json& json, const std::string& where);

} // namespace kforge::core
