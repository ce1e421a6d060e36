// `kforge verify` never sends a package's raw bytes to the terminal: a refused
// entry name and the strings of an accepted package (producer, audit lines,
// notes) are printed escaped.

#include "CastTestSupport.h"

#include "cast/CastWriter.h"
#include "util/AtomicFile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

namespace kforge::core {
namespace {

struct VerifyRun {
    int exitCode = -1;
    std::string out;
    std::string err;
};

class VerifyEscaping : public ::testing::Test {
protected:
    void SetUp() override
    {
        m_dir = std::filesystem::temp_directory_path() / ("kforge_verify_escaping_" + std::to_string(::getpid()));
        std::filesystem::create_directories(m_dir);
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }

    VerifyRun verify(const std::filesystem::path& package)
    {
        const auto out = m_dir / "stdout.txt";
        const auto err = m_dir / "stderr.txt";
        const std::string command = std::string("'") + KFORGE_BIN + "' verify '" + package.string() + "' >'" +
            out.string() + "' 2>'" + err.string() + "'";
        const int status = std::system(command.c_str());
        VerifyRun run;
        run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        run.out = readWholeFile(out).value();
        run.err = readWholeFile(err).value();
        return run;
    }

    static bool printable(const std::string& text)
    {
        for (char c : text) {
            const auto u = static_cast<unsigned char>(c);
            if ((u < 0x20 && c != '\n') || u >= 0x7F)
                return false;
        }
        return true;
    }

    std::filesystem::path m_dir;
};

// The issue's case: a non-UTF-8 entry name was refused only as "not
// referenced", with its raw bytes on the terminal.
TEST_F(VerifyEscaping, NonUtf8EntryNameIsOneEscapedLine)
{
    std::vector<ZipEntry> all = test::entriesOf(CastWriter::build(test::samplePackage()).value());
    nlohmann::json header = nlohmann::json::parse(all.front().data);
    header["counts"]["entries"] = all.size() + 1;
    std::vector<ZipEntry> inner(all.begin() + 1, all.end() - 1);
    inner.push_back({"kernels/k0/\xff\xfe\x1b[2J.bin", "payload"});
    const auto path = m_dir / "names.cast";
    ASSERT_TRUE(writeFileAtomically(path, CastWriter::seal(header, inner)).ok());
    const VerifyRun run = verify(path);
    EXPECT_EQ(run.exitCode, 1);
    EXPECT_TRUE(run.out.empty()) << run.out;
    EXPECT_EQ(run.err,
              "kforge: error: " + path.string() +
                  ": entry 'kernels/k0/\\xff\\xfe\\x1b[2J.bin': entry "
                  "name is not UTF-8\n");
    EXPECT_TRUE(printable(run.err)) << run.err;
}

TEST_F(VerifyEscaping, PackageStringsArePrintedEscaped)
{
    CastPackage package = test::samplePackage();
    package.header.producer = "kforge \x1b]0;title\x07";
    package.audit[2].reason = "fell back \x1b[2J\xc2\x9b"
                              "31m";
    package.auditNotes = {"note \x1b[31mred"};
    const auto path = m_dir / "strings.cast";
    ASSERT_TRUE(CastWriter::write(package, path).ok());
    const VerifyRun run = verify(path);
    ASSERT_EQ(run.exitCode, 0) << run.err;
    EXPECT_TRUE(printable(run.out)) << run.out;
    EXPECT_NE(run.out.find("kforge \\x1b]0;title\\x07"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("fell back \\x1b[2J\\xc2\\x9b31m"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("note \\x1b[31mred"), std::string::npos) << run.out;
}

} // namespace
} // namespace kforge::core
