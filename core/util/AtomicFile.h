#pragma once
// Crash-safe file writes: the bytes go to a temporary file in the same directory, are flushed to
// disk, and the temporary is renamed over the destination. A reader sees the old file or the new
// one, never a half-written one.

#include "util/Result.h"

#include <filesystem>
#include <string>
#include <string_view>

namespace kforge::core {

/// Writes `bytes` to `path` atomically (temp file + fsync + rename + fsync of the directory).
Result<void> writeFileAtomically(const std::filesystem::path& path, std::string_view bytes);

/// The temporary `writeFileAtomically` writes `path`'s bytes to before the rename:
/// "<path>.tmp-<pid>". One that outlives its writer (killed before the rename) is garbage.
std::filesystem::path atomicTemporaryPath(const std::filesystem::path& path);

/// True for a file name of that form ("tree.json.tmp-4242"): a name, ".tmp-", then digits only.
bool isAtomicTemporaryName(const std::string& fileName);

/// Reads a whole file. NotFound if it does not exist, Io if it cannot be read.
Result<std::string> readWholeFile(const std::filesystem::path& path);

/// Flushes a directory entry list to disk (after creating or renaming files in it).
Result<void> syncDirectory(const std::filesystem::path& dir);

} // namespace kforge::core
