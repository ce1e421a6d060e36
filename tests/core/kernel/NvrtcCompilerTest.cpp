// NvrtcCompiler against the real NVRTC: outputs, errors, options and concurrency. No GPU needed.

#include "KernelTestSupport.h"

#include "kernel/NvrtcCompiler.h"
#include "kernel/PtxasResources.h"

#include <gtest/gtest.h>
#include <nvrtc.h>

#include <cstdlib>
#include <thread>

namespace kforge::core {
namespace {

bool startsWithElfMagic(const std::vector<std::uint8_t>& bytes)
{
    return bytes.size() > 4 && bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F';
}

// PTX of a separate NVRTC program for a virtual architecture, with the compiler's other options.
std::string ptxForVirtualArchitecture(const NvrtcCompiler& compiler, const std::string& source,
                                      const CompileOptions& options)
{
    std::vector<std::string> list = compiler.nvrtcOptions(options).value();
    list.front() = "--gpu-architecture=" + NvrtcCompiler::virtualArchitecture(options.architecture);
    std::vector<const char*> argv;
    for (const std::string& option : list)
        argv.push_back(option.c_str());
    nvrtcProgram program = nullptr;
    EXPECT_EQ(nvrtcCreateProgram(&program, source.c_str(), "candidate.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
    EXPECT_EQ(nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data()), NVRTC_SUCCESS);
    std::size_t size = 0;
    nvrtcGetPTXSize(program, &size);
    std::string ptx(size, '\0');
    nvrtcGetPTX(program, ptx.data());
    nvrtcDestroyProgram(&program);
    while (!ptx.empty() && ptx.back() == '\0')
        ptx.pop_back();
    return ptx;
}

TEST(NvrtcCompiler, CorrectKernelGivesCubinAndPtx)
{
    const NvrtcCompiler compiler;
    Result<CompiledKernel> kernel = compiler.compile(test::addKernel("kforge_add"), CompileOptions{});
    ASSERT_TRUE(kernel) << kernel.error().toString();
    EXPECT_TRUE(kernel->ok) << kernel->log;
    EXPECT_TRUE(startsWithElfMagic(kernel->cubin));
    EXPECT_NE(kernel->ptx.find(".visible .entry kforge_add("), std::string::npos);
    EXPECT_NE(kernel->ptx.find(".target sm_90"), std::string::npos);
    EXPECT_TRUE(kernel->diagnostics.empty()) << kernel->log;
    EXPECT_GT(kernel->compileMs, 0.0);
    EXPECT_FALSE(kernel->fromCache);
    EXPECT_EQ(kernel->cacheKey.size(), 64u);
    EXPECT_EQ(kernel->cacheKey, compiler.cacheKey(test::addKernel("kforge_add"), CompileOptions{}).value());
    EXPECT_EQ(compiler.nvrtcVersion().substr(0, 3), "13.");
    // ptxas's resource report is in the log (and no diagnostic, above).
    const std::vector<KernelResources> resources = parsePtxasResources(kernel->log);
    ASSERT_EQ(resources.size(), 1u) << kernel->log;
    EXPECT_EQ(resources[0].entry, "kforge_add");
    EXPECT_GT(resources[0].registers, 0);
    EXPECT_EQ(resources[0].spillStoreBytes, 0);
}

TEST(NvrtcCompiler, PtxEqualsASeparateCompileForTheVirtualArchitecture)
{
    // One program yields both outputs only because NVRTC's PTX for sm_XX is the compute_XX PTX.
    const NvrtcCompiler compiler;
    for (const char* arch : {"sm_90", "sm_90a", "sm_80"}) {
        CompileOptions options;
        options.architecture = arch;
        Result<CompiledKernel> kernel = compiler.compile(test::softmaxKernel(), options);
        ASSERT_TRUE(kernel) << kernel.error().toString();
        ASSERT_TRUE(kernel->ok) << kernel->log;
        EXPECT_EQ(kernel->ptx, ptxForVirtualArchitecture(compiler, test::softmaxKernel(), options)) << arch;
        EXPECT_NE(kernel->ptx.find(std::string(".target ") + arch), std::string::npos) << arch;
    }
}

TEST(NvrtcCompiler, CubBlockReduceWithBf16Compiles)
{
    Result<CompiledKernel> kernel = NvrtcCompiler().compile(test::cubSoftmaxKernel(), CompileOptions{});
    ASSERT_TRUE(kernel) << kernel.error().toString();
    EXPECT_TRUE(kernel->ok) << kernel->log;
    EXPECT_TRUE(startsWithElfMagic(kernel->cubin));
    EXPECT_NE(kernel->ptx.find(".visible .entry kforge_softmax_bf16("), std::string::npos);
}

TEST(NvrtcCompiler, BrokenKernelIsAValueNotAnError)
{
    const std::string source = "extern \"C\" __global__ void k(float* x) {\n"
                               "    x[threadIdx.x] = notAVariable;\n"
                               "}\n";
    Result<CompiledKernel> kernel = NvrtcCompiler().compile(source, CompileOptions{});
    ASSERT_TRUE(kernel) << kernel.error().toString();
    EXPECT_FALSE(kernel->ok);
    EXPECT_TRUE(kernel->cubin.empty());
    EXPECT_TRUE(kernel->ptx.empty());
    EXPECT_NE(kernel->log.find("identifier \"notAVariable\" is undefined"), std::string::npos);
    ASSERT_EQ(kernel->diagnostics.size(), 1u);
    EXPECT_EQ(kernel->diagnostics[0],
              (Diagnostic{"candidate.cu", 2, test::columnOf(source, 2, "notAVariable"), DiagnosticSeverity::Error,
                          "identifier \"notAVariable\" is undefined"}));
    EXPECT_EQ(kernel->diagnostics[0].column, 22);
}

TEST(NvrtcCompiler, InvalidArchitectureIsAnInvalidArgument)
{
    const NvrtcCompiler compiler;
    for (const char* arch : {"", "sm90", "sm_9", "sm_090", "sm_90b", "compute_90", "sm_1000", "SM_90", "sm_9x"}) {
        CompileOptions options;
        options.architecture = arch;
        Result<CompiledKernel> kernel = compiler.compile(test::addKernel(), options);
        ASSERT_FALSE(kernel) << arch;
        EXPECT_EQ(kernel.error().code, ErrorCode::InvalidArgument) << arch;
        EXPECT_NE(kernel.error().message.find("\"" + std::string(arch) + "\""), std::string::npos)
            << kernel.error().toString();
        EXPECT_FALSE(compiler.cacheKey(test::addKernel(), options)) << arch;
    }
    for (const char* arch : {"sm_80", "sm_90", "sm_90a", "sm_100a", "sm_100f", "sm_120"})
        EXPECT_TRUE(NvrtcCompiler::isValidArchitecture(arch)) << arch;
    EXPECT_EQ(NvrtcCompiler::virtualArchitecture("sm_90a"), "compute_90a");
}

TEST(NvrtcCompiler, OptionsNvrtcRejectsAreOneLineErrors)
{
    const NvrtcCompiler compiler;
    CompileOptions unknownArch;
    unknownArch.architecture = "sm_99"; // well-formed, but no such GPU
    Result<CompiledKernel> kernel = compiler.compile(test::addKernel(), unknownArch);
    ASSERT_FALSE(kernel);
    EXPECT_EQ(kernel.error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(kernel.error().toString(),
              "NVRTC: NVRTC rejected the compile options: nvrtc: error: invalid value for --gpu-architecture (-arch)");

    CompileOptions bogus;
    bogus.extraOptions = {"--no-such-option"};
    kernel = compiler.compile(test::addKernel(), bogus);
    ASSERT_FALSE(kernel);
    EXPECT_EQ(kernel.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(kernel.error().message.find("--no-such-option"), std::string::npos) << kernel.error().toString();
    EXPECT_EQ(kernel.error().message.find('\n'), std::string::npos);

    CompileOptions o3;
    o3.extraOptions = {"-O3"}; // NVRTC 13 rejects -O3
    kernel = compiler.compile(test::addKernel(), o3);
    ASSERT_FALSE(kernel);
    EXPECT_EQ(kernel.error().code, ErrorCode::InvalidArgument);
}

TEST(NvrtcCompiler, OptionListAndLineInfo)
{
    const NvrtcCompiler compiler("/opt/cuda-include");
    CompileOptions options;
    options.extraOptions = {"--use_fast_math"};
    EXPECT_EQ(
        compiler.nvrtcOptions(options).value(),
        (std::vector<std::string>{"--gpu-architecture=sm_90", "--std=c++17", "-default-device", "--no-source-include",
                                  "-lineinfo", "--ptxas-options=-v", "--include-path=/opt/cuda-include",
                                  "--include-path=/opt/cuda-include/cccl", "--use_fast_math"}));

    const NvrtcCompiler real;
    CompileOptions withLines;
    CompileOptions withoutLines;
    withoutLines.lineInfo = false;
    Result<CompiledKernel> a = real.compile(test::softmaxKernel(), withLines);
    Result<CompiledKernel> b = real.compile(test::softmaxKernel(), withoutLines);
    ASSERT_TRUE(a && b);
    ASSERT_TRUE(a->ok && b->ok);
    EXPECT_NE(a->ptx.find(".loc"), std::string::npos);
    EXPECT_EQ(b->ptx.find(".loc"), std::string::npos);
    EXPECT_NE(a->cacheKey, b->cacheKey);
}

TEST(NvrtcCompiler, IncludeDirectoryOverrideFromEnvironment)
{
    const NvrtcCompiler defaults;
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(defaults.cudaIncludeDir()) / "cuda_bf16.h"))
        << defaults.cudaIncludeDir();

    test::ScratchDir empty("no-cuda");
    const char* previous = std::getenv("KFORGE_CUDA_INCLUDE");
    const std::string saved = previous ? previous : "";
    ::setenv("KFORGE_CUDA_INCLUDE", empty.path().c_str(), 1);
    const NvrtcCompiler overridden;
    if (previous)
        ::setenv("KFORGE_CUDA_INCLUDE", saved.c_str(), 1);
    else
        ::unsetenv("KFORGE_CUDA_INCLUDE");

    EXPECT_EQ(overridden.cudaIncludeDir(), empty.path().string());
    EXPECT_NE(overridden.cacheKey(test::addKernel(), CompileOptions{}).value(),
              defaults.cacheKey(test::addKernel(), CompileOptions{}).value());
    // The CUB kernel needs the toolkit headers, which the overriding directory does not have.
    Result<CompiledKernel> kernel = overridden.compile(test::cubSoftmaxKernel(), CompileOptions{});
    ASSERT_TRUE(kernel) << kernel.error().toString();
    EXPECT_FALSE(kernel->ok);
    EXPECT_NE(kernel->log.find("open source file \"cuda_bf16.h\""), std::string::npos) << kernel->log;
}

TEST(NvrtcCompiler, FourThreadsCompileAtOnce)
{
    const NvrtcCompiler compiler;
    std::vector<Result<CompiledKernel>> results(4, Result<CompiledKernel>(makeError(ErrorCode::Internal, "not run")));
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            results[t] = compiler.compile(test::addKernel("kforge_thread_" + std::to_string(t)), CompileOptions{});
        });
    }
    for (std::thread& thread : threads)
        thread.join();
    for (int t = 0; t < 4; ++t) {
        ASSERT_TRUE(results[t]) << results[t].error().toString();
        EXPECT_TRUE(results[t]->ok) << results[t]->log;
        EXPECT_TRUE(startsWithElfMagic(results[t]->cubin));
        EXPECT_NE(results[t]->ptx.find(".visible .entry kforge_thread_" + std::to_string(t) + "("), std::string::npos);
    }
}

} // namespace
} // namespace kforge::core
