#include "cast/ZipArchive.h"

#include "cast/Crc32.h"

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

void put16(std::string &out, std::uint16_t v) {
  out.push_back(static_cast<char>(v & 0xFF));
  out.push_back(static_cast<char>(v >> 8));
}

void put32(std::string &out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

std::uint16_t get16(const std::string &s, std::size_t at) {
  return static_cast<std::uint16_t>(
      static_cast<unsigned char>(s[at]) |
      (static_cast<unsigned char>(s[at + 1]) << 8));
}

std::uint32_t get32(const std::string &s, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

Error zipError(std::string message) {
  return makeError(ErrorCode::InvalidArgument, std::move(message));
}

std::string quotedName(const std::string &name) {
  std::string out = "'";
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) {
      static const char *hex = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "'";
}

} // namespace

std::string buildStoredZip(const std::vector<ZipEntry> &entries) {
  std::string out;
  std::string central;
  for (const ZipEntry &entry : entries) {
    const auto offset = static_cast<std::uint32_t>(out.size());
    const std::uint32_t crc = crc32(entry.data);
    const auto size = static_cast<std::uint32_t>(entry.data.size());
    const auto nameLength = static_cast<std::uint16_t>(entry.name.size());
    put32(out, kLocalSig);
    put16(out, 20);     // version needed
    put16(out, 0x0800); // flags: UTF-8 names
    put16(out, 0);      // stored
    put16(out, kDosTime);
    put16(out, kDosDate);
    put32(out, crc);
    put32(out, size);
    put32(out, size);
    put16(out, nameLength);
    put16(out, 0); // extra length
    out += entry.name;
    out += entry.data;

    put32(central, kCentralSig);
    put16(central, (3 << 8) | 20); // made by: Unix, 2.0
    put16(central, 20);
    put16(central, 0x0800);
    put16(central, 0);
    put16(central, kDosTime);
    put16(central, kDosDate);
    put32(central, crc);
    put32(central, size);
    put32(central, size);
    put16(central, nameLength);
    put16(central, 0);              // extra
    put16(central, 0);              // comment
    put16(central, 0);              // disk
    put16(central, 0);              // internal attributes
    put32(central, 0100644u << 16); // regular file, rw-r--r--
    put32(central, offset);
    central += entry.name;
  }
  const auto centralOffset = static_cast<std::uint32_t>(out.size());
  out += central;
  put32(out, kEndSig);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<std::uint16_t>(entries.size()));
  put16(out, static_cast<std::uint16_t>(entries.size()));
  put32(out, static_cast<std::uint32_t>(central.size()));
  put32(out, centralOffset);
  put16(out, 0); // comment length
  return out;
}

