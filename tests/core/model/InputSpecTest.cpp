#include "model/InputSpec.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace kforge::core;

TEST(InputSpec, ParsesDimsAndDefaultsToFloat32)
{
    auto spec = parseShapeSpec("8x3x224x224");
    ASSERT_TRUE(spec.ok()) << spec.error().toString();
    EXPECT_EQ(spec->sizes, (std::vector<std::int64_t>{8, 3, 224, 224}));
    EXPECT_EQ(spec->dtype, "float32");
    EXPECT_FALSE(spec->low.has_value());
}

TEST(InputSpec, ParsesDtypeAliases)
{
    EXPECT_EQ(parseShapeSpec("4x4:fp16")->dtype, "float16");
    EXPECT_EQ(parseShapeSpec("4x4:bf16")->dtype, "bfloat16");
    EXPECT_EQ(parseShapeSpec("4x4:long")->dtype, "int64");
    EXPECT_EQ(parseShapeSpec("7:bool")->dtype, "bool");
}

TEST(InputSpec, ParsesIntegerRange)
{
    auto spec = parseShapeSpec("4x512:int64[0,32000)");
    ASSERT_TRUE(spec.ok()) << spec.error().toString();
    EXPECT_EQ(spec->dtype, "int64");
    EXPECT_EQ(*spec->low, 0);
    EXPECT_EQ(*spec->high, 32000);
    EXPECT_EQ(spec->toString(), "4x512:int64[0,32000)");
}

TEST(InputSpec, RejectsMalformedSpecsWithTheSpecNamed)
{
    for (const char* bad : {"", "8xx3", "8x-3", "8x3:float17", "8x3:int64[5,1)", "8x3:int64[0,10]", "8x3:int64[a,b)",
                            "8x3:bool[0,2)", ":float32"}) {
        auto spec = parseShapeSpec(bad);
        ASSERT_FALSE(spec.ok()) << bad;
        EXPECT_EQ(spec.error().code, ErrorCode::InvalidArgument);
        EXPECT_NE(spec.error().toString().find(std::string("'") + bad + "'"), std::string::npos)
            << spec.error().toString();
    }
}

TEST(InputSpec, OneExistingFileMeansTorchSaveInputs)
{
    const auto path = std::filesystem::temp_directory_path() / "kforge_inputspec_test.pt";
    std::ofstream(path) << "x";
    auto spec = parseInputSpec({path.string()});
    ASSERT_TRUE(spec.ok()) << spec.error().toString();
    ASSERT_TRUE(spec->file.has_value());
    EXPECT_EQ(*spec->file, path.string());
    std::filesystem::remove(path);
}

TEST(InputSpec, MissingFileIsNotFound)
{
    auto spec = parseInputSpec({"/nonexistent/inputs.pt"});
    ASSERT_FALSE(spec.ok());
    EXPECT_EQ(spec.error().code, ErrorCode::NotFound);
    EXPECT_NE(spec.error().toString().find("/nonexistent/inputs.pt"), std::string::npos);
}

TEST(InputSpec, SeveralShapeSpecs)
{
    auto spec = parseInputSpec({"2x5:int64[0,100)", "2x5x1"});
    ASSERT_TRUE(spec.ok()) << spec.error().toString();
    ASSERT_EQ(spec->shapes.size(), 2u);
    EXPECT_EQ(spec->toString(), "2x5:int64[0,100) 2x5x1:float32");
}

TEST(InputSpec, NoValuesIsAnError)
{
    EXPECT_FALSE(parseInputSpec({}).ok());
}
