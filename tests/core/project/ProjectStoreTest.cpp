#include "project/ProjectStore.h"
#include "util/AtomicFile.h"

#include "ScratchDir.h"
#include "TestProject.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace kforge::core;
namespace fs = std::filesystem;

namespace {

class ProjectStoreTest : public ::testing::Test {
protected:
    fs::path savedFixture()
    {
        const fs::path dir = m_root / "project";
        fs::create_directories(dir);
        EXPECT_TRUE(saveProject(dir, test::makeFixtureProject()).ok());
        return dir;
    }

    test::ScratchDir m_scratch;
    const fs::path m_root = m_scratch.path();
};

} // namespace

TEST_F(ProjectStoreTest, ReopensToExactlyWhatWasSaved)
{
    const fs::path dir = savedFixture();
    auto reopened = openProject(dir);
    ASSERT_TRUE(reopened.ok()) << reopened.error().toString();
    EXPECT_EQ(reopened.value(), test::makeFixtureProject());
    // Saving the reopened project again gives byte-identical files.
    const std::string before = readWholeFile(dir / "cards.json").value();
    ASSERT_TRUE(saveProject(dir, reopened.value()).ok());
    EXPECT_EQ(readWholeFile(dir / "cards.json").value(), before);
}

TEST_F(ProjectStoreTest, SaveLeavesNoTemporaryFiles)
{
    const fs::path dir = savedFixture();
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"cards.json", "project.json"}));
}

TEST_F(ProjectStoreTest, MissingDirectoryAndNonProjectAreClearErrors)
{
    auto missing = openProject(m_root / "nope");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code, ErrorCode::NotFound);

    fs::create_directories(m_root / "plain");
    auto plain = openProject(m_root / "plain");
    ASSERT_FALSE(plain.ok());
    EXPECT_NE(plain.error().toString().find("not a Kernel Forge project"), std::string::npos);
}

TEST_F(ProjectStoreTest, DamagedJsonNamesTheFile)
{
    const fs::path dir = savedFixture();
    std::ofstream(dir / "cards.json") << "{\"cards\": [ {\"id\": ";
    auto damaged = openProject(dir);
    ASSERT_FALSE(damaged.ok());
    EXPECT_NE(damaged.error().toString().find("cards.json"), std::string::npos) << damaged.error().toString();
    EXPECT_NE(damaged.error().toString().find("damaged JSON"), std::string::npos);
}

TEST_F(ProjectStoreTest, TamperedCardIdIsRejected)
{
    const fs::path dir = savedFixture();
    auto json = nlohmann::json::parse(readWholeFile(dir / "cards.json").value());
    json["cards"][0]["id"] = "0000000000000000";
    ASSERT_TRUE(writeFileAtomically(dir / "cards.json", json.dump()).ok());
    auto opened = openProject(dir);
    ASSERT_FALSE(opened.ok());
    EXPECT_NE(opened.error().toString().find("cards[0]"), std::string::npos) << opened.error().toString();
    EXPECT_NE(opened.error().toString().find("does not match its key"), std::string::npos);
}

TEST_F(ProjectStoreTest, MissingFieldNamesThePath)
{
    const fs::path dir = savedFixture();
    auto json = nlohmann::json::parse(readWholeFile(dir / "cards.json").value());
    json["cards"][1].erase("call_count");
    ASSERT_TRUE(writeFileAtomically(dir / "cards.json", json.dump()).ok());
    auto opened = openProject(dir);
    ASSERT_FALSE(opened.ok());
    EXPECT_NE(opened.error().toString().find("cards[1]"), std::string::npos) << opened.error().toString();
    EXPECT_NE(opened.error().toString().find("call_count"), std::string::npos);
}

TEST_F(ProjectStoreTest, NewerFormatIsRefused)
{
    const fs::path dir = savedFixture();
    auto json = nlohmann::json::parse(readWholeFile(dir / "project.json").value());
    json["format_version"] = Project::kFormatVersion + 1;
    ASSERT_TRUE(writeFileAtomically(dir / "project.json", json.dump()).ok());
    auto opened = openProject(dir);
    ASSERT_FALSE(opened.ok());
    EXPECT_NE(opened.error().toString().find("newer Kernel Forge"), std::string::npos);
}

TEST_F(ProjectStoreTest, StagingRefusesExistingProjectsAndNonEmptyFolders)
{
    const fs::path dir = savedFixture();
    auto refused = beginStaging(dir);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, ErrorCode::AlreadyExists);
    EXPECT_NE(refused.error().toString().find("already holds a Kernel Forge project"), std::string::npos);

    fs::create_directories(m_root / "busy");
    std::ofstream(m_root / "busy" / "notes.txt") << "mine";
    auto busy = beginStaging(m_root / "busy");
    ASSERT_FALSE(busy.ok());
    EXPECT_NE(busy.error().toString().find("not empty"), std::string::npos);
    EXPECT_TRUE(fs::exists(m_root / "busy" / "notes.txt")); // nothing of the user's is touched

    std::ofstream(m_root / "file") << "x";
    EXPECT_FALSE(beginStaging(m_root / "file" / "child").ok());
}

TEST_F(ProjectStoreTest, StagingCommitsIntoAbsentOrEmptyFolder)
{
    for (const char* name : {"absent", "empty"}) {
        const fs::path target = m_root / name;
        if (std::string(name) == "empty")
            fs::create_directories(target);
        auto staging = beginStaging(target);
        ASSERT_TRUE(staging.ok()) << staging.error().toString();
        ASSERT_TRUE(saveProject(staging->path, test::makeFixtureProject()).ok());
        ASSERT_TRUE(commitStaging(staging->path, target).ok());
        EXPECT_FALSE(fs::exists(staging->path));
        EXPECT_TRUE(openProject(target).ok());
    }
}

// Found by the project file fuzzer (tests/fuzz): a header field of the wrong type threw out of
// openProject (std::terminate in the CLI and the app) instead of being refused.
TEST_F(ProjectStoreTest, HeaderFieldsOfTheWrongTypeAreRefusedNotThrown)
{
    const fs::path dir = savedFixture();
    const auto good = nlohmann::json::parse(readWholeFile(dir / "project.json").value());
    for (auto [field, value] :
         {std::pair{"format", nlohmann::json(1)}, std::pair{"format", nlohmann::json::array()},
          std::pair{"format_version", nlohmann::json(1ll << 40)}, std::pair{"format_version", nlohmann::json(-3)}}) {
        nlohmann::json header = good;
        header[field] = value;
        ASSERT_TRUE(writeFileAtomically(dir / "project.json", header.dump()).ok());
        auto opened = openProject(dir);
        ASSERT_FALSE(opened.ok()) << field << " = " << value.dump();
        EXPECT_NE(opened.error().toString().find("not a Kernel Forge project file"), std::string::npos)
            << opened.error().toString();
    }
}
