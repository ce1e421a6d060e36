// Nothing left behind: the staging folder of a killed capture is removed by the next capture into
// the same parent folder (never one a live capture holds), and the atomic-write temporaries a
// killed writer left in a project are removed when the next writer takes the project's lock.

#include "project/ProjectStore.h"
#include "util/AtomicFile.h"

#include "ScratchDir.h"
#include "TestProject.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace kforge::core;
namespace fs = std::filesystem;

namespace {

// A child process that begins staging `target` (as a capture does), writes a sample into the
// staging folder, reports the folder on a pipe and sleeps until killed.
class StagingChild {
public:
    explicit StagingChild(const fs::path& target)
    {
        int ready[2];
        EXPECT_EQ(::pipe(ready), 0);
        m_pid = ::fork();
        if (m_pid == 0) {
            ::close(ready[0]);
            auto staging = beginStaging(target);
            std::string line = staging ? staging->path.string() : std::string();
            if (staging)
                std::ofstream(staging->path / "sample.pt") << std::string(4096, 'x');
            line += "\n";
            (void)::write(ready[1], line.data(), line.size());
            for (;;)
                ::pause();
        }
        ::close(ready[1]);
        std::string text;
        char c = 0;
        while (::read(ready[0], &c, 1) == 1 && c != '\n')
            text += c;
        ::close(ready[0]);
        m_staging = text;
    }
    ~StagingChild() { kill(); }

