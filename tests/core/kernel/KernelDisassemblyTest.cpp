// disassembleCubin on a cubin NVRTC made: the SASS names the kernel and holds its instructions; a
// cubin nvdisasm cannot read and a missing nvdisasm are one-line errors. Skipped (visibly) where no
// nvdisasm is installed; the build points KFORGE_NVDISASM at Triton's copy when the bootstrap's
// Python has one.

#include "KernelTestSupport.h"

#include "kernel/KernelDisassembly.h"
#include "kernel/NvrtcCompiler.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace kforge::core {
namespace {

TEST(KernelDisassembly, SassOfACompiledKernelNamesItAndItsInstructions)
{
    if (findNvdisasm().empty())
        GTEST_SKIP() << "no nvdisasm (CUDA toolkit, or KFORGE_NVDISASM)";
    const NvrtcCompiler compiler;
    Result<CompiledKernel> kernel = compiler.compile(test::addKernel("kforge_add"), CompileOptions{});
    ASSERT_TRUE(kernel && kernel->ok);
    Result<std::string> sass = disassembleCubin(kernel->cubin);
    ASSERT_TRUE(sass) << sass.error().toString();
    EXPECT_NE(sass->find(".text.kforge_add"), std::string::npos) << *sass;
    EXPECT_NE(sass->find("LDG.E"), std::string::npos) << *sass; // the loads of a and b
    EXPECT_NE(sass->find("EXIT"), std::string::npos) << *sass;
}

TEST(KernelDisassembly, UnreadableCubinIsOneLineError)
{
    if (findNvdisasm().empty())
        GTEST_SKIP() << "no nvdisasm (CUDA toolkit, or KFORGE_NVDISASM)";
    const std::vector<std::uint8_t> garbage = {'n', 'o', 't', ' ', 'e', 'l', 'f', '\n'};
    Result<std::string> sass = disassembleCubin(garbage);
    ASSERT_FALSE(sass);
    EXPECT_EQ(sass.error().code, ErrorCode::Internal);
    EXPECT_NE(sass.error().message.find("nvdisasm failed"), std::string::npos) << sass.error().message;
    EXPECT_EQ(sass.error().message.find('\n'), std::string::npos) << sass.error().message;
}

TEST(KernelDisassembly, MissingNvdisasmSaysHowToGetIt)
{
    const char* saved = std::getenv("KFORGE_NVDISASM");
    const std::string restore = saved ? saved : "";
    ::setenv("KFORGE_NVDISASM", "/nonexistent/nvdisasm", 1);
    EXPECT_EQ(findNvdisasm(), "");
    Result<std::string> sass = disassembleCubin({0x7f, 'E', 'L', 'F'});
    ASSERT_FALSE(sass);
    EXPECT_EQ(sass.error().code, ErrorCode::Unsupported);
    EXPECT_NE(sass.error().message.find("install the CUDA toolkit"), std::string::npos);
    EXPECT_FALSE(disassembleCubin({}));
    if (saved)
        ::setenv("KFORGE_NVDISASM", restore.c_str(), 1);
    else
        ::unsetenv("KFORGE_NVDISASM");
}

} // namespace
} // namespace kforge::core

namespace kforge::core {
namespace {

TEST(KernelDisassembly, ListingOfABrokenSourceSaysWhereItFails)
{
    const NvrtcCompiler compiler;
    const KernelListing listing =
        kernelListing(compiler, "extern \"C\" __global__ void k() { undefinedName = 1; }\n", "sm_90");
    EXPECT_TRUE(listing.ptx.empty());
    EXPECT_TRUE(listing.sass.empty());
    EXPECT_NE(listing.problem.find("does not compile for sm_90: line 1"), std::string::npos) << listing.problem;
}

TEST(KernelDisassembly, ListingHasThePtxAndWithNvdisasmTheSass)
{
    const NvrtcCompiler compiler;
    const KernelListing listing = kernelListing(compiler, test::addKernel("kforge_add"), "sm_90");
    EXPECT_NE(listing.ptx.find(".visible .entry kforge_add("), std::string::npos);
    if (findNvdisasm().empty()) {
        EXPECT_NE(listing.problem.find("nvdisasm not found"), std::string::npos) << listing.problem;
        GTEST_SKIP() << "no nvdisasm: the SASS half is not checked";
    }
    EXPECT_NE(listing.sass.find("kforge_add:"), std::string::npos);
    EXPECT_TRUE(listing.problem.empty()) << listing.problem;
}

} // namespace
} // namespace kforge::core
