#include "cast/ZipArchive.h"

#include "cast/Crc32.h"

#include "util/Utf8Text.h"

#include <algorithm>
#include <set>

namespace kforge::core {
namespace {

constexpr std::uint32_t kLocalSig = 0x04034b50;
constexpr std::uint32_t kCentralSig = 0x02014b50;
constexpr std::uint32_t kEndSig = 0x06054b50;
constexpr std::size_t kLocalSize = 30;
constexpr std::size_t kCentralSize = 46;
constexpr std::size_t kEndSize = 22;
// A fixed timestamp (1980-01-01 00:00): the creation time lives in HEADER.json,
// and fixed ZIP times make the same package contents give the same bytes.
constexpr std::uint16_t kDosTime = 0;
constexpr std::uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;

void put16(std::string& out, std::uint16_t v)
{
    out.push_back(static_cast<char>(v & 0xFF));
    out.push_back(static_cast<char>(v >> 8));
}

void put32(std::string& out, std::uint32_t v)
{
    for (int i = 0; i < 4; ++i)
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

std::uint16_t get16(std::string_view s, std::uint64_t at)
{
    return static_cast<std::uint16_t>(static_cast<unsigned char>(s[at]) | (static_cast<unsigned char>(s[at + 1]) << 8));
}

std::uint32_t get32(std::string_view s, std::uint64_t at)
{
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i)
        v = (v << 8) | static_cast<unsigned char>(s[at + i]);
    return v;
}

Error zipError(std::string message)
{
    return makeError(ErrorCode::InvalidArgument, std::move(message));
}

// The canonical headers of one entry, as the writer produces them.
void putLocalHeader(std::string& out, std::string_view name, std::uint32_t crc, std::uint32_t size)
{
    put32(out, kLocalSig);
    put16(out, 20);     // version needed
    put16(out, 0x0800); // flags: UTF-8 names
    put16(out, 0);      // stored
    put16(out, kDosTime);
    put16(out, kDosDate);
    put32(out, crc);
    put32(out, size);
    put32(out, size);
    put16(out, static_cast<std::uint16_t>(name.size()));
    put16(out, 0); // extra length
    out += name;
}

void putCentralHeader(std::string& out, std::string_view name, std::uint32_t crc, std::uint32_t size,
                      std::uint32_t offset)
{
    put32(out, kCentralSig);
    put16(out, (3 << 8) | 20); // made by: Unix, 2.0
    put16(out, 20);
    put16(out, 0x0800);
    put16(out, 0);
    put16(out, kDosTime);
    put16(out, kDosDate);
    put32(out, crc);
    put32(out, size);
    put32(out, size);
    put16(out, static_cast<std::uint16_t>(name.size()));
    put16(out, 0);              // extra
    put16(out, 0);              // comment
    put16(out, 0);              // disk
    put16(out, 0);              // internal attributes
    put32(out, 0100644u << 16); // regular file, rw-r--r--
    put32(out, offset);
    out += name;
}

void putEndRecord(std::string& out, std::size_t count, std::uint32_t centralSize, std::uint32_t centralOffset)
{
    put32(out, kEndSig);
    put16(out, 0);
    put16(out, 0);
    put16(out, static_cast<std::uint16_t>(count));
    put16(out, static_cast<std::uint16_t>(count));
    put32(out, centralSize);
    put32(out, centralOffset);
    put16(out, 0); // comment length
}

} // namespace

std::string quotedEntryName(std::string_view name)
{
    return "'" + escapeForTerminal(name) + "'";
}

std::string buildStoredZip(const std::vector<ZipEntry>& entries)
{
    std::string out;
    std::string central;
    for (const ZipEntry& entry : entries) {
        const auto offset = static_cast<std::uint32_t>(out.size());
        const std::uint32_t crc = crc32(entry.data);
        const auto size = static_cast<std::uint32_t>(entry.data.size());
        putLocalHeader(out, entry.name, crc, size);
        out += entry.data;
        putCentralHeader(central, entry.name, crc, size, offset);
    }
    const auto centralOffset = static_cast<std::uint32_t>(out.size());
    out += central;
    putEndRecord(out, entries.size(), static_cast<std::uint32_t>(central.size()), centralOffset);
    return out;
}

std::string checkEntryName(const std::string& name)
{
    if (name.empty())
        return "empty entry name";
    if (name.size() > 1024)
        return "entry name longer than 1024 bytes";
    if (name.front() == '/')
        return "absolute path";
    if (name.find('\\') != std::string::npos)
        return "backslash in entry name";
    if (name.size() >= 2 && name[1] == ':')
        return "drive letter in entry name";
    // Names are declared UTF-8 (flag 0x0800); anything else would reach the
    // terminal as raw bytes.
    if (!isValidUtf8(name))
        return "entry name is not UTF-8";
    if (hasControlCharacter(name))
        return "control character in entry name";
    if (name.back() == '/')
        return "directory entry (packages hold files only)";
    std::size_t start = 0;
    while (start <= name.size()) {
        const auto end = name.find('/', start);
        const std::string part = name.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (part == "..")
            return "'..' path component";
        if (part == ".")
            return "'.' path component";
        if (part.empty())
            return "empty path component";
        if (end == std::string::npos)
            break;
        start = end + 1;
    }
    return {};
}

Result<std::vector<ZipEntryRef>> scanZip(std::string_view archive, const CastLimits& limits)
{
    // The writer never adds an archive comment, so the end record is exactly the
    // last 22 bytes.
    if (archive.size() < kEndSize || get32(archive, archive.size() - kEndSize) != kEndSig)
        return zipError("truncated or not a .cast archive (no ZIP end record at "
                        "the end of the file)");
    const std::uint64_t endAt = archive.size() - kEndSize;
    if (get16(archive, endAt + 4) != 0 || get16(archive, endAt + 6) != 0 || get16(archive, endAt + 20) != 0)
        return zipError("unsupported ZIP layout (multi-disk archive or archive comment)");
    const std::uint16_t count = get16(archive, endAt + 8);
    if (get16(archive, endAt + 10) != count)
        return zipError("inconsistent ZIP end record (entry counts differ)");
    if (count == 0xFFFF || count > limits.maxEntries)
        return zipError("the archive has " + std::to_string(count) + " entries, over the limit of " +
                        std::to_string(std::min<std::uint64_t>(limits.maxEntries, 0xFFFE)));
    const std::uint32_t centralSize = get32(archive, endAt + 12);
    const std::uint32_t centralOffset = get32(archive, endAt + 16);
    if (static_cast<std::uint64_t>(centralOffset) + centralSize != endAt)
        return zipError("truncated or damaged archive (central directory does not "
                        "end at the end record)");
    if (static_cast<std::uint64_t>(count) * kCentralSize > centralSize)
        return zipError("damaged central directory (too small for " + std::to_string(count) + " entries)");

    std::vector<ZipEntryRef> entries;
    struct Headers {
        std::uint32_t crc;
        std::uint32_t localOffset;
    };
    std::vector<Headers> headers; // per entry, for the canonical comparison
    std::set<std::string, std::less<>> names;
    std::uint64_t total = 0;
    std::uint64_t at = centralOffset;
    std::uint64_t expectedLocal = 0;
    for (std::uint16_t i = 0; i < count; ++i) {
        if (at + kCentralSize > endAt || get32(archive, at) != kCentralSig)
            return zipError("damaged central directory (entry " + std::to_string(i) + ")");
        const std::uint16_t flags = get16(archive, at + 8);
        const std::uint16_t method = get16(archive, at + 10);
        const std::uint32_t crc = get32(archive, at + 16);
        const std::uint32_t compressed = get32(archive, at + 20);
        const std::uint32_t size = get32(archive, at + 24);
        const std::uint16_t nameLength = get16(archive, at + 28);
        const std::uint16_t extraLength = get16(archive, at + 30);
        const std::uint16_t commentLength = get16(archive, at + 32);
        const std::uint32_t localOffset = get32(archive, at + 42);
        if (at + kCentralSize + nameLength + extraLength + commentLength > endAt)
            return zipError("damaged central directory (entry " + std::to_string(i) + " runs past its end)");
        const std::string_view name = archive.substr(at + kCentralSize, nameLength);
        at += kCentralSize + nameLength + extraLength + commentLength;

        const std::string entry = "entry " + quotedEntryName(name);
        if (const std::string why = checkEntryName(std::string(name)); !why.empty())
            return zipError(entry + ": " + why);
        if (names.count(name))
            return zipError(entry + ": duplicate entry");
        names.emplace(name);
        // Sizes come from the central directory and are checked before a byte of
        // the entry is read; a stored entry's data must then be exactly that many
        // bytes of the file, so a declared size cannot make the reader read or
        // allocate more than the file holds.
        if (size > limits.maxEntryBytes || compressed > limits.maxEntryBytes)
            return zipError(entry + ": declared size " + std::to_string(std::max(size, compressed)) +
                            " bytes exceeds the per-entry limit of " + std::to_string(limits.maxEntryBytes) + " bytes");
        total += size;
        if (total > limits.maxTotalBytes)
            return zipError(entry + ": entries total more than the limit of " + std::to_string(limits.maxTotalBytes) +
                            " bytes");
        if (flags & 0x0001)
            return zipError(entry + ": encrypted entries are not supported");
        if (flags & 0x0008)
            return zipError(entry + ": data descriptors are not supported");
        if (method != 0)
            return zipError(entry + ": compression method " + std::to_string(method) +
                            " is not supported (format 1.x stores entries)");
        if (compressed != size)
            return zipError(entry + ": stored entry with different compressed and uncompressed sizes");

        // The local header must sit right after the previous entry and agree with
        // the central one.
        if (localOffset != expectedLocal)
            return zipError(entry +
                            ": local header at an unexpected offset (gap, "
                            "overlap or reordered entries)");
        if (static_cast<std::uint64_t>(localOffset) + kLocalSize > centralOffset ||
            get32(archive, localOffset) != kLocalSig)
            return zipError(entry + ": damaged local header");
        const std::uint16_t localNameLength = get16(archive, localOffset + 26);
        const std::uint16_t localExtraLength = get16(archive, localOffset + 28);
        const std::uint64_t dataAt =
            static_cast<std::uint64_t>(localOffset) + kLocalSize + localNameLength + localExtraLength;
        if (dataAt + size > centralOffset)
            return zipError(entry + ": truncated (data runs past the central directory)");
        if (get16(archive, localOffset + 6) != flags || get16(archive, localOffset + 8) != method ||
            get32(archive, localOffset + 14) != crc || get32(archive, localOffset + 18) != compressed ||
            get32(archive, localOffset + 22) != size || localNameLength != nameLength ||
            archive.substr(localOffset + kLocalSize, localNameLength) != name)
            return zipError(entry + ": local header disagrees with the central directory");
        if (crc32(archive.substr(dataAt, size)) != crc)
            return zipError(entry + ": CRC-32 mismatch (the entry's bytes were changed)");
        expectedLocal = dataAt + size;
        entries.push_back({std::string(name), dataAt, size});
        headers.push_back({crc, localOffset});
    }
    if (at != endAt)
        return zipError("damaged central directory (trailing bytes)");
    if (expectedLocal != centralOffset)
        return zipError("unexpected bytes between the last entry and the central directory");
    // The layout is canonical (fixed times, attributes, versions and flags):
    // anything the checks above do not interpret must still be exactly what the
    // writer produces, so that no byte of a package can change unnoticed. Only
    // the headers are compared (the data is the file's own bytes): the headers
    // in file order, local ones first, then the central directory and the end
    // record.
    const auto differsAt = [&](std::uint64_t from, const std::string& canonical) -> std::uint64_t {
        for (std::size_t i = 0; i < canonical.size(); ++i) {
            if (archive[from + i] != canonical[i])
                return from + i;
        }
        return archive.size();
    };
    std::uint64_t firstDifference = archive.size();
    std::string header;
    for (std::size_t i = 0; firstDifference == archive.size() && i < entries.size(); ++i) {
        header.clear();
        putLocalHeader(header, entries[i].name, headers[i].crc, static_cast<std::uint32_t>(entries[i].size));
        firstDifference = differsAt(headers[i].localOffset, header);
    }
    std::uint64_t centralAt = centralOffset;
    for (std::size_t i = 0; firstDifference == archive.size() && i < entries.size(); ++i) {
        header.clear();
        putCentralHeader(header, entries[i].name, headers[i].crc, static_cast<std::uint32_t>(entries[i].size),
                         headers[i].localOffset);
        firstDifference = differsAt(centralAt, header);
        centralAt += header.size();
    }
    if (firstDifference == archive.size()) {
        header.clear();
        putEndRecord(header, entries.size(), centralSize, centralOffset);
        firstDifference = differsAt(endAt, header);
    }
    if (firstDifference != archive.size())
        return zipError("ZIP headers differ from the canonical .cast layout at byte " +
                        std::to_string(firstDifference));
    return entries;
}

Result<std::vector<ZipEntry>> readZip(const std::string& archive, const CastLimits& limits)
{
    auto refs = scanZip(archive, limits);
    if (!refs)
        return refs.error();
    std::vector<ZipEntry> entries;
    entries.reserve(refs->size());
    for (ZipEntryRef& ref : refs.value())
        entries.push_back({std::move(ref.name), archive.substr(ref.offset, ref.size)});
    return entries;
}

} // namespace kforge::core