    pid_t pid() const { return m_pid; }
    const fs::path& staging() const { return m_staging; }
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
    fs::path m_staging;
};

// The pid of a process that has exited (and was reaped).
pid_t deadPid()
{
    const pid_t pid = ::fork();
    if (pid == 0)
        ::_exit(0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return pid;
}

class ProjectLeftoversTest : public ::testing::Test {
protected:
    test::ScratchDir m_scratch;
    const fs::path m_root = m_scratch.path();
};

} // namespace

TEST_F(ProjectLeftoversTest, StagingOfAKilledCaptureIsRemovedByTheNextCapture)
{
    StagingChild child(m_root / "first");
    ASSERT_FALSE(child.staging().empty());
    ASSERT_TRUE(fs::exists(child.staging() / "sample.pt"));
    EXPECT_EQ(child.staging().filename().string(), ".first.kforge-staging-" + std::to_string(child.pid()));

    // While the capture runs, another capture into the same folder leaves its staging alone.
    {
        auto other = beginStaging(m_root / "second");
        ASSERT_TRUE(other.ok()) << other.error().toString();
        EXPECT_TRUE(other->removedLeftovers.empty());
        EXPECT_TRUE(fs::exists(child.staging() / "sample.pt"));
        discardStaging(other->path);
    }

    const long killed = child.pid();
    child.kill();
    auto next = beginStaging(m_root / "second");
    ASSERT_TRUE(next.ok()) << next.error().toString();
    EXPECT_FALSE(fs::exists(child.staging()));
    ASSERT_EQ(next->removedLeftovers.size(), 1u);
    EXPECT_NE(next->removedLeftovers[0].find("(pid " + std::to_string(killed) + ")"), std::string::npos)
        << next->removedLeftovers[0];
    EXPECT_TRUE(fs::is_directory(next->path));
}

TEST_F(ProjectLeftoversTest, StagingWithoutALockFileIsRemovedOnlyWhenItsProcessIsGone)
{
    const fs::path dead = m_root / (".old.kforge-staging-" + std::to_string(deadPid()));
    const fs::path alive = m_root / (".mine.kforge-staging-" + std::to_string(::getpid()));
    const fs::path unrelated[] = {m_root / ".x.kforge-staging-12ab", m_root / "x.kforge-staging-1",
                                  m_root / ".kforge-staging-1"};
    for (const fs::path& dir : {dead, alive})
        fs::create_directories(dir);
    for (const fs::path& dir : unrelated)
        fs::create_directories(dir);

    const std::vector<std::string> removed = removeStaleStaging(m_root);
    EXPECT_EQ(removed.size(), 1u);
    EXPECT_FALSE(fs::exists(dead));
    EXPECT_TRUE(fs::exists(alive)); // may be a capture of a kforge that wrote no lock file
    for (const fs::path& dir : unrelated)
        EXPECT_TRUE(fs::exists(dir)) << dir;
}

TEST_F(ProjectLeftoversTest, FreeStagingLockOutranksAReusedPid)
{
    // The pid in the name runs (reused by another process: here, this one), but nobody holds the
    // folder's lock: once past the creation grace it is a leftover.
    const fs::path old = m_root / (".old.kforge-staging-" + std::to_string(::getpid()));
    fs::create_directories(old);
    std::ofstream(old / ProjectLock::kFileName) << "";
    fs::last_write_time(old, fs::file_time_type::clock::now() - std::chrono::hours(1));
    // The same, freshly created: it may be a capture between creating and locking its folder.
    const fs::path young = m_root / (".young.kforge-staging-" + std::to_string(::getpid()));
    fs::create_directories(young);
    std::ofstream(young / ProjectLock::kFileName) << "";

    EXPECT_EQ(removeStaleStaging(m_root).size(), 1u);
    EXPECT_FALSE(fs::exists(old));
    EXPECT_TRUE(fs::exists(young));
}

TEST_F(ProjectLeftoversTest, CommittedProjectKeepsItsLockFileAndTheCaptureHoldsItUntilDone)
{
    const fs::path target = m_root / "project";
    auto staging = beginStaging(target);
    ASSERT_TRUE(staging.ok()) << staging.error().toString();
    ASSERT_TRUE(saveProject(staging->path, test::makeFixtureProject()).ok());
    ASSERT_TRUE(commitStaging(staging->path, target).ok());
    EXPECT_TRUE(fs::exists(target / ProjectLock::kFileName));
    EXPECT_FALSE(lockProjectForWriting(target, "optimize").ok()); // still the capture's
    staging->lock.release();
    EXPECT_TRUE(lockProjectForWriting(target, "optimize").ok());
}

TEST_F(ProjectLeftoversTest, WriterLockRemovesTheTemporariesOfAKilledWriter)
{
    const fs::path dir = m_root / "project";
    fs::create_directories(dir / "search" / "abc");
    ASSERT_TRUE(saveProject(dir, test::makeFixtureProject()).ok());
    const std::string pid = std::to_string(deadPid());
    const fs::path stale[] = {dir / ("cards.json.tmp-" + pid), dir / ("project.json.tmp-" + pid),
                              dir / "search" / "abc" / ("tree.json.tmp-" + pid)};
    const fs::path kept[] = {dir / "search" / "abc" / "tree.json", dir / ("notes.txt.tmp-" + pid),
                             dir / "model.cast.tmp-1", dir / "search" / "abc" / "tree.json.tmp-x"};
    for (const fs::path& file : stale)
        std::ofstream(file) << "{\"half\": ";
    for (const fs::path& file : kept)
        std::ofstream(file) << "mine";

    // A writer that cannot take the lock touches nothing.
    {
        auto holder = lockProjectForWriting(dir, "optimize");
        ASSERT_TRUE(holder.ok()) << holder.error().toString();
        for (const fs::path& file : stale)
            std::ofstream(file) << "{\"half\": "; // the holder's own (it removed the others)
        EXPECT_FALSE(lockProjectForWriting(dir, "optimize").ok());
        for (const fs::path& file : stale)
            EXPECT_TRUE(fs::exists(file)) << file;
    }

    auto lock = lockProjectForWriting(dir, "optimize");
    ASSERT_TRUE(lock.ok()) << lock.error().toString();
    for (const fs::path& file : stale)
        EXPECT_FALSE(fs::exists(file)) << file;
    for (const fs::path& file : kept)
        EXPECT_TRUE(fs::exists(file)) << file;
    EXPECT_TRUE(openProject(dir).ok());
}
