// parseNvrtcLog on literal NVRTC 13 logs (copied from real runs) and on logs NVRTC produces now.

#include "KernelTestSupport.h"

#include "kernel/NvrtcCompiler.h"
#include "kernel/NvrtcDiagnostics.h"

#include <gtest/gtest.h>
#include <nvrtc.h>

#include <vector>

namespace kforge::core {
namespace {

using test::columnOf;

// NVRTC's log for `source` compiled with exactly `options` (no source policy, no redaction).
std::string rawNvrtcLog(const std::string& source, const std::vector<std::string>& options)
{
    nvrtcProgram program = nullptr;
    if (nvrtcCreateProgram(&program, source.c_str(), "candidate.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
        return "nvrtcCreateProgram failed";
    std::vector<const char*> argv;
    for (const std::string& option : options)
        argv.push_back(option.c_str());
    nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
    std::size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    nvrtcDestroyProgram(&program);
    while (!log.empty() && log.back() == '\0')
        log.pop_back();
    return log;
}

TEST(NvrtcDiagnosticsLiteral, ErrorsWithCaretsAndTabs)
{
    // Real NVRTC 13.0 output: two errors (one on a tab-indented line) and a warning with a code.
    const std::string log = "candidate.cu(3): error: identifier \"foo\" is undefined\n"
                            "    x[0] = foo;\n"
                            "           ^\n"
                            "\n"
                            "candidate.cu(4): error: identifier \"bar\" is undefined\n"
                            "  \t\tx[1] = bar + 1;\n"
                            "  \t\t       ^\n"
                            "\n"
                            "candidate.cu(2): warning #177-D: variable \"y\" was declared but never referenced\n"
                            "  \tint y;\n"
                            "  \t    ^\n"
                            "\n"
                            "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n"
                            "\n"
                            "2 errors detected in the compilation of \"candidate.cu\".\n";
    const std::vector<Diagnostic> d = parseNvrtcLog(log);
    ASSERT_EQ(d.size(), 3u);
    EXPECT_EQ(d[0], (Diagnostic{"candidate.cu", 3, 10, DiagnosticSeverity::Error, "identifier \"foo\" is undefined"}));
    // Source line "\t\tx[1] = bar + 1;": 'b' is the 10th character (a tab counts one).
    EXPECT_EQ(d[1], (Diagnostic{"candidate.cu", 4, 10, DiagnosticSeverity::Error, "identifier \"bar\" is undefined"}));
    EXPECT_EQ(d[2],
              (Diagnostic{"candidate.cu", 2, 6, DiagnosticSeverity::Warning,
                          "variable \"y\" was declared but never referenced [#177-D]"}));
}

TEST(NvrtcDiagnosticsLiteral, IncludeFileCatastrophicAndSummaryLines)
{
    const std::string log = "/tmp/inc/myhdr.cuh(3): error: identifier \"undefined_thing\" is undefined\n"
                            "    return undefined_thing;\n"
                            "           ^\n"
                            "\n"
                            "candidate.cu(4): catastrophic error: #error directive: stop here\n"
                            "  #error stop here\n"
                            "   ^\n"
                            "\n"
                            " and 1 catastrophic error detected in the compilation of \"candidate.cu\".\n"
                            "Compilation terminated.\n";
    const std::vector<Diagnostic> d = parseNvrtcLog(log);
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d[0],
              (Diagnostic{"/tmp/inc/myhdr.cuh", 3, 10, DiagnosticSeverity::Error,
                          "identifier \"undefined_thing\" is undefined"}));
    EXPECT_EQ(d[1], (Diagnostic{"candidate.cu", 4, 2, DiagnosticSeverity::Error, "#error directive: stop here"}));
}

TEST(NvrtcDiagnosticsLiteral, ContextLinesNotesAndEndOfSource)
{
    const std::string log =
        "candidate.cu(1): error: expression must have class type but it has type \"float\"\n"
        "  template <class T> __device__ T f(T a) { return a.nope; }\n"
        "                                                  ^\n"
        "          detected during instantiation of \"T f(T) [with T=float]\" at line 3\n"
        "\n"
        "candidate.cu(5): error: no instance of overloaded function \"g\" matches the argument list\n"
        "            argument types are: (int *)\n"
        "    g(p);\n"
        "    ^\n"
        "\n"
        "At end of source: error: expected a \"}\"\n"
        "candidate.cu(1): note #3196-D: to match this \"{\"\n"
        "  extern \"C\" __global__ void k(float* x) {\n"
        "                                         ^\n"
        "\n"
        "3 errors detected in the compilation of \"candidate.cu\".\n";
    const std::vector<Diagnostic> d = parseNvrtcLog(log);
    ASSERT_EQ(d.size(), 4u);
    EXPECT_EQ(d[0],
              (Diagnostic{"candidate.cu", 1, 49, DiagnosticSeverity::Error,
                          "expression must have class type but it has type \"float\"\n"
                          "detected during instantiation of \"T f(T) [with T=float]\" at line 3"}));
    EXPECT_EQ(d[1],
              (Diagnostic{"candidate.cu", 5, 3, DiagnosticSeverity::Error,
                          "no instance of overloaded function \"g\" matches the argument list\n"
                          "argument types are: (int *)"}));
    EXPECT_EQ(d[2], (Diagnostic{"", 0, 0, DiagnosticSeverity::Error, "expected a \"}\" (at end of source)"}));
    EXPECT_EQ(d[3],
              (Diagnostic{"candidate.cu", 1, 40, DiagnosticSeverity::Remark, "note: to match this \"{\" [#3196-D]"}));
}

TEST(NvrtcDiagnosticsLiteral, LocationlessNvrtcAndPtxasLines)
{
    EXPECT_EQ(parseNvrtcLog("nvrtc: error: invalid value for --gpu-architecture (-arch)\n"),
              (std::vector<Diagnostic>{
                  {"", 0, 0, DiagnosticSeverity::Error, "invalid value for --gpu-architecture (-arch)"}}));

    const std::string ptxas =
        "ptxas error   : Entry function 'k' uses too much shared data (0x61a80 bytes, 0xc000 max)\n"
        "ptxas info    : Function properties for k\n"
        "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas warning : Registers are spilled to local memory in function 'k'\n";
    const std::vector<Diagnostic> d = parseNvrtcLog(ptxas);
    // The resource report (Function properties ..., the stack frame line) is no diagnostic:
    // kernel/PtxasResources.h reads it.
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d[0],
              (Diagnostic{"", 0, 0, DiagnosticSeverity::Error,
                          "ptxas: Entry function 'k' uses too much shared data (0x61a80 bytes, 0xc000 max)"}));
    EXPECT_EQ(d[1].severity, DiagnosticSeverity::Warning);
}

TEST(NvrtcDiagnosticsLiteral, BriefDiagnosticsRemarksCrLfAndOddFileNames)
{
    // -brief-diag=true: no echo, no blank lines between entries.
    const std::string brief = "candidate.cu(2): warning #177-D: variable \"y\" was declared but never referenced\r\n"
                              "my (copy).cu(7): remark #1234: something to note\r\n"
                              "candidate.cu(9): fatal error: out of luck\r\n"
                              "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\r\n";
    const std::vector<Diagnostic> d = parseNvrtcLog(brief);
    ASSERT_EQ(d.size(), 3u);
    EXPECT_EQ(d[0],
              (Diagnostic{"candidate.cu", 2, 0, DiagnosticSeverity::Warning,
                          "variable \"y\" was declared but never referenced [#177-D]"}));
    EXPECT_EQ(d[1], (Diagnostic{"my (copy).cu", 7, 0, DiagnosticSeverity::Remark, "something to note [#1234]"}));
    EXPECT_EQ(d[2], (Diagnostic{"candidate.cu", 9, 0, DiagnosticSeverity::Error, "out of luck"}));
}

TEST(NvrtcDiagnosticsLiteral, NothingToReport)
{
    EXPECT_TRUE(parseNvrtcLog("").empty());
    EXPECT_TRUE(parseNvrtcLog(std::string("\0", 1)).empty());
    EXPECT_TRUE(
        parseNvrtcLog("1 error detected in the compilation of \"candidate.cu\".\nCompilation terminated.\n").empty());
    // An echoed source line that looks like a header is not one (it is indented).
    EXPECT_TRUE(parseNvrtcLog("  foo.cu(3): error: not a header\n").empty());
}

// --- Logs produced by NVRTC now --------------------------------------------------------------------

const Diagnostic* firstOf(const CompiledKernel& kernel, DiagnosticSeverity severity)
{
    for (const Diagnostic& d : kernel.diagnostics) {
        if (d.severity == severity)
            return &d;
    }
    return nullptr;
}

TEST(NvrtcDiagnosticsReal, UndefinedIdentifierOnKnownLineAndColumn)
{
    const std::string source = "extern \"C\" __global__ void scale(float* x, int n) {\n"
                               "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                               "    if (i < n) x[i] = x[i] * undefinedFactor;\n"
                               "}\n";
    Result<CompiledKernel> kernel = NvrtcCompiler().compile(source, CompileOptions{});
    ASSERT_TRUE(kernel) << kernel.error().toString();
    EXPECT_FALSE(kernel->ok);
    EXPECT_TRUE(kernel->cubin.empty());
    ASSERT_EQ(kernel->diagnostics.size(), 1u) << kernel->log;
    EXPECT_EQ(kernel->diagnostics[0],
              (Diagnostic{"candidate.cu", 3, columnOf(source, 3, "undefinedFactor"), DiagnosticSeverity::Error,
                          "identifier \"undefinedFactor\" is undefined"}));
    EXPECT_EQ(kernel->diagnostics[0].column, 30);
}

TEST(NvrtcDiagnosticsReal, TabsAndMultibyteCharactersBeforeTheError)
{
    // Tab-indented, with a two-byte UTF-8 character in a comment before the error.
    const std::string source = "extern \"C\" __global__ void k(float* x) {\n"
                               "\t\t/* \xc3\xa9 */ x[0] = missingName;\n"
                               "}\n";
    Result<CompiledKernel> kernel = NvrtcCompiler().compile(source, CompileOptions{}, "tabs.cu");
    ASSERT_TRUE(kernel) << kernel.error().toString();
    ASSERT_FALSE(kernel->ok);
    const Diagnostic* error = firstOf(*kernel, DiagnosticSeverity::Error);
    ASSERT_NE(error, nullptr) << kernel->log;
    EXPECT_EQ(error->file, "tabs.cu");
    EXPECT_EQ(error->line, 2);
    EXPECT_EQ(error->column, columnOf(source, 2, "missingName")); // a byte column; tabs count one
}

TEST(NvrtcDiagnosticsReal, WarningKeepsTheCompileOk)
{
    const std::string source = "extern \"C\" __global__ void k(float* x) {\n"
                               "    int unusedValue;\n"
                               "    x[threadIdx.x] = 1.0f;\n"
                               "}\n";
    Result<CompiledKernel> kernel = NvrtcCompiler().compile(source, CompileOptions{});
    ASSERT_TRUE(kernel) << kernel.error().toString();
    EXPECT_TRUE(kernel->ok);
    EXPECT_FALSE(kernel->cubin.empty());
    EXPECT_EQ(firstOf(*kernel, DiagnosticSeverity::Error), nullptr);
    const Diagnostic* warning = firstOf(*kernel, DiagnosticSeverity::Warning);
    ASSERT_NE(warning, nullptr) << kernel->log;
    EXPECT_EQ(warning->line, 2);
    EXPECT_EQ(warning->column, columnOf(source, 2, "unusedValue"));
    EXPECT_EQ(warning->message, "variable \"unusedValue\" was declared but never referenced [#177-D]");
}

TEST(NvrtcDiagnosticsReal, ErrorInsideAnIncludedHeader)
{
    // NvrtcCompiler refuses any header but the CUDA toolkit's (KernelSourcePolicy.h), so the log of a
    // header of our own comes from NVRTC directly; the parser must still read it.
    test::ScratchDir dir("include");
    const std::string header = "#pragma once\n"
                               "__device__ inline float helper(float v) {\n"
                               "    return v * notDeclaredAnywhere;\n"
                               "}\n";
    test::writeText(dir.path() / "broken_helper.cuh", header);
    const std::string source = "#include \"broken_helper.cuh\"\n"
                               "extern \"C\" __global__ void k(float* x) { x[0] = helper(x[0]); }\n";
    const std::string log = rawNvrtcLog(
        source,
        {"--gpu-architecture=sm_90", "--std=c++17", "-default-device", "--include-path=" + dir.path().string()});
    const std::vector<Diagnostic> diagnostics = parseNvrtcLog(log);
    const Diagnostic* error = nullptr;
    for (const Diagnostic& d : diagnostics) {
        if (d.severity == DiagnosticSeverity::Error && !error)
            error = &d;
    }
    ASSERT_NE(error, nullptr) << log;
    EXPECT_EQ(error->file, (dir.path() / "broken_helper.cuh").string());
    EXPECT_EQ(error->line, 3);
    EXPECT_EQ(error->column, columnOf(header, 3, "notDeclaredAnywhere"));
    EXPECT_EQ(error->message, "identifier \"notDeclaredAnywhere\" is undefined");
}

TEST(NvrtcDiagnosticsReal, TemplateInstantiationContextAndMissingInclude)
{
    const std::string source = "template <class T> __device__ T twice(T a) { return a.nope; }\n"
                               "extern \"C\" __global__ void k(float* x) {\n"
                               "    x[0] = twice(x[0]);\n"
                               "}\n";
    Result<CompiledKernel> kernel = NvrtcCompiler().compile(source, CompileOptions{});
    ASSERT_TRUE(kernel) << kernel.error().toString();
    ASSERT_FALSE(kernel->ok);
    ASSERT_EQ(kernel->diagnostics.size(), 1u) << kernel->log;
    EXPECT_EQ(kernel->diagnostics[0].line, 1);
    EXPECT_EQ(kernel->diagnostics[0].column, columnOf(source, 1, "a.nope"));
    EXPECT_NE(kernel->diagnostics[0].message.find("\ndetected during instantiation of"), std::string::npos)
        << kernel->diagnostics[0].message;

    // An allowed name (under cuda/) that the toolkit does not have: NVRTC's own error.
    Result<CompiledKernel> missing =
        NvrtcCompiler().compile("#include <cuda/no_such_header_here.h>\n", CompileOptions{});
    ASSERT_TRUE(missing) << missing.error().toString();
    ASSERT_FALSE(missing->ok);
    ASSERT_EQ(missing->diagnostics.size(), 1u) << missing->log;
    EXPECT_EQ(missing->diagnostics[0].severity, DiagnosticSeverity::Error);
    EXPECT_EQ(missing->diagnostics[0].line, 1);
    EXPECT_NE(missing->diagnostics[0].message.find("open source file \"cuda/no_such_header_here.h\""),
              std::string::npos)
        << missing->diagnostics[0].message;
}

TEST(NvrtcDiagnosticsReal, PtxasFailureHasNoLocationButKeepsThePtx)
{
    const std::string source = "extern \"C\" __global__ void k(float* x) {\n"
                               "    __shared__ float big[100000];\n"
                               "    big[threadIdx.x] = x[threadIdx.x];\n"
                               "    __syncthreads();\n"
                               "    x[threadIdx.x] = big[threadIdx.x + 1];\n"
                               "}\n";
    Result<CompiledKernel> kernel = NvrtcCompiler().compile(source, CompileOptions{});
    ASSERT_TRUE(kernel) << kernel.error().toString();
    EXPECT_FALSE(kernel->ok);
    EXPECT_TRUE(kernel->cubin.empty());
    EXPECT_NE(kernel->ptx.find(".visible .entry k("), std::string::npos);
    const Diagnostic* error = firstOf(*kernel, DiagnosticSeverity::Error);
    ASSERT_NE(error, nullptr) << kernel->log;
    EXPECT_EQ(error->line, 0);
    EXPECT_EQ(error->file, "");
    EXPECT_NE(error->message.find("ptxas: Entry function 'k' uses too much shared data"), std::string::npos)
        << error->message;
}

} // namespace
} // namespace kforge::core