std::string checkEntryName(const std::string &name) {
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
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F)
      return "control character in entry name";
  }
  if (name.back() == '/')
    return "directory entry (packages hold files only)";
  std::size_t start = 0;
  while (start <= name.size()) {
    const auto end = name.find('/', start);
    const std::string part = name.substr(
        start, end == std::string::npos ? std::string::npos : end - start);
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

Result<std::vector<ZipEntry>> readZip(const std::string &archive,
                                      const CastLimits &limits) {
  // The writer never adds an archive comment, so the end record is exactly the
  // last 22 bytes.
  if (archive.size() < kEndSize ||
      get32(archive, archive.size() - kEndSize) != kEndSig)
    return zipError("truncated or not a .cast archive (no ZIP end record at "
                    "the end of the file)");
  const std::size_t endAt = archive.size() - kEndSize;
  if (get16(archive, endAt + 4) != 0 || get16(archive, endAt + 6) != 0 ||
      get16(archive, endAt + 20) != 0)
    return zipError(
        "unsupported ZIP layout (multi-disk archive or archive comment)");
  const std::uint16_t count = get16(archive, endAt + 8);
  if (get16(archive, endAt + 10) != count)
    return zipError("inconsistent ZIP end record (entry counts differ)");
  if (count == 0xFFFF || count > limits.maxEntries)
    return zipError("too many entries (" + std::to_string(count) + ")");
  const std::uint32_t centralSize = get32(archive, endAt + 12);
  const std::uint32_t centralOffset = get32(archive, endAt + 16);
  if (static_cast<std::uint64_t>(centralOffset) + centralSize != endAt)
    return zipError("truncated or damaged archive (central directory does not "
                    "end at the end record)");

  std::vector<ZipEntry> entries;
  std::set<std::string> names;
  std::uint64_t total = 0;
  std::size_t at = centralOffset;
  std::uint64_t expectedLocal = 0;
  for (std::uint16_t i = 0; i < count; ++i) {
    if (at + kCentralSize > endAt || get32(archive, at) != kCentralSig)
      return zipError("damaged central directory (entry " + std::to_string(i) +
                      ")");
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
      return zipError("damaged central directory (entry " + std::to_string(i) +
                      " runs past its end)");
    std::string name = archive.substr(at + kCentralSize, nameLength);
    at += kCentralSize + nameLength + extraLength + commentLength;

    const std::string entry = "entry " + quotedName(name);
    if (const std::string why = checkEntryName(name); !why.empty())
      return zipError(entry + ": " + why);
    if (!names.insert(name).second)
      return zipError(entry + ": duplicate entry");
    if (size > limits.maxEntryBytes || compressed > limits.maxEntryBytes)
      return zipError(entry + ": declared size " +
                      std::to_string(std::max(size, compressed)) +
                      " bytes exceeds the per-entry limit of " +
                      std::to_string(limits.maxEntryBytes));
    total += size;
    if (total > limits.maxTotalBytes)
      return zipError(entry + ": entries total more than the limit of " +
                      std::to_string(limits.maxTotalBytes) + " bytes");
    if (flags & 0x0001)
      return zipError(entry + ": encrypted entries are not supported");
    if (flags & 0x0008)
      return zipError(entry + ": data descriptors are not supported");
    if (method != 0)
      return zipError(entry + ": compression method " + std::to_string(method) +
                      " is not supported (format 1.x stores entries)");
    if (compressed != size)
      return zipError(
          entry +
          ": stored entry with different compressed and uncompressed sizes");

    // The local header must sit right after the previous entry and agree with
    // the central one.
    if (localOffset != expectedLocal)
      return zipError(entry + ": local header at an unexpected offset (gap, "
                              "overlap or reordered entries)");
    if (localOffset + kLocalSize > centralOffset ||
        get32(archive, localOffset) != kLocalSig)
      return zipError(entry + ": damaged local header");
    const std::uint16_t localNameLength = get16(archive, localOffset + 26);
    const std::uint16_t localExtraLength = get16(archive, localOffset + 28);
    const std::uint64_t dataAt = static_cast<std::uint64_t>(localOffset) +
                                 kLocalSize + localNameLength +
                                 localExtraLength;
    if (dataAt + size > centralOffset)
      return zipError(entry +
                      ": truncated (data runs past the central directory)");
    if (get16(archive, localOffset + 6) != flags ||
        get16(archive, localOffset + 8) != method ||
        get32(archive, localOffset + 14) != crc ||
        get32(archive, localOffset + 18) != compressed ||
        get32(archive, localOffset + 22) != size ||
        archive.compare(localOffset + kLocalSize, localNameLength, name) != 0 ||
        localNameLength != nameLength)
      return zipError(entry +
                      ": local header disagrees with the central directory");
    std::string data = archive.substr(dataAt, size);
    if (crc32(data) != crc)
      return zipError(entry +
                      ": CRC-32 mismatch (the entry's bytes were changed)");
    expectedLocal = dataAt + size;
    entries.push_back({std::move(name), std::move(data)});
  }
  if (at != endAt)
    return zipError("damaged central directory (trailing bytes)");
  if (expectedLocal != centralOffset)
    return zipError(
        "unexpected bytes between the last entry and the central directory");
  // The layout is canonical (fixed times, attributes, versions and flags):
  // anything the checks above do not interpret must still be exactly what the
  // writer produces, so that no byte of a package can change unnoticed.
  const std::string canonical = buildStoredZip(entries);
  if (canonical != archive) {
    std::size_t at = 0;
    while (at < archive.size() && archive[at] == canonical[at])
      ++at;
    return zipError(
        "ZIP headers differ from the canonical .cast layout at byte " +
        std::to_string(at));
  }
  return entries;
}

} // namespace kforge::core
