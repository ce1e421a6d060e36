// The source policy where compiles happen: NvrtcCompiler::compile refuses before NVRTC runs, the
// refusal is a failed compile with its reason (what the search node and `kforge bench` show), the
// compile cache keeps only that, and an allowed header is never read from the working directory.

#include "KernelTestSupport.h"

#include "kernel/CachingCompiler.h"
#include "kernel/NvrtcCompiler.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace kforge::core {
namespace {

const std::string kSecretValue = "kforge-policy-test-secret-7f3a9c";

// Puts a recognisable value into this process's environment for the length of a test.
class SecretInEnvironment {
public:
    SecretInEnvironment() { ::setenv("KFORGE_POLICY_TEST_SECRET", kSecretValue.c_str(), 1); }
    ~SecretInEnvironment() { ::unsetenv("KFORGE_POLICY_TEST_SECRET"); }
};

// Changes the working directory for the length of a test.
class WorkingDirectory {
public:
    explicit WorkingDirectory(const std::filesystem::path& dir) : m_previous(std::filesystem::current_path())
    {
        std::filesystem::current_path(dir);
    }
    ~WorkingDirectory() { std::filesystem::current_path(m_previous); }

private:
    std::filesystem::path m_previous;
};

std::string readFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(SourcePolicyCompile, IncludeOfProcSelfEnvironIsRefusedBeforeNvrtcReadsIt)
{
    const SecretInEnvironment secret;
    const std::string source = "/*kforge-plan {\"launches\": []} */\n"
                               "#include <cuda_bf16.h>\n"
                               "#include \"/proc/self/environ\"\n" +
        test::addKernel();
    test::ScratchDir dir("cache");
    CachingCompiler compiler(dir.path());
    Result<CompiledKernel> kernel = compiler.compile(source, CompileOptions{}, "candidate.cu");
    ASSERT_TRUE(kernel) << kernel.error().toString();
    EXPECT_FALSE(kernel->ok);
    EXPECT_TRUE(kernel->cubin.empty());
    EXPECT_TRUE(kernel->ptx.empty());
    EXPECT_EQ(kernel->log.find(kSecretValue), std::string::npos) << kernel->log;
    ASSERT_EQ(kernel->diagnostics.size(), 1u) << kernel->log;
    const Diagnostic& d = kernel->diagnostics[0];
    EXPECT_EQ(d.file, "candidate.cu");
    EXPECT_EQ(d.line, 3);
    EXPECT_EQ(d.column, 1);
    EXPECT_EQ(d.severity, DiagnosticSeverity::Error);
    EXPECT_EQ(d.message.rfind("refused before compiling: #include \"/proc/self/environ\" is not an allowed header", 0),
              0u)
        << d.message;
    EXPECT_EQ(kernel->compileMs, 0.0);
    EXPECT_EQ(kernel->cacheKey, compiler.compiler().cacheKey(source, CompileOptions{}).value());

    // The refusal is what the cache keeps (memory and disk), and a hit says the same.
    const std::string stored = readFile(compiler.cache().jsonPath(kernel->cacheKey));
    EXPECT_NE(stored.find("refused before compiling"), std::string::npos) << stored;
    EXPECT_EQ(stored.find(kSecretValue), std::string::npos);
    Result<CompiledKernel> again = compiler.compile(source, CompileOptions{}, "candidate.cu");
    ASSERT_TRUE(again);
    EXPECT_TRUE(again->fromCache);
    EXPECT_EQ(again->diagnostics, kernel->diagnostics);
}

TEST(SourcePolicyCompile, EveryBypassIsAFailedCompileNotAnError)
{
    const SecretInEnvironment secret;
    const NvrtcCompiler compiler;
    for (const std::string& source : {
             std::string("#include </proc/self/environ>\n"),
             std::string("#include <../../../../../../../../proc/self/environ>\n"),
             std::string("#define E \"/proc/self/environ\"\n#include E\n"),
             std::string("%:include \"/proc/self/environ\"\n"),
             std::string("#inc\\\nlude \"/proc/self/environ\"\n"),
             std::string("#if __has_include(\"/proc/self/environ\")\n#error leaked\n#endif\n"),
             std::string("_Pragma(\"once\")\n"),
             std::string("#line 7 \"/proc/self/environ\"\n"),
             std::string(300 * 1024, ' '),
             std::string("int a = 1; // \xff\xfe\n"),
         }) {
        SCOPED_TRACE(source.substr(0, 80));
        Result<CompiledKernel> kernel = compiler.compile(source + test::addKernel(), CompileOptions{});
        ASSERT_TRUE(kernel) << kernel.error().toString();
        EXPECT_FALSE(kernel->ok);
        ASSERT_EQ(kernel->diagnostics.size(), 1u) << kernel->log;
        EXPECT_EQ(kernel->diagnostics[0].message.rfind("refused before compiling: ", 0), 0u)
            << kernel->diagnostics[0].message;
        EXPECT_EQ(kernel->log.find(kSecretValue), std::string::npos);
    }
}

// NVRTC looks a quoted #include up next to the source first, which for an in-memory source is the
// process's working directory; --no-source-include turns that off. An allowed name in the quoted
// form must still come from the toolkit.
TEST(SourcePolicyCompile, QuotedAllowedHeaderIsNeverTakenFromTheWorkingDirectory)
{
    test::ScratchDir dir("cwd");
    test::writeText(dir.path() / "cuda_fp16.h", "#error taken from the working directory\n");
    std::filesystem::create_directories(dir.path() / "cub");
    test::writeText(dir.path() / "cub" / "cub.cuh", "#error taken from the working directory\n");
    const WorkingDirectory cwd(dir.path());
    const std::string source = "#include \"cuda_fp16.h\"\n"
                               "extern \"C\" __global__ void k(__half* x) { x[0] = __float2half(1.0f); }\n";
    Result<CompiledKernel> kernel = NvrtcCompiler().compile(source, CompileOptions{});
    ASSERT_TRUE(kernel) << kernel.error().toString();
    EXPECT_TRUE(kernel->ok) << kernel->log;
    EXPECT_EQ(kernel->log.find("working directory"), std::string::npos) << kernel->log;

    // Also under a source name with a folder (kforge bench names a source after its file).
    Result<CompiledKernel> named = NvrtcCompiler().compile(source, CompileOptions{}, (dir.path() / "k.cu").string());
    ASSERT_TRUE(named) << named.error().toString();
    EXPECT_TRUE(named->ok) << named->log;
}

} // namespace
} // namespace kforge::core
