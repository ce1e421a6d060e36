// The source policy (KernelSourcePolicy.h): what a candidate may not contain because NVRTC would read
// the host for it, each bypass of the directive scanner, and the sources the project itself writes.

#include "KernelTestSupport.h"

#include "kernel/KernelSourcePolicy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#ifndef KFORGE_SOURCE_ROOT
#error "KFORGE_SOURCE_ROOT must name the repository root (set by tests/core/kernel/CMakeLists.txt)"
#endif

namespace kforge::core {
namespace {

const std::string kKernel = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n";

// Expects a refusal on `line` whose reason contains `words`.
void expectRefused(const std::string& source, int line, const std::string& words)
{
    SCOPED_TRACE(source.size() < 300 ? source : source.substr(0, 300));
    const std::optional<SourcePolicyViolation> violation = checkKernelSource(source);
    ASSERT_TRUE(violation.has_value());
    EXPECT_EQ(violation->line, line) << violation->reason;
    EXPECT_NE(violation->reason.find(words), std::string::npos) << violation->reason;
    EXPECT_EQ(violation->reason.find('\n'), std::string::npos) << violation->reason;
}

void expectAccepted(const std::string& source)
{
    const std::optional<SourcePolicyViolation> violation = checkKernelSource(source);
    EXPECT_FALSE(violation.has_value()) << "line " << violation->line << ": " << violation->reason << "\n" << source;
}

TEST(KernelSourcePolicy, IncludeOfAHostFileIsRefusedOnItsLine)
{
    const std::string source =
        "/*kforge-plan {} */\n#include <cuda_bf16.h>\n#include \"/proc/self/environ\"\n" + kKernel;
    expectRefused(source, 3, "#include \"/proc/self/environ\" is not an allowed header (allowed: cuda_fp16.h");
    EXPECT_EQ(checkKernelSource(source)->column, 1);
}

TEST(KernelSourcePolicy, PathsOutOfTheToolkitAreRefused)
{
    expectRefused("#include <../../../../etc/shadow>\n", 1, "<../../../../etc/shadow> is not an allowed header");
    expectRefused("#include <cuda/../../../../etc/shadow>\n", 1, "is not an allowed header");
    expectRefused("#include <cub/./../x>\n", 1, "is not an allowed header");
    expectRefused("#include </usr/local/cuda/include/cuda_fp16.h>\n", 1, "is not an allowed header");
    expectRefused("#include <cub//block/block_reduce.cuh>\n", 1, "is not an allowed header");
    expectRefused("#include <cuda\\std>\n", 1, "is not an allowed header");
    expectRefused("#include <cstdint>\n", 1, "<cstdint> is not an allowed header");
    expectRefused("#include <thrust/device_vector.h>\n", 1, "is not an allowed header");
    expectRefused("#include <cuda_fp16.h/..>\n", 1, "is not an allowed header");
    expectRefused("#include <cuda_fp16.h\n", 1, "unterminated header name");
    expectRefused("#include <cuda_fp16.h> extra\n", 1, "followed by more text");
    expectRefused("#include\n", 1, "without a header name");
}

TEST(KernelSourcePolicy, TheContractsHeadersAreAllowed)
{
    for (const char* name :
         {"cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h", "cooperative_groups.h", "cooperative_groups/reduce.h", "mma.h",
          "cuda_pipeline.h", "cuda_awbarrier.h", "cuda_runtime.h", "math_constants.h", "cub/block/block_reduce.cuh",
          "cub/cub.cuh", "cuda/std/cstdint", "cuda/barrier", "nv/target"}) {
        EXPECT_TRUE(isAllowedKernelHeader(name)) << name;
        expectAccepted(std::string("#include <") + name + ">\n" + kKernel);
        expectAccepted(std::string("#  include \"") + name + "\" // quoted works too\n" + kKernel);
    }
    for (const char* name : {"", "/cuda_fp16.h", "cuda_fp16.h ", "cuda_fp16.hpp", "cub", "cuda", "stdio.h",
                             "cuda/std/../../x", "nv/./target", "cooperative_groups"})
        EXPECT_FALSE(isAllowedKernelHeader(name)) << name;
}

TEST(KernelSourcePolicy, MacroExpandedIncludeIsRefused)
{
    expectRefused("#define H \"/etc/passwd\"\n#include H\n", 2, "#include of a macro or computed name");
    expectRefused("#include CUDA_HEADER\n", 1, "#include of a macro or computed name");
}

TEST(KernelSourcePolicy, IncludeAfterADefineIsRefused)
{
    // Some CCCL headers include a header named by a macro; a candidate's macro must not reach them.
    expectRefused("#include <cuda_fp16.h>\n#define system ../../../../proc/self\n#include <cub/cub.cuh>\n", 3,
                  "after the #define or #undef on line 2");
    expectRefused("#undef __CUDACC_RTC__\n#include <cuda_bf16.h>\n", 2, "after the #define or #undef on line 1");
    expectAccepted("#include <cuda_bf16.h>\n#include <cub/block/block_reduce.cuh>\n#define WARP 32\n#undef WARP\n" +
                   kKernel);
}

TEST(KernelSourcePolicy, DigraphSplicesAndCommentsDoNotHideADirective)
{
    expectRefused("%:include \"/etc/passwd\"\n", 1, "\"/etc/passwd\" is not an allowed header");
    expectRefused("  %: include </etc/passwd>\n", 1, "is not an allowed header");
    expectRefused("#inc\\\nlude \"/etc/passwd\"\n", 1, "\"/etc/passwd\" is not an allowed header");
    expectRefused("#\\\ninclude \"/etc/passwd\"\n", 1, "is not an allowed header");
    expectRefused("#include \"/etc/pa\\\r\nsswd\"\n", 1, "\"/etc/passwd\" is not an allowed header");
    expectRefused("#/* c */include \"/etc/passwd\"\n", 1, "is not an allowed header");
    expectRefused("# /* a comment\n spanning lines */ include \"/etc/passwd\"\n", 1, "is not an allowed header");
    expectRefused("/* a comment\n */ #include \"/etc/passwd\"\n", 2, "is not an allowed header");
    expectRefused("int a; /* x */\n\t #include \"/etc/passwd\"\n", 2, "is not an allowed header");
    expectRefused("#include /* c */ \"/etc/passwd\"\n", 1, "is not an allowed header");
    expectRefused("#if 0\n#include \"/etc/passwd\"\n#endif\n", 2, "is not an allowed header");
    // NVRTC reads a lone CR as a space (so "#<CR>include" is a directive): refused outright.
    expectRefused("int a;\r#include \"/etc/passwd\"\n", 1, "carriage return not followed by a line feed");
    expectRefused("#\rinclude \"/etc/passwd\"\n", 1, "carriage return not followed by a line feed");
    expectRefused(kKernel + "// ends with a CR\r", 2, "carriage return");
    expectRefused("#include <cuda_fp16.h>\r\n#include \"/etc/passwd\"\r\n", 2, "is not an allowed header");
    // Spliced into a comment or a directive's text, it is no directive, as NVRTC reads it.
    expectAccepted("// note \\\n#include \"/etc/passwd\"\n" + kKernel);
    expectAccepted("/*\n#include \"/etc/passwd\"\n*/\n" + kKernel);
    expectAccepted("const char* s = \"#include </etc/passwd>\";\n" + kKernel);
}

TEST(KernelSourcePolicy, FileProbesAndPragmaOperatorsAreRefused)
{
    expectRefused("#if __has_include(\"/etc/passwd\")\n#endif\n", 1, "__has_include is not allowed");
    expectRefused("#if defined(X) || __has_include_next(<x>)\n#endif\n", 1, "__has_include_next is not allowed");
    expectRefused("#define HI __has_include\n", 1, "__has_include is not allowed");
    expectRefused("#if __has_include__(\"/etc/passwd\")\n#endif\n", 1, "__has_include__ is not allowed");
    expectRefused("#if __has_embed(\"/etc/passwd\")\n#endif\n", 1, "__has_embed is not allowed");
    expectRefused(kKernel + "_Pragma(\"message(\\\"hi\\\")\")\n", 2, "_Pragma is not allowed");
    expectRefused("__pragma(once)\n", 1, "__pragma is not allowed");
    expectRefused("#define P _Pra\\\ngma\n", 1, "_Pragma is not allowed");
    // Token pasting could assemble either of them; pasting is refused wherever it is.
    expectRefused("#define P(a, b) a##b\n#if P(__has_, include)(\"/etc/passwd\")\n#endif\n", 1, "token pasting");
    expectRefused("#define P(a, b) a %:%: b\n", 1, "token pasting");
    expectRefused("## include\n", 1, "token pasting");
    // In a string, a character literal or a comment they are text.
    expectAccepted(kKernel + "__device__ const char* s = \"_Pragma(x) __has_include ## <<<\"; // _Pragma(\n");
    expectAccepted(kKernel + "__device__ char c = '#'; /* __has_include(<x>) */\n");
}

TEST(KernelSourcePolicy, LiteralsDoNotHideTokens)
{
    // A digit separator is no character literal; an escaped quote does not end a string.
    expectRefused("int x = 1'000'000; _Pragma(\"once\")\n", 1, "_Pragma is not allowed");
    expectRefused("const char* s = \"a\\\"b\"; _Pragma(\"once\")\n", 1, "_Pragma is not allowed");
    expectRefused("char c = '\"'; _Pragma(\"once\")\n", 1, "_Pragma is not allowed");
    expectRefused("char c = '\\''; _Pragma(\"once\")\n", 1, "_Pragma is not allowed");
    expectRefused("double d = 1e+5; _Pragma(\"once\")\n", 1, "_Pragma is not allowed");
    // A raw string's body could hold anything; it is refused rather than read as code.
    expectRefused("const char* s = R\"x(\" )x\" _Pragma(\"once\") \")x\";\n", 1, "raw string literals");
    expectRefused("auto s = u8R\"(a)\";\n", 1, "raw string literals");
    expectAccepted("#define FOOR \"x\"\n__device__ const char* s = FOOR\"y\";\n" + kKernel);
    // A universal character name or a stray backslash could spell an identifier we look for.
    expectRefused("_Pr\\u0061gma(\"once\")\n", 1, "backslash");
    expectRefused("int $x;\n", 1, "character '$'");
    expectRefused("int caf\xc3\xa9 = 1;\n", 1, "non-ASCII");
    expectRefused("/* open comment\n" + kKernel, 1, "unterminated /* comment");
    expectAccepted("// caf\xc3\xa9 \xe2\x80\x94 comments and strings may hold any UTF-8\n__device__ const char* s = "
                   "\"\xc3\xa9\";\n" +
                   kKernel);
}

TEST(KernelSourcePolicy, LineControlAndOtherDirectivesAreRefused)
{
    expectRefused("#line 1 \"/etc/passwd\"\n", 1, "#line is not allowed");
    expectRefused("# 33 \"/etc/passwd\"\n", 1, "line markers");
    expectRefused("#include_next <cuda_fp16.h>\n", 1, "#include_next is not allowed");
    expectRefused("#import <cuda_fp16.h>\n", 1, "#import is not allowed");
    expectRefused("#embed \"/etc/passwd\"\n", 1, "#embed is not allowed");
    expectRefused("#ident \"x\"\n", 1, "#ident is not allowed");
    expectRefused("#!x\n", 1, "is not a directive");
    expectAccepted("#\n#if 1\n#elif 2\n#else\n#endif\n#ifdef A\n#endif\n#ifndef B\n#endif\n" + kKernel);
    expectAccepted("#if 0\n#error don't stop here\n#endif\n" + kKernel);
}

TEST(KernelSourcePolicy, OnlyUnrollAndOncePragmasAreAllowed)
{
    expectRefused("#pragma include_alias(\"cuda_fp16.h\", \"/etc/passwd\")\n", 1,
                  "#pragma include_alias is not allowed");
    expectRefused("#pragma GCC dependency \"/etc/passwd\"\n", 1, "#pragma GCC is not allowed");
    expectRefused("#pragma push_macro(\"X\")\n", 1, "#pragma push_macro is not allowed");
    expectRefused("#pragma\n", 1, "this #pragma is not allowed");
    expectRefused("#pragma unroll \"4\"\n", 1, "takes a count");
    expectRefused("#pragma once x\n", 1, "takes no arguments");
    expectRefused("#pragma unroll __has_include(<x>)\n", 1, "__has_include is not allowed");
    expectAccepted(
        "#pragma once\n__device__ void f(float* x) {\n#pragma unroll\n    for (int i = 0; i < 4; ++i) x[i] = 0;\n"
        "#pragma unroll 4\n    for (int i = 0; i < 4; ++i) x[i] = 0;\n"
        "  # pragma unroll (2 * 2) // comment\n    for (int i = 0; i < 4; ++i) x[i] = 0;\n"
        "%:pragma nounroll\n    for (int i = 0; i < 4; ++i) x[i] = 0;\n}\n");
}

TEST(KernelSourcePolicy, SizeEncodingAndTrigraphs)
{
    std::string big = kKernel;
    big += "//" + std::string(kMaxKernelSourceBytes - big.size() - 3, 'x') + "\n";
    ASSERT_EQ(big.size(), kMaxKernelSourceBytes);
    expectAccepted(big);
    big += "\n";
    const std::optional<SourcePolicyViolation> tooBig = checkKernelSource(big);
    ASSERT_TRUE(tooBig.has_value());
    EXPECT_EQ(tooBig->line, 0);
    EXPECT_EQ(tooBig->reason, "the source is 262145 bytes; the limit is 262144 (256 KiB)");

    expectRefused(kKernel + std::string("int a;\0 #include \"/etc/passwd\"\n", 31), 2, "NUL byte");
    expectRefused(kKernel + "// \xff\n", 2, "not valid UTF-8");
    expectRefused(kKernel + "// \xc0\xaf overlong\n", 2, "not valid UTF-8");
    expectRefused(kKernel + "// \xed\xa0\x80 surrogate\n", 2, "not valid UTF-8");
    expectRefused(kKernel + "// \xf4\x90\x80\x80 above U+10FFFF\n", 2, "not valid UTF-8");
    expectRefused(kKernel + "// cut \xe2\x80", 2, "not valid UTF-8");
    expectRefused("?"
                  "?=include \"/etc/passwd\"\n",
                  1,
                  "trigraph '?"
                  "?='");
    expectRefused(kKernel +
                      "// what?"
                      "?/\n",
                  2, "trigraph");
    const std::optional<SourcePolicyViolation> bad = checkKernelSource("int a;\n  x \xff");
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->column, 5);
}

TEST(KernelSourcePolicy, DeviceSideLaunchIsRefused)
{
    expectRefused("__global__ void child() {}\nextern \"C\" __global__ void k() { child<<<1, 1>>>(); }\n", 2,
                  "device-side kernel launches");
    expectAccepted("__device__ int f(int a) { return (a << 2) < 3; } // child<<<1, 1>>>()\n" + kKernel);
}

TEST(KernelSourcePolicy, RefusalIsAFailedCompileWithTheReasonOnItsLine)
{
    const SourcePolicyViolation violation{3, 1, "#include \"/proc/self/environ\" is not an allowed header"};
    const CompiledKernel kernel = refusedCompile(violation, "edit.cu");
    EXPECT_FALSE(kernel.ok);
    EXPECT_TRUE(kernel.cubin.empty());
    EXPECT_TRUE(kernel.ptx.empty());
    ASSERT_EQ(kernel.diagnostics.size(), 1u);
    EXPECT_EQ(kernel.diagnostics[0],
              (Diagnostic{"edit.cu", 3, 1, DiagnosticSeverity::Error,
                          "refused before compiling: #include \"/proc/self/environ\" is not an allowed header"}));
    EXPECT_EQ(kernel.log,
              "edit.cu(3): error: refused before compiling: #include \"/proc/self/environ\" is not an "
              "allowed header\n");
}

std::string readFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Every kernel the repository ships as a file (tests/**/*.cu, examples/**) and the kernels the kernel
// tests compile pass the policy. (The built-in proposer's sources are compiled through the policy by
// tests/core/builtin, which fails on any refusal, and checked here by KernelSourcePolicyBuiltinTest.)
TEST(KernelSourcePolicy, TheRepositorysKernelsAreAccepted)
{
    const std::filesystem::path root = KFORGE_SOURCE_ROOT;
    int files = 0;
    for (const char* folder : {"tests", "examples"}) {
        if (!std::filesystem::exists(root / folder))
            continue;
        for (const auto& entry : std::filesystem::recursive_directory_iterator(root / folder)) {
            const std::string ext = entry.path().extension().string();
            if (!entry.is_regular_file() || (ext != ".cu" && ext != ".cuh"))
                continue;
            SCOPED_TRACE(entry.path().string());
            expectAccepted(readFile(entry.path()));
            ++files;
        }
    }
    EXPECT_GE(files, 9); // tests/gpu/kernels
    expectAccepted(test::addKernel());
    expectAccepted(test::softmaxKernel());
    expectAccepted(test::cubSoftmaxKernel());
}

} // namespace
} // namespace kforge::core
