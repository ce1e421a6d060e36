#pragma once
// Crash-safe persistence of one search tree in one JSON file (format in docs/search.md), usually
// PROJECT/search/<card id>/tree.json. Every save replaces the file atomically (temp + fsync +
// rename), so a reader, or a resumed run after a kill, sees the previous or the new tree.
// The large texts of its nodes (LLM prompts and replies) live next to it in a content-addressed
// TextBlobStore, DIR/blobs/<sha256>.txt, shared by the trees of that directory.
// Thread: reentrant; callers serialize saves of the same file (SearchRun saves from its thread).

#include "model/SearchTree.h"
#include "search/TextBlobStore.h"
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
    /// The blob store of this tree's texts: <directory of the file>/blobs.
    TextBlobStore blobs() const;

    /// Creates the parent directory if needed and writes the tree atomically. Io on failure.
    /// Never throws (strings that are not UTF-8 are written with U+FFFD, dumpSearchTreeJson).
    Result<void> save(const SearchTree& tree) const;
    /// Reads the tree back. NotFound if the file is missing; InvalidArgument for a damaged,
    /// truncated or inconsistent file (also a number out of range, or an rng_draws count that
    /// cannot be replayed); Unsupported for a newer format. Every error's context names the file
    /// (and the JSON path of the bad field). Never throws.
    Result<SearchTree> load() const;

    /// The tree a search run starts from. With `resume`: the saved tree if the file exists (its
    /// card id must be `cardId`; its own seed and RNG state win over `seed`), else a new empty
    /// tree; a saved tree that is only a failed root is retried (SearchTree::retryRoot: the
    /// failed root goes to rootAttempts and the tree starts again). Without `resume`: a new empty
    /// tree, or AlreadyExists if the file exists (a saved search is never overwritten silently).
    Result<SearchTree> openForRun(const std::string& cardId, std::uint64_t seed, bool resume) const;

    /// Renames the file to tree-<UTC time>.json in the same directory (tree-<time>-2.json, ... if
    /// that name is taken) so that a new search can start; the blobs stay, shared. Returns the new
    /// path; NotFound if there is no file; Io if the rename fails.
    Result<std::filesystem::path> moveAside() const;

private:
    std::filesystem::path m_file;
};

} // namespace kforge::core
