#pragma once
// The ZIP container of .cast packages, written and read entirely in memory. The
// writer stores entries (method 0, no compression, CRC-32 set); the reader is
// strict: it accepts exactly the layout the writer produces (no archive
// comment, no zip64, no data descriptors, no encryption, local entries back to
// back from offset 0 up to the central directory) and checks every entry name
// and size before copying a byte, then requires every header byte to be the
// canonical one the writer would produce. Everything it does not understand is
// refused, not skipped.

#include "cast/CastPackage.h"
#include "util/Result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::core {

struct ZipEntry {
    std::string name;
    std::string data;

    bool operator==(const ZipEntry&) const = default;
};

/// Where one entry's bytes lie in an archive held by the caller.
struct ZipEntryRef {
    std::string name;
    std::uint64_t offset = 0; // of the data, from the start of the archive
    std::uint64_t size = 0;
};

/// Builds a stored ZIP archive with the entries in this order. Does not
/// validate names: callers that take names from outside check them with
/// checkEntryName() first (tests use this to craft bad archives). Entries and
/// the total must stay below 4 GiB (no zip64).
std::string buildStoredZip(const std::vector<ZipEntry>& entries);

/// Empty when `name` is a safe relative entry path, else why not ("absolute
/// path", "not UTF-8", ...).
std::string checkEntryName(const std::string& name);

/// Parses `archive`, checking structure, names, duplicates, sizes against
/// `limits` and every CRC-32, and returns where each entry lies without
/// copying any data. Every size, count and offset is checked from the central
/// directory before the bytes it describes are read; the reader never
/// allocates in proportion to a declared size. Errors name the entry (escaped:
/// never raw bytes of the file); their context is empty (the caller adds the
/// file).
Result<std::vector<ZipEntryRef>> scanZip(std::string_view archive, const CastLimits& limits);

/// scanZip() plus a copy of every entry's bytes.
Result<std::vector<ZipEntry>> readZip(const std::string& archive, const CastLimits& limits);

/// `name` in single quotes, with control characters and bytes that are not
/// UTF-8 written as \xNN: fit for an error line.
std::string quotedEntryName(std::string_view name);

} // namespace kforge::core
