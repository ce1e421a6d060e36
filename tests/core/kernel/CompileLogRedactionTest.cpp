// Compile logs hold only the candidate's own text (CompileLogRedaction.h): on NVRTC logs written out
// here and on the log of a real compile whose errors lie inside CUDA headers, through NvrtcCompiler
// and the compile cache.

#include "KernelTestSupport.h"

#include "kernel/CachingCompiler.h"
#include "kernel/CompileLogRedaction.h"
#include "kernel/NvrtcCompiler.h"
#include "kernel/NvrtcDiagnostics.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <nvrtc.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace kforge::core {
namespace {

const std::string kMarker = "  " + std::string(kRedactedLogLine);

std::vector<std::string> linesOf(const std::string& text)
{
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

bool isCaret(const std::string& line)
{
    const std::size_t caret = line.find_first_not_of(" \t");
    return caret != std::string::npos && line[caret] == '^' &&
        line.find_first_not_of(" \t", caret + 1) == std::string::npos;
}

// Every line NVRTC quotes above a caret is the marker or, indent removed, a line of `source`.
void expectOnlyOwnQuotes(const std::string& log, const std::string& source)
{
    const std::vector<std::string> own = linesOf(source);
    const std::set<std::string> ownSet(own.begin(), own.end());
    const std::vector<std::string> lines = linesOf(log);
    for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
        if (!isCaret(lines[i + 1]))
            continue;
        EXPECT_TRUE(lines[i] == kMarker || (lines[i].substr(0, 2) == "  " && ownSet.count(lines[i].substr(2)) > 0))
            << "quoted line " << i << ": " << lines[i];
    }
}

TEST(CompileLogRedaction, QuotesOfOtherFilesAreReplacedAndTheCandidatesKept)
{
    const std::string source = "#include <cuda_fp16.h>\n"
                               "extern \"C\" __global__ void k(float* x) {\n"
                               "\tx[0] = undefinedName;\n"
                               "}\n";
    const std::string log = "/usr/local/cuda/include/cuda_fp16.hpp(120): error: something in the header\n"
                            "      SECRET_HEADER_TEXT x = 1;\n"
                            "      ^\n"
                            "          detected during instantiation of \"f<T>\" at line 3 of candidate.cu\n"
                            "\n"
                            "candidate.cu(3): error: identifier \"undefinedName\" is undefined\n"
                            "  \tx[0] = undefinedName;\n"
                            "  \t       ^\n"
                            "\n"
                            "candidate.cu(2): error: a line that is not in the source\n"
                            "  NOT_A_LINE_OF_THE_SOURCE\n"
                            "  ^\n"
                            "\n"
                            "2 errors detected in the compilation of \"candidate.cu\".\n";
    const std::string redacted = redactCompileLog(log, source, "candidate.cu");
    EXPECT_EQ(redacted.find("SECRET_HEADER_TEXT"), std::string::npos) << redacted;
    EXPECT_EQ(redacted.find("NOT_A_LINE_OF_THE_SOURCE"), std::string::npos) << redacted;
    EXPECT_NE(redacted.find("  \tx[0] = undefinedName;\n"), std::string::npos) << redacted;
    EXPECT_NE(redacted.find("detected during instantiation"), std::string::npos) << redacted;
    EXPECT_EQ(linesOf(redacted).size(), linesOf(log).size());
    expectOnlyOwnQuotes(redacted, source);

    // The parser reads the same diagnostics, lines and columns.
    const std::vector<Diagnostic> before = parseNvrtcLog(log);
    const std::vector<Diagnostic> after = parseNvrtcLog(redacted);
    ASSERT_EQ(before.size(), 3u);
    EXPECT_EQ(before, after);

    // Another name for the candidate: its own lines are then quotes of another file.
    EXPECT_EQ(redactCompileLog(log, source, "edit.cu").find("= undefinedName;"), std::string::npos);
    // A log without quotes is unchanged.
    const std::string plain = "ptxas error   : Entry function 'k' uses too much shared data\n";
    EXPECT_EQ(redactCompileLog(plain, source, "candidate.cu"), plain);
}

// NVRTC's log for `source` with NvrtcCompiler's own options, straight from NVRTC.
std::string rawNvrtcLog(const std::string& source)
{
    const NvrtcCompiler compiler;
    const std::vector<std::string> options = compiler.nvrtcOptions(CompileOptions{}).value();
    nvrtcProgram program = nullptr;
    if (nvrtcCreateProgram(&program, source.c_str(), "candidate.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
        return {};
    std::vector<const char*> argv;
    for (const std::string& option : options)
        argv.push_back(option.c_str());
    nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
    std::size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    nvrtcDestroyProgram(&program);
    return log;
}

// cub/cub.cuh pulls in host-only CCCL code that NVRTC rejects: errors located in the headers, each
// quoting a header line.
const std::string kHeaderErrorSource = "#include <cub/cub.cuh>\n"
                                       "extern \"C\" __global__ void k(float* x) { x[0] = 1.0f; }\n";

TEST(CompileLogRedaction, RealCompileQuotingCudaHeadersStoresOnlyTheCandidatesText)
{
    // Without redaction NVRTC quotes lines that are not the candidate's (the test is meaningful).
    const std::string raw = rawNvrtcLog(kHeaderErrorSource);
    std::vector<std::string> foreign;
    {
        const std::vector<std::string> own = linesOf(kHeaderErrorSource);
        const std::vector<std::string> lines = linesOf(raw);
        for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
            if (isCaret(lines[i + 1]) && lines[i].size() > 4 &&
                std::find(own.begin(), own.end(), lines[i].substr(2)) == own.end())
                foreign.push_back(lines[i]);
        }
    }
    ASSERT_FALSE(foreign.empty()) << raw;

    test::ScratchDir dir("cache");
    CachingCompiler compiler(dir.path());
    Result<CompiledKernel> kernel = compiler.compile(kHeaderErrorSource, CompileOptions{});
    ASSERT_TRUE(kernel) << kernel.error().toString();
    ASSERT_FALSE(kernel->ok);
    EXPECT_NE(kernel->log.find(kMarker), std::string::npos) << kernel->log;
    expectOnlyOwnQuotes(kernel->log, kHeaderErrorSource);
    for (const std::string& line : foreign)
        EXPECT_EQ(kernel->log.find(line), std::string::npos) << line;
    // The diagnostics still name the header and line NVRTC named.
    ASSERT_FALSE(kernel->diagnostics.empty());
    EXPECT_NE(kernel->diagnostics[0].file.find("/cccl/"), std::string::npos) << kernel->diagnostics[0].file;
    EXPECT_GT(kernel->diagnostics[0].line, 0);

    // What the disk cache stored is the redacted log.
    std::ifstream in(compiler.cache().jsonPath(kernel->cacheKey));
    ASSERT_TRUE(in.good());
    std::stringstream stored;
    stored << in.rdbuf();
    const std::string storedLog = nlohmann::json::parse(stored.str()).at("log").get<std::string>();
    EXPECT_EQ(storedLog, kernel->log);
    for (const std::string& line : foreign)
        EXPECT_EQ(stored.str().find(line.substr(2)), std::string::npos) << line;
}

} // namespace
} // namespace kforge::core
