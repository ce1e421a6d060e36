// The one-writer-per-project lock: exclusive across processes and within one, names its holder,
// is released on destruction, and is taken over from a holder that died without releasing it.

#include "project/ProjectLock.h"
#include "util/AtomicFile.h"

#include "ScratchDir.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kforge::core;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& text, const std::string& needle)
{
    return text.find(needle) != std::string::npos;
}

// A child process that takes the lock of `dir`, reports on a pipe that it holds it, then sleeps
// until killed (or, with exitAtOnce, exits without releasing anything).
class LockingChild {
public:
    LockingChild(const fs::path& dir, bool exitAtOnce = false)
    {
        int ready[2];
        EXPECT_EQ(::pipe(ready), 0);
        m_pid = ::fork();
        if (m_pid == 0) {
            ::close(ready[0]);
            auto lock = ProjectLock::acquire(dir, "optimize");
            const char status = lock ? 'y' : 'n';
            (void)::write(ready[1], &status, 1);
            if (exitAtOnce)
                ::_exit(0); // no destructor: the record stays behind, as after a crash
            for (;;)
                ::pause();
        }
        ::close(ready[1]);
        char status = 0;
        EXPECT_EQ(::read(ready[0], &status, 1), 1);
        ::close(ready[0]);
        m_locked = status == 'y';
    }
    ~LockingChild() { kill(); }

    pid_t pid() const { return m_pid; }
    bool locked() const { return m_locked; }
    void kill()
    {
        if (m_pid <= 0)
            return;
        ::kill(m_pid, SIGKILL);
        int status = 0;
        ::waitpid(m_pid, &status, 0);
        m_pid = -1;
    }

private:
    pid_t m_pid = -1;
    bool m_locked = false;
};

class ProjectLockTest : public ::testing::Test {
protected:
    test::ScratchDir m_scratch;
    const fs::path m_dir = m_scratch.path();
};

} // namespace

TEST_F(ProjectLockTest, RecordsItsHolderAndReleasesOnDestruction)
{
    {
        auto lock = ProjectLock::acquire(m_dir, "optimize");
        ASSERT_TRUE(lock.ok()) << lock.error().toString();
        EXPECT_TRUE(lock->held());
        auto holder = ProjectLock::readHolder(m_dir);
        ASSERT_TRUE(holder.has_value());
        EXPECT_EQ(holder->pid, static_cast<long>(::getpid()));
        EXPECT_TRUE(contains(holder->command, " optimize")) << holder->command;
        EXPECT_GT(holder->startedUnix, 0);
    }
    // Released: the record is cleared, the file stays (deleting a lock file is a race), and the
    // lock can be taken again.
    EXPECT_FALSE(ProjectLock::readHolder(m_dir).has_value());
    EXPECT_TRUE(fs::exists(m_dir / ProjectLock::kFileName));
    EXPECT_TRUE(ProjectLock::acquire(m_dir, "optimize").ok());
}

TEST_F(ProjectLockTest, SecondLockInTheSameProcessIsRefused)
{
    auto first = ProjectLock::acquire(m_dir, "optimize");
    ASSERT_TRUE(first.ok()) << first.error().toString();
    auto second = ProjectLock::acquire(m_dir, "benchmark edit");
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.error().code, ErrorCode::AlreadyExists);
    const std::string message = second.error().toString();
    EXPECT_TRUE(contains(message, m_dir.string() + ": is being changed by another job of this program")) << message;
    EXPECT_TRUE(contains(message, " optimize, since ")) << message;
    EXPECT_TRUE(contains(message, "wait for it or stop it")) << message;
    // The loser changed nothing: the record still names the holder.
    EXPECT_EQ(ProjectLock::readHolder(m_dir)->pid, static_cast<long>(::getpid()));

    first->release();
    EXPECT_FALSE(first->held());
    EXPECT_TRUE(ProjectLock::acquire(m_dir, "benchmark edit").ok());
}

TEST_F(ProjectLockTest, LockOfAnotherProcessNamesItsPidAndIsTakenOverWhenItIsKilled)
{
    LockingChild child(m_dir);
    ASSERT_TRUE(child.locked());
    auto refused = ProjectLock::acquire(m_dir, "optimize");
    ASSERT_FALSE(refused.ok());
    const std::string message = refused.error().toString();
    EXPECT_TRUE(contains(message, "is being changed by another kforge (pid " + std::to_string(child.pid()) + ", "))
        << message;
    EXPECT_TRUE(contains(message, "optimize, since ")) << message;
    EXPECT_FALSE(contains(message, "has exited")) << message;

    child.kill(); // SIGKILL: no destructor, no unlock
    auto taken = ProjectLock::acquire(m_dir, "optimize");
    ASSERT_TRUE(taken.ok()) << taken.error().toString();
    EXPECT_EQ(ProjectLock::readHolder(m_dir)->pid, static_cast<long>(::getpid()));
}

TEST_F(ProjectLockTest, HolderThatExitedWithoutReleasingIsTakenOver)
{
    LockingChild child(m_dir, /*exitAtOnce=*/true);
    ASSERT_TRUE(child.locked());
    const pid_t dead = child.pid();
    child.kill(); // reaps it
    // Its record is still there, naming a process that is gone ...
    auto stale = ProjectLock::readHolder(m_dir);
    ASSERT_TRUE(stale.has_value());
    EXPECT_EQ(stale->pid, static_cast<long>(dead));
    // ... and the lock is free: taken over, the record replaced.
    auto taken = ProjectLock::acquire(m_dir, "optimize");
    ASSERT_TRUE(taken.ok()) << taken.error().toString();
    EXPECT_EQ(ProjectLock::readHolder(m_dir)->pid, static_cast<long>(::getpid()));
}

