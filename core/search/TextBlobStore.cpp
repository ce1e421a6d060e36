#include "search/TextBlobStore.h"

#include "model/TextBounds.h"
#include "util/AtomicFile.h"
#include "util/Sha256.h"

#include <cstdint>
#include <system_error>

namespace kforge::core {
namespace {

// A stored copy is at most kMaxStoredTextBytes plus boundedText's note.
constexpr std::uintmax_t kMaxBlobFileBytes = kMaxStoredTextBytes + 4096;

} // namespace

std::filesystem::path TextBlobStore::fileOf(const std::string& sha256) const
{
    return m_directory / (sha256 + ".txt");
}

bool TextBlobStore::isDigest(const std::string& text)
{
    return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

Result<TextBlobRef> TextBlobStore::put(std::string_view text) const
{
    const std::string stored = boundedText(text, kMaxStoredTextBytes);
    TextBlobRef ref;
    ref.sha256 = Sha256::hex(stored);
    ref.bytes = text.size();
    ref.truncated = stored.size() != text.size();
    const std::filesystem::path file = fileOf(ref.sha256);
    std::error_code ec;
    if (std::filesystem::is_regular_file(file, ec))
        return ref; // content-addressed: the same name holds the same bytes
    std::filesystem::create_directories(m_directory, ec);
    if (ec)
        return makeError(ErrorCode::Io, "cannot create the directory: " + ec.message(), m_directory.string());
    if (auto written = writeFileAtomically(file, stored); !written)
        return written.error();
    return ref;
}

Result<std::string> TextBlobStore::get(const std::string& sha256) const
{
    if (!isDigest(sha256))
        return makeError(ErrorCode::InvalidArgument, "not a SHA-256 digest: '" + sha256.substr(0, 80) + "'",
                         m_directory.string());
    const std::filesystem::path file = fileOf(sha256);
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(file, ec);
    if (ec)
        return makeError(ErrorCode::NotFound, "the stored text is missing", file.string());
    if (size > kMaxBlobFileBytes)
        return makeError(ErrorCode::InvalidArgument,
                         "damaged text blob: " + std::to_string(size) + " bytes, more than a stored text can have",
                         file.string());
    auto bytes = readWholeFile(file);
    if (!bytes)
        return bytes.error();
    if (Sha256::hex(bytes.value()) != sha256)
        return makeError(ErrorCode::InvalidArgument, "damaged text blob: its bytes do not match its name",
                         file.string());
    return bytes;
}

} // namespace kforge::core
