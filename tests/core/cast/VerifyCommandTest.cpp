// `kforge verify` as a process: a good package passes and prints its audit; a
// corrupted one exits 1 with exactly one stderr line naming the entry.

#include "CastTestSupport.h"

#include "cast/CastWriter.h"
#include "util/AtomicFile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

namespace kforge::core {
namespace {

struct ProcessRun {
    int exitCode = -1;
    std::string out;
    std::string err;
};

class VerifyCommand : public ::testing::Test {
protected:
    void SetUp() override
    {
        m_dir = std::filesystem::temp_directory_path() / ("kforge_verify_" + std::to_string(::getpid()));
        std::filesystem::create_directories(m_dir);
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }

    ProcessRun verify(const std::string& arguments)
    {
        const auto out = m_dir / "stdout.txt";
        const auto err = m_dir / "stderr.txt";
        const std::string command = std::string("'") + KFORGE_BIN + "' verify " + arguments + " >'" + out.string() +
            "' 2>'" + err.string() + "'";
        const int status = std::system(command.c_str());
        ProcessRun run;
        run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        run.out = readWholeFile(out).value();
        run.err = readWholeFile(err).value();
        return run;
    }

    std::filesystem::path m_dir;
};

TEST_F(VerifyCommand, GoodPackagePassesAndPrintsTheAudit)
{
    const auto path = m_dir / "good.cast";
    ASSERT_TRUE(CastWriter::write(test::samplePackage(), path).ok());
    const ProcessRun run = verify("'" + path.string() + "'");
    EXPECT_EQ(run.exitCode, 0) << run.err;
    EXPECT_TRUE(run.err.empty()) << run.err;
    EXPECT_NE(run.out.find("3 kernels (2 custom, 1 fallback)"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("compatible with sm_90 (assumed"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("audit:"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("no candidate beat eager by the minimum speedup"), std::string::npos) << run.out;

    const ProcessRun json = verify("'" + path.string() + "' --arch sm_90 --json");
    ASSERT_EQ(json.exitCode, 0) << json.err;
    const auto report = nlohmann::json::parse(json.out);
    EXPECT_EQ(report["architecture"], "sm_90");
    EXPECT_EQ(report["architecture_assumed"], false);
    EXPECT_EQ(report["audit"].size(), 3u);
    EXPECT_EQ(report["audit"][2]["decision"], "fallback");

    const ProcessRun other = verify("'" + path.string() + "' --arch sm_80");
    EXPECT_EQ(other.exitCode, 1);
    EXPECT_NE(other.err.find("not compatible with sm_80: kernel k0 has no cubin for sm_80"), std::string::npos)
        << other.err;
}

TEST_F(VerifyCommand, CorruptedPackageFailsWithOneLineNamingTheEntry)
{
    std::string bytes = CastWriter::build(test::samplePackage()).value();
    const std::size_t at = test::dataOffset(bytes, "kernels/k1/sm_90.cubin");
    ASSERT_NE(at, std::string::npos);
    bytes[at + 2] = static_cast<char>(bytes[at + 2] ^ 0x10);
    const auto path = m_dir / "bad.cast";
    ASSERT_TRUE(writeFileAtomically(path, bytes).ok());
    const ProcessRun run = verify("'" + path.string() + "'");
    EXPECT_EQ(run.exitCode, 1);
    EXPECT_TRUE(run.out.empty()) << run.out;
    ASSERT_FALSE(run.err.empty());
    EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << "more than one line: " << run.err;
    EXPECT_NE(run.err.find("kforge: error: " + path.string() + ": entry 'kernels/k1/sm_90.cubin': CRC-32 mismatch"),
              std::string::npos)
        << run.err;

    const ProcessRun missing = verify("'" + (m_dir / "absent.cast").string() + "'");
    EXPECT_EQ(missing.exitCode, 1);
    EXPECT_EQ(missing.err.find('\n'), missing.err.size() - 1) << missing.err;
}

} // namespace
} // namespace kforge::core
