#pragma once
// Content-addressed storage of large texts next to a search tree (docs/search.md, "Text blobs"):
// each text is one file DIR/<sha256>.txt named by the SHA-256 of its stored bytes, written
// atomically once and shared by every node (and every tree in DIR's parent) that stores the same
// text. The tree file keeps only a reference, so it stays small whatever an LLM sends. A stored
// copy holds at most kMaxStoredTextBytes of the text, then a truncation note (boundedText).
// Files are never deleted or rewritten: a name always stands for the same bytes.
// Thread: reentrant; concurrent puts of the same text write the same bytes (atomic rename).

#include "util/Result.h"

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace kforge::core {

/// Where a text went: the stored copy's digest, the text's own length and whether the stored copy
/// was cut (then it holds the first bytes and a note).
struct TextBlobRef {
    std::string sha256; // 64 lowercase hex digits
    std::size_t bytes = 0;
    bool truncated = false;
};

class TextBlobStore {
public:
    explicit TextBlobStore(std::filesystem::path directory) : m_directory(std::move(directory)) {}

    const std::filesystem::path& directory() const { return m_directory; }
    /// DIR/<sha256>.txt
    std::filesystem::path fileOf(const std::string& sha256) const;
    /// 64 lowercase hex digits.
    static bool isDigest(const std::string& text);

    /// Stores boundedText(text, kMaxStoredTextBytes) unless a blob of that digest exists already
    /// (creating DIR if needed). Io on failure.
    Result<TextBlobRef> put(std::string_view text) const;
    /// The stored bytes of `sha256`. InvalidArgument for a malformed digest or a file whose bytes do
    /// not match its name (or that is larger than a stored copy can be); NotFound if absent.
    Result<std::string> get(const std::string& sha256) const;

private:
    std::filesystem::path m_directory;
};

} // namespace kforge::core
