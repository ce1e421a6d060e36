#pragma once
// The one-writer-per-project lock (docs/project-format.md, "The writer lock").
//
// A writer (capture, optimize, the desktop app's optimize and edit-and-benchmark jobs) takes an
// exclusive flock(2) on `<dir>/.kforge-writer.lock` for as long as it may write into the folder,
// and records who it is in the file (pid, host, command, start time) so that a second writer can
// say who holds it. The lock never waits: a held lock is an immediate error naming the holder.
// Readers (cards, tree, bench, export, verify, the app's views) never take it.
//
// Why flock: the kernel releases it when the last descriptor of the open file closes, so a holder
// killed with SIGKILL leaves no lock behind (the next writer takes it over; only the stale text in
// the file remains, and it is overwritten). The descriptor is close-on-exec, so worker processes
// never inherit it; a lock is per open file, so two ProjectLocks of one process exclude each
// other too (the app's optimize job and edit job). The file itself is never deleted: deleting a
// lock file lets two writers lock two different files of the same name.
//
// Thread: a ProjectLock object is used by one thread at a time; acquire may run on any thread.

#include "util/Result.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace kforge::core {

/// Who holds (or last held) a lock, as recorded in the lock file.
struct ProjectLockHolder {
    long pid = 0;
    std::string host;
    std::string command;          // e.g. "kforge optimize"
    std::int64_t startedUnix = 0; // seconds since the epoch; 0 if unknown
};

class ProjectLock {
public:
    static constexpr const char* kFileName = ".kforge-writer.lock";

    /// Takes the writer lock of the existing directory `dir`, without waiting; `activity` names what
    /// the holder does ("optimize"), recorded after the program's name. Errors: AlreadyExists when
    /// another writer holds it (one line naming its pid, command and start time), Io when the lock
    /// file cannot be created (a read-only folder: nothing can be written there), NotFound when
    /// `dir` is not a directory.
    static Result<ProjectLock> acquire(const std::filesystem::path& dir, const std::string& activity);

    /// The holder recorded in `dir`'s lock file; nullopt when there is none or it is unreadable.
    /// The file may describe a writer that has exited (the lock itself is what is authoritative).
    static std::optional<ProjectLockHolder> readHolder(const std::filesystem::path& dir);

    ProjectLock() = default;
    ProjectLock(ProjectLock&& other) noexcept;
    ProjectLock& operator=(ProjectLock&& other) noexcept;
    ProjectLock(const ProjectLock&) = delete;
    ProjectLock& operator=(const ProjectLock&) = delete;
    ~ProjectLock();

    bool held() const { return m_fd >= 0; }
    const std::filesystem::path& directory() const { return m_dir; }

    /// Clears the holder text and releases the lock (also done by the destructor).
    void release();

private:
    ProjectLock(int fd, std::filesystem::path dir) : m_fd(fd), m_dir(std::move(dir)) {}

    int m_fd = -1;
    std::filesystem::path m_dir;
};

/// True when process `pid` exists on this machine (kill(pid, 0) does not say ESRCH). A pid can be
/// reused: "alive" never proves that a given kforge still runs, only "dead" is certain.
bool processIsAlive(long pid);

} // namespace kforge::core
