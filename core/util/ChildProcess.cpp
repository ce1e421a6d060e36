#include "util/ChildProcess.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace kforge::core {

namespace {

void closeFd(int& fd)
{
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

} // namespace

Result<ChildOutput> runChildProcess(const std::string& executable, const std::vector<std::string>& arguments)
{
    if (::access(executable.c_str(), X_OK) != 0)
        return makeError(ErrorCode::NotFound, std::string("cannot run: ") + std::strerror(errno), executable);
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
        const std::string why = std::strerror(errno);
        for (int* p : {out, err}) {
            closeFd(p[0]);
            closeFd(p[1]);
        }
        return makeError(ErrorCode::Internal, "cannot create pipes: " + why, executable);
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
    std::vector<std::string> argStrings{executable};
    argStrings.insert(argStrings.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (std::string& a : argStrings)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    // An empty signal mask: a command that blocks SIGINT to take it synchronously
    // (cli/Interruptible.h) must not pass the block on, so the child gets Ctrl-C as it would alone.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t emptyMask;
    sigemptyset(&emptyMask);
    posix_spawnattr_setsigmask(&attributes, &emptyMask);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, executable.c_str(), &actions, &attributes, argv.data(), environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    closeFd(out[1]);
    closeFd(err[1]);
    if (rc != 0) {
        closeFd(out[0]);
        closeFd(err[0]);
        return makeError(ErrorCode::Internal, std::string("cannot start: ") + std::strerror(rc), executable);
    }

    ChildOutput result;
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    std::string* sinks[2] = {&result.out, &result.err};
    int open = 2;
    char buffer[65536];
    while (open > 0) {
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
            if (n > 0) {
                sinks[i]->append(buffer, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open;
            }
        }
    }
    for (pollfd& p : fds)
        if (p.fd >= 0)
            ::close(p.fd);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(status))
        result.exitCode = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        result.signal = WTERMSIG(status);
    return result;
}

std::string siblingExecutablePath(const std::string& name, const std::string& buildSubdir, const char* envVar)
{
    namespace fs = std::filesystem;
    if (const char* fromEnv = std::getenv(envVar); fromEnv && *fromEnv)
        return fromEnv;
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec)
        return name;
    for (const fs::path& candidate : {self.parent_path() / name, self.parent_path() / ".." / buildSubdir / name}) {
        if (fs::exists(candidate, ec))
            return fs::weakly_canonical(candidate, ec).string();
    }
    return (self.parent_path() / name).string();
}

std::string findExecutable(const std::string& name, const std::vector<std::string>& fallbacks)
{
    if (const char* path = std::getenv("PATH")) {
        const std::string paths = path;
        std::size_t start = 0;
        while (start <= paths.size()) {
            const std::size_t end = paths.find(':', start);
            const std::string dir = paths.substr(start, end == std::string::npos ? std::string::npos : end - start);
            const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / name;
            if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate))
                return candidate.string();
            if (end == std::string::npos)
                break;
            start = end + 1;
        }
    }
    for (const std::string& candidate : fallbacks)
        if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate))
            return candidate;
    return {};
}

} // namespace kforge::core
