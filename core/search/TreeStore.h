#pragma once
// Crash-safe persistence of one search tree in one JSON file (format in docs/search.md), usually
// PROJECT/search/<card id>/tree.json. Every save replaces the file atomically (temp + fsync +
// rename), so a reader, or a resumed run after a kill, sees the previous or the new tree.
// Thread: reentrant; callers serialize saves of the same file (SearchRun saves from its thread).

#include "search/SearchTree.h"
#include "util/Result.h"

#include <cstdint>
#include <filesystem>
#include <string>

namespace kforge::core {

class TreeStore {
public:
    explicit TreeStore(std::filesystem::path file) : m_file(std::move(file)) {}

    /// PROJECT/search/<cardId>/tree.json.
    static std::filesystem::path defaultPath(const std::filesystem::path& projectDir, const std::string& cardId);

    const std::filesystem::path& file() const { return m_file; }
    bool exists() const;

    /// Creates the parent directory if needed and writes the tree atomically. Io on failure.
    Result<void> save(const SearchTree& tree) const;
    /// Reads the tree back. NotFound if the file is missing; InvalidArgument for a damaged,
    /// truncated or inconsistent file; Unsupported for a newer format. Every error's context names
    /// the file (and the JSON path of the bad field).
    Result<SearchTree> load() const;

    /// The tree a search run starts from. With `resume`: the saved tree if the file exists (its
    /// card id must be `cardId`; its own seed and RNG state win over `seed`), else a new empty
    /// tree. Without `resume`: a new empty tree, or AlreadyExists if the file exists (a saved
    /// search is never overwritten silently).
    Result<SearchTree> openForRun(const std::string& cardId, std::uint64_t seed, bool resume) const;

private:
    std::filesystem::path m_file;
};

} // namespace kforge::core
