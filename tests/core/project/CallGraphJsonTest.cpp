// graph.json: the call graph saved beside the cards, read back strictly; older projects without it
// still open.

#include "project/ProjectJson.h"
#include "project/ProjectStore.h"
#include "util/AtomicFile.h"

#include "ScratchDir.h"
#include "TestProject.h"

#include <gtest/gtest.h>

#include <functional>

using namespace kforge::core;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The fixture's three calls: softmax(v0) -> v1; linear(v1, weight v2) (its card lists no output);
// softmax(v1) -> v3, the model output.
Project fixtureWithGraph()
{
    Project project = test::makeFixtureProject();
    CallGraph& graph = project.graph;
    graph.calls = {GraphCall{0, {{0}, {}, {}}, {1}, false}, GraphCall{1, {{1}, {2}}, {}, false},
                   GraphCall{0, {{1}, {}, {}}, {3}, false}};
    graph.valueProducers = {-1, 0, -1, 2};
    graph.modelOutputs = {3};
    return project;
}

class CallGraphJsonTest : public ::testing::Test {
protected:
    fs::path saved(const Project& project)
    {
        const fs::path dir = m_scratch.path() / "project";
        fs::create_directories(dir);
        EXPECT_TRUE(saveProject(dir, project).ok());
        return dir;
    }

    // Saves the fixture, rewrites graph.json with `edit` applied, and returns the open error.
    std::string openErrorAfter(const std::function<void(json&)>& edit)
    {
        const fs::path dir = saved(fixtureWithGraph());
        json graph = json::parse(readWholeFile(dir / "graph.json").value());
        edit(graph);
        EXPECT_TRUE(writeFileAtomically(dir / "graph.json", graph.dump()).ok());
        auto opened = openProject(dir);
        EXPECT_FALSE(opened.ok());
        return opened.ok() ? std::string() : opened.error().toString();
    }

    test::ScratchDir m_scratch;
};

} // namespace

TEST_F(CallGraphJsonTest, FixtureGraphIsConsistent)
{
    const Project project = fixtureWithGraph();
    EXPECT_EQ(project.graph.problem(project.cards), "");
}

TEST_F(CallGraphJsonTest, RoundTripsThroughGraphJson)
{
    const Project project = fixtureWithGraph();
    const fs::path dir = saved(project);
    ASSERT_TRUE(fs::exists(dir / "graph.json"));
    auto reopened = openProject(dir);
    ASSERT_TRUE(reopened.ok()) << reopened.error().toString();
    EXPECT_EQ(reopened->graph, project.graph);
    EXPECT_EQ(reopened.value(), project);
}

TEST_F(CallGraphJsonTest, ProjectWithoutGraphJsonStillOpens)
{
    const fs::path dir = saved(test::makeFixtureProject());
    EXPECT_FALSE(fs::exists(dir / "graph.json")); // an empty graph is not written
    auto reopened = openProject(dir);
    ASSERT_TRUE(reopened.ok()) << reopened.error().toString();
    EXPECT_TRUE(reopened->graph.empty());
}

TEST_F(CallGraphJsonTest, MalformedGraphIsOneClearError)
{
    std::string error = openErrorAfter([](json& g) { g["calls"][2]["inputs"][0][0] = 99; });
    EXPECT_NE(error.find("graph.json"), std::string::npos) << error;
    EXPECT_NE(error.find("call 2: input value 99 out of range"), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;

    error = openErrorAfter([](json& g) { g["calls"][0]["card"] = "softmax"; });
    EXPECT_NE(error.find("graph.json: calls[0]"), std::string::npos) << error;
    EXPECT_NE(error.find("field 'card' has the wrong type"), std::string::npos) << error;

    error = openErrorAfter([](json& g) { g["calls"][0]["card"] = 1; });
    EXPECT_NE(error.find("call 0: not among the call positions of its card"), std::string::npos) << error;

    error = openErrorAfter([](json& g) { g["value_producers"][3] = 0; });
    EXPECT_NE(error.find("output value 3 has another producer"), std::string::npos) << error;

    error = openErrorAfter([](json& g) { g["calls"][1]["inputs"] = json::array({json::array({1})}); });
    EXPECT_NE(error.find("call 1: has 1 arguments, its card 2"), std::string::npos) << error;

    error = openErrorAfter([](json& g) { g["calls"][0]["outputs"] = json::array({1.5}); });
    EXPECT_NE(error.find("holds something other than a 32-bit integer"), std::string::npos) << error;

    error = openErrorAfter([](json& g) { g["format_version"] = 7; });
    EXPECT_NE(error.find("format_version 7"), std::string::npos) << error;

    error = openErrorAfter([](json& g) { g.erase("model_outputs"); });
    EXPECT_NE(error.find("model_outputs"), std::string::npos) << error;
}

TEST_F(CallGraphJsonTest, DamagedGraphJsonNamesTheFile)
{
    const fs::path dir = saved(fixtureWithGraph());
    ASSERT_TRUE(writeFileAtomically(dir / "graph.json", "{\"calls\": [").ok());
    auto opened = openProject(dir);
    ASSERT_FALSE(opened.ok());
    EXPECT_NE(opened.error().toString().find("graph.json"), std::string::npos) << opened.error().toString();
    EXPECT_NE(opened.error().toString().find("damaged JSON"), std::string::npos) << opened.error().toString();
}