TEST_F(ProjectLockTest, LockInheritedByAProcessTheHolderStartedIsReportedAsSuch)
{
    // The holder forks (no exec: a close-on-exec descriptor survives) and exits; the grandchild
    // keeps the lock. The record names the holder's pid, which is gone: the message says so.
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t holder = ::fork();
    if (holder == 0) {
        ::close(ready[0]);
        auto lock = ProjectLock::acquire(m_dir, "optimize");
        const pid_t keeper = ::fork();
        if (keeper == 0) {
            for (;;)
                ::pause();
        }
        const std::string line = std::to_string(keeper) + "\n";
        (void)::write(ready[1], line.data(), line.size());
        ::_exit(lock ? 0 : 1);
    }
    ::close(ready[1]);
    char buffer[32] = {};
    ASSERT_GT(::read(ready[0], buffer, sizeof(buffer) - 1), 0);
    ::close(ready[0]);
    const pid_t keeper = static_cast<pid_t>(std::atol(buffer));
    int status = 0;
    ::waitpid(holder, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    auto refused = ProjectLock::acquire(m_dir, "optimize");
    ::kill(keeper, SIGKILL);
    ASSERT_FALSE(refused.ok());
    const std::string message = refused.error().toString();
    EXPECT_TRUE(contains(message, "(pid " + std::to_string(holder) + ", ")) << message;
    EXPECT_TRUE(contains(message, "it has exited, a process it started still holds the lock")) << message;
}

TEST_F(ProjectLockTest, DamagedRecordIsOverwrittenByTheNextHolder)
{
    std::ofstream(m_dir / ProjectLock::kFileName) << std::string(10000, '{') << "\xff\xfe not json";
    EXPECT_FALSE(ProjectLock::readHolder(m_dir).has_value());
    auto lock = ProjectLock::acquire(m_dir, "optimize");
    ASSERT_TRUE(lock.ok()) << lock.error().toString();
    EXPECT_EQ(ProjectLock::readHolder(m_dir)->pid, static_cast<long>(::getpid()));
}

TEST_F(ProjectLockTest, RecordTextReachesTheMessageAsOnePrintableLine)
{
    // A holder whose record was replaced by hostile text (the file is anyone's to write): the
    // error stays one line, with no terminal escapes and bounded length.
    auto holder = ProjectLock::acquire(m_dir, "optimize");
    ASSERT_TRUE(holder.ok());
    std::ofstream(m_dir / ProjectLock::kFileName, std::ios::trunc)
        << R"({"pid": )" << ::getpid() << R"(, "command": "evil\nkforge: error: fake\u001b[2J)" << std::string(500, 'x')
        << R"("})";
    auto refused = ProjectLock::acquire(m_dir, "optimize");
    ASSERT_FALSE(refused.ok());
    const std::string message = refused.error().toString();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
    EXPECT_TRUE(contains(message, "(evil?kforge: error: fake?[2Jxxx")) << message;
    EXPECT_LT(message.size(), 400u) << message;
}

TEST_F(ProjectLockTest, ReadOnlyFolderCannotBeLockedForWriting)
{
    // Not writable: by its permissions for a user; for root, whom permissions do not stop, by a
    // read-only file system mounted on it (skipped where that is not allowed).
    const fs::path dir = m_dir / "read-only";
    fs::create_directories(dir);
    const bool root = ::geteuid() == 0;
    if (root) {
        if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k") != 0)
            GTEST_SKIP() << "root, and no permission to mount a read-only file system";
        if (::mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
            ::umount2(dir.c_str(), MNT_DETACH);
            GTEST_SKIP() << "cannot remount read-only";
        }
    } else {
        fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
    }
    auto lock = ProjectLock::acquire(dir, "optimize");
    if (root)
        ::umount2(dir.c_str(), MNT_DETACH);
    else
        fs::permissions(dir, fs::perms::owner_all);
    ASSERT_FALSE(lock.ok());
    EXPECT_EQ(lock.error().code, ErrorCode::Io);
    EXPECT_TRUE(contains(lock.error().toString(),
                         dir.string() + ": cannot be changed: the folder is not writable (cannot create " +
                             ProjectLock::kFileName + ": "))
        << lock.error().toString();
}

TEST_F(ProjectLockTest, MissingFolderIsNotFound)
{
    auto lock = ProjectLock::acquire(m_dir / "none", "optimize");
    ASSERT_FALSE(lock.ok());
    EXPECT_EQ(lock.error().code, ErrorCode::NotFound);
}

TEST(AtomicTemporaryNameTest, MatchesOnlyTheWritersTemporaries)
{
    EXPECT_EQ(atomicTemporaryPath("/p/tree.json").string(), "/p/tree.json.tmp-" + std::to_string(::getpid()));
    EXPECT_TRUE(isAtomicTemporaryName("tree.json.tmp-4242"));
    EXPECT_TRUE(isAtomicTemporaryName("cards.json.tmp-1"));
    EXPECT_FALSE(isAtomicTemporaryName("tree.json"));
    EXPECT_FALSE(isAtomicTemporaryName("tree.json.tmp-"));
    EXPECT_FALSE(isAtomicTemporaryName("tree.json.tmp-12a"));
    EXPECT_FALSE(isAtomicTemporaryName(".tmp-12"));
    EXPECT_FALSE(isAtomicTemporaryName("notes.tmp"));
}
