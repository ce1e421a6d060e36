#include "util/AtomicFile.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <unistd.h>

namespace kforge::core {
namespace {

constexpr const char* kTemporaryInfix = ".tmp-";

Error ioError(const std::filesystem::path& path, const char* what)
{
    return makeError(ErrorCode::Io, std::string(what) + ": " + std::strerror(errno), path.string());
}

} // namespace

Result<void> syncDirectory(const std::filesystem::path& dir)
{
    int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return ioError(dir, "cannot open directory");
    const int rc = ::fsync(fd);
    ::close(fd);
    if (rc != 0)
        return ioError(dir, "cannot sync directory");
    return {};
}

std::filesystem::path atomicTemporaryPath(const std::filesystem::path& path)
{
    return path.string() + kTemporaryInfix + std::to_string(::getpid());
}

bool isAtomicTemporaryName(const std::string& fileName)
{
    const std::size_t at = fileName.rfind(kTemporaryInfix);
    if (at == std::string::npos || at == 0)
        return false;
    const std::size_t digits = at + std::strlen(kTemporaryInfix);
    return digits < fileName.size() &&
        std::all_of(fileName.begin() + static_cast<std::ptrdiff_t>(digits), fileName.end(),
                    [](char c) { return c >= '0' && c <= '9'; });
}

Result<void> writeFileAtomically(const std::filesystem::path& path, std::string_view bytes)
{
    const std::filesystem::path tmp = atomicTemporaryPath(path);
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return ioError(path, "cannot create file");
    size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            Error err = ioError(path, "cannot write file");
            ::close(fd);
            ::unlink(tmp.c_str());
            return err;
        }
        written += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0) {
        Error err = ioError(path, "cannot flush file");
        ::close(fd);
        ::unlink(tmp.c_str());
        return err;
    }
    ::close(fd);
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        Error err = ioError(path, "cannot replace file");
        ::unlink(tmp.c_str());
        return err;
    }
    return syncDirectory(path.parent_path());
}

Result<std::string> readWholeFile(const std::filesystem::path& path)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return makeError(ErrorCode::NotFound, "no such file", path.string());
    if (std::filesystem::is_directory(path, ec))
        return makeError(ErrorCode::InvalidArgument, "is a directory, expected a file", path.string());
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in)
        return ioError(path, "cannot open file");
    const std::streamsize size = in.tellg();
    if (size < 0)
        return ioError(path, "cannot read file");
    std::string bytes(static_cast<size_t>(size), '\0');
    in.seekg(0);
    if (!in.read(bytes.data(), size))
        return ioError(path, "cannot read file");
    return bytes;
}

} // namespace kforge::core
