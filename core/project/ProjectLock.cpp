#include "project/ProjectLock.h"

#include "util/UtcTime.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace kforge::core {
namespace fs = std::filesystem;

namespace {

// A holder record is one short JSON line; anything longer is not one of ours.
constexpr std::size_t kMaxRecordBytes = 4096;

std::string hostName()
{
    char name[256] = {};
    if (::gethostname(name, sizeof(name) - 1) != 0)
        return {};
    return name;
}

std::string programName()
{
    const char* name = program_invocation_short_name;
    return name && *name ? name : "kforge";
}

// "17:02:11" today, "2026-11-29 17:02:11" on another day (local time: what the user's clock says).
std::string localTimeText(std::int64_t unixSeconds)
{
    const std::time_t when = static_cast<std::time_t>(unixSeconds);
    const std::time_t now = std::time(nullptr);
    std::tm whenTm{};
    std::tm nowTm{};
    if (!::localtime_r(&when, &whenTm) || !::localtime_r(&now, &nowTm))
        return {};
    const bool today =
        whenTm.tm_year == nowTm.tm_year && whenTm.tm_mon == nowTm.tm_mon && whenTm.tm_mday == nowTm.tm_mday;
    char text[64] = {};
    std::strftime(text, sizeof(text), today ? "%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &whenTm);
    return text;
}

// The record is anyone's text: what of it reaches an error line is one short line of printable ASCII.
std::string printable(const std::string& text)
{
    constexpr std::size_t kMaxChars = 120;
    std::string out;
    for (const char c : text) {
        if (out.size() == kMaxChars) {
            out += "...";
            break;
        }
        out += c >= 0x20 && c < 0x7f ? c : '?';
    }
    return out;
}

std::optional<ProjectLockHolder> parseHolder(const std::string& text)
{
    const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!json.is_object())
        return std::nullopt;
    ProjectLockHolder holder;
    const auto pid = json.find("pid");
    if (pid == json.end() || !pid->is_number_integer() || pid->get<long long>() <= 0 ||
        pid->get<long long>() > 0x7fffffff)
        return std::nullopt;
    holder.pid = static_cast<long>(pid->get<long long>());
    const auto textOf = [&](const char* key) {
        const auto it = json.find(key);
        return it != json.end() && it->is_string() ? printable(it->get<std::string>()) : std::string();
    };
    holder.host = textOf("host");
    holder.command = textOf("command");
    if (const auto started = json.find("started_unix"); started != json.end() && started->is_number_integer())
        holder.startedUnix = started->get<std::int64_t>();
    return holder;
}

std::optional<ProjectLockHolder> readHolderFile(const fs::path& file)
{
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return std::nullopt;
    std::string text(kMaxRecordBytes, '\0');
    const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
    ::close(fd);
    if (n <= 0 || static_cast<std::size_t>(n) >= kMaxRecordBytes)
        return std::nullopt;
    text.resize(static_cast<std::size_t>(n));
    return parseHolder(text);
}

// A record describes the process that holds the lock only if that process is still there (a record
// of a dead pid is the previous holder's, or the new holder has not written its own yet).
bool plausible(const std::optional<ProjectLockHolder>& holder)
{
    if (!holder)
        return false;
    return holder->host != hostName() || processIsAlive(holder->pid);
}

// "is being changed by another kforge (pid 12345, kforge optimize, since 17:02:11); wait for it or stop it"
std::string heldMessage(const std::optional<ProjectLockHolder>& holder)
{
    constexpr const char* kAdvice = "; wait for it or stop it";
    if (!holder)
        return std::string("is being changed by another kforge (its pid is not recorded)") + kAdvice;
    const bool sameHost = holder->host.empty() || holder->host == hostName();
    std::string who;
    if (sameHost && holder->pid == static_cast<long>(::getpid()))
        who = "another job of this program (";
    else
        who = "another kforge (pid " + std::to_string(holder->pid) +
            (sameHost ? std::string() : " on host " + holder->host) + ", ";
    std::string details = holder->command.empty() ? std::string("command not recorded") : holder->command;
    if (holder->startedUnix > 0)
        if (const std::string since = localTimeText(holder->startedUnix); !since.empty())
            details += ", since " + since;
    if (sameHost && !processIsAlive(holder->pid))
        details += "; it has exited, a process it started still holds the lock";
    return "is being changed by " + who + details + ")" + kAdvice;
}

bool writeHolder(int fd, const std::string& activity)
{
    const auto now = std::chrono::system_clock::now();
    const nlohmann::json record{
        {"pid", static_cast<long long>(::getpid())},
        {"host", hostName()},
        {"command", programName() + (activity.empty() ? "" : " " + activity)},
        {"started_unix", std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count()},
        {"started", utcNowIso8601()},
    };
    const std::string text = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (::ftruncate(fd, 0) != 0)
        return false;
    return ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
}

} // namespace

bool processIsAlive(long pid)
{
    if (pid <= 0)
        return false;
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

Result<ProjectLock> ProjectLock::acquire(const fs::path& dir, const std::string& activity)
{
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return makeError(ErrorCode::NotFound, "no such project directory", dir.string());
    const fs::path file = dir / kFileName;
    const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        const int error = errno;
        if (error == EACCES || error == EROFS || error == EPERM)
            return makeError(ErrorCode::Io,
                             std::string("cannot be changed: the folder is not writable (cannot create ") + kFileName +
                                 ": " + std::strerror(error) + ")",
                             dir.string());
        return makeError(ErrorCode::Io,
                         std::string("cannot open the writer lock ") + kFileName + ": " + std::strerror(error),
                         dir.string());
    }
    // The holder writes its record right after it takes the lock: a record that is missing or names
    // a dead process is given a moment to appear before it is reported (or the lock is free again).
    std::optional<ProjectLockHolder> holder;
    for (int attempt = 0; attempt < 25; ++attempt) {
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
            if (!writeHolder(fd, activity)) {
                const int error = errno;
                ::close(fd); // releases the lock
                return makeError(ErrorCode::Io,
                                 std::string("cannot write the writer lock ") + kFileName + ": " + std::strerror(error),
                                 dir.string());
            }
            return ProjectLock(fd, dir);
        }
        if (errno != EWOULDBLOCK && errno != EINTR) {
            const int error = errno;
            ::close(fd);
            return makeError(ErrorCode::Io, std::string("cannot lock ") + kFileName + ": " + std::strerror(error),
                             dir.string());
        }
        holder = readHolderFile(file);
        if (plausible(holder))
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::close(fd);
    return makeError(ErrorCode::AlreadyExists, heldMessage(holder), dir.string());
}

std::optional<ProjectLockHolder> ProjectLock::readHolder(const fs::path& dir)
{
    return readHolderFile(dir / kFileName);
}

ProjectLock::ProjectLock(ProjectLock&& other) noexcept : m_fd(other.m_fd), m_dir(std::move(other.m_dir))
{
    other.m_fd = -1;
}

ProjectLock& ProjectLock::operator=(ProjectLock&& other) noexcept
{
    if (this != &other) {
        release();
        m_fd = other.m_fd;
        m_dir = std::move(other.m_dir);
        other.m_fd = -1;
    }
    return *this;
}

ProjectLock::~ProjectLock()
{
    release();
}

void ProjectLock::release()
{
    if (m_fd < 0)
        return;
    // The record goes first, while the lock is still ours: a record never outlives its holder by
    // a normal exit (after kill -9 it does, and the next holder overwrites it).
    (void)::ftruncate(m_fd, 0);
    ::close(m_fd);
    m_fd = -1;
}

} // namespace kforge::core
