// NVRTC in its own process (kforge-nvrtc): deadlines, stop flags, a killed compiler, a missing
// one, reuse of processes, the compile cache and compile-ahead around them, and SIGINT staying the
// engine's. Sources that NVRTC takes seconds on come from slowSource(). No GPU needed.

#include "KernelTestSupport.h"

#include "kernel/CachingCompiler.h"
#include "kernel/CompileAhead.h"
#include "kernel/NvrtcCompiler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace kforge::core {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

/// A valid kernel whose compile NVRTC spends about 0.1-0.2 s per line on (constant evaluation of a
/// 400k-step loop per line; each stays under NVRTC's constexpr step limit).
std::string slowSource(int lines, const std::string& kernelName = "kforge_slow")
{
    std::string source = "constexpr unsigned long long spin(unsigned long long n) {\n"
                         "    unsigned long long s = 1;\n"
                         "    for (unsigned long long i = 0; i < n; ++i) s = s * 6364136223846793005ull + i;\n"
                         "    return s;\n"
                         "}\n";
    std::string all = "0ull";
    for (int i = 0; i < lines; ++i) {
        source +=
            "constexpr unsigned long long v" + std::to_string(i) + " = spin(" + std::to_string(400000 + i) + ");\n";
        all += " ^ v" + std::to_string(i);
    }
    source += "extern \"C\" __global__ void " + kernelName + "(unsigned long long* out) { *out = " + all + "; }\n";
    return source;
}

struct ProcStat {
    pid_t pid = 0;
    pid_t ppid = 0;
    pid_t pgid = 0;
    char state = '?';
};

// Fields of /proc/PID/stat after the "(comm)" field, which may hold spaces.
std::optional<ProcStat> readStat(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t close = text.rfind(')');
    if (close == std::string::npos)
        return std::nullopt;
    std::istringstream rest(text.substr(close + 1));
    ProcStat stat;
    stat.pid = pid;
    rest >> stat.state >> stat.ppid >> stat.pgid;
    return rest ? std::optional<ProcStat>(stat) : std::nullopt;
}

/// kforge-nvrtc children of this process, running or not yet reaped (zombies).
std::vector<ProcStat> compilerChildren()
{
    std::vector<ProcStat> children;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream comm(entry.path() / "comm");
        std::string command;
        std::getline(comm, command);
        if (command != "kforge-nvrtc")
            continue;
        if (auto stat = readStat(std::stoi(name)); stat && stat->ppid == ::getpid())
            children.push_back(*stat);
    }
    return children;
}

/// Waits up to 20 s for a kforge-nvrtc child; 0 when none appeared.
pid_t waitForCompilerChild()
{
    const auto deadline = Clock::now() + 20s;
    while (Clock::now() < deadline) {
        std::vector<ProcStat> children = compilerChildren();
        if (!children.empty())
            return children.front().pid;
        std::this_thread::sleep_for(10ms);
    }
    return 0;
}

double secondsSince(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

TEST(NvrtcProcess, CompileBeyondItsDeadlineFailsWithTheReasonAndLeavesNoProcess)
{
    const NvrtcCompiler compiler;
    CompileOptions options;
    options.timeout = 1000ms;
    const auto start = Clock::now();
    Result<CompiledKernel> kernel = compiler.compile(slowSource(400), options); // ~60 s without a deadline
    const double took = secondsSince(start);
    ASSERT_TRUE(kernel) << kernel.error().toString();
    EXPECT_FALSE(kernel->ok);
    EXPECT_NE(kernel->unfinished.find("NVRTC did not finish within 1 s"), std::string::npos) << kernel->unfinished;
    EXPECT_NE(kernel->log.find("NVRTC did not finish within 1 s"), std::string::npos) << kernel->log;
    ASSERT_EQ(kernel->diagnostics.size(), 1u);
    EXPECT_EQ(kernel->diagnostics[0].severity, DiagnosticSeverity::Error);
    EXPECT_EQ(kernel->diagnostics[0].line, 0);
    EXPECT_TRUE(kernel->cubin.empty());
    EXPECT_LT(took, 8.0);
    EXPECT_TRUE(compilerChildren().empty()) << "the timed-out compiler process is still there";
}

TEST(NvrtcProcess, StopDuringACompileIsCancelledQuicklyAndLeavesNoProcess)
{
    const NvrtcCompiler compiler;
    std::atomic<bool> stop{false};
    CompileOptions options;
    options.stop = &stop;
    auto compile = std::async(std::launch::async, [&] { return compiler.compile(slowSource(400), options); });
    ASSERT_NE(waitForCompilerChild(), 0) << "no kforge-nvrtc process was started";
    std::this_thread::sleep_for(300ms); // inside nvrtcCompileProgram by now
    const auto stopped = Clock::now();
    stop = true;
    ASSERT_EQ(compile.wait_for(5s), std::future_status::ready);
    const double took = secondsSince(stopped);
    Result<CompiledKernel> kernel = compile.get();
    ASSERT_FALSE(kernel);
    EXPECT_EQ(kernel.error().code, ErrorCode::Cancelled) << kernel.error().toString();
    EXPECT_LT(took, 1.0);
    EXPECT_TRUE(compilerChildren().empty());

    // A stop set before the call starts nothing.
    Result<CompiledKernel> early = compiler.compile(test::addKernel(), options);
    ASSERT_FALSE(early);
    EXPECT_EQ(early.error().code, ErrorCode::Cancelled);
    EXPECT_TRUE(compilerChildren().empty());
}

TEST(NvrtcProcess, KilledCompilerProcessIsACleanCompileFailure)
{
    const NvrtcCompiler compiler;
    auto compile = std::async(std::launch::async, [&] { return compiler.compile(slowSource(400), CompileOptions{}); });
    const pid_t child = waitForCompilerChild();
    ASSERT_NE(child, 0);
    std::this_thread::sleep_for(200ms);
    ASSERT_EQ(::kill(child, SIGKILL), 0);
    ASSERT_EQ(compile.wait_for(10s), std::future_status::ready);
    Result<CompiledKernel> kernel = compile.get();
    ASSERT_TRUE(kernel) << kernel.error().toString();
    EXPECT_FALSE(kernel->ok);
    EXPECT_NE(kernel->unfinished.find("kforge-nvrtc was killed by SIGKILL"), std::string::npos) << kernel->unfinished;
    EXPECT_TRUE(compilerChildren().empty());

    // The next compile starts a fresh process.
    Result<CompiledKernel> next = compiler.compile(test::addKernel(), CompileOptions{});
    ASSERT_TRUE(next) << next.error().toString();
    EXPECT_TRUE(next->ok) << next->log;
}

TEST(NvrtcProcess, CompilerRunsInItsOwnProcessGroupAndSigintStaysOurs)
{
    static std::atomic<int> interrupts{0};
    auto previous = std::signal(SIGINT, [](int) { ++interrupts; });
    const NvrtcCompiler compiler;
    auto compile = std::async(std::launch::async, [&] { return compiler.compile(slowSource(12), CompileOptions{}); });
    const pid_t child = waitForCompilerChild();
    ASSERT_NE(child, 0);
    std::optional<ProcStat> stat = readStat(child);
    ASSERT_TRUE(stat);
    EXPECT_EQ(stat->pgid, child) << "kforge-nvrtc must lead a process group of its own";
    EXPECT_NE(stat->pgid, ::getpgrp());
    // While NVRTC compiles: with NVRTC in this process, its own SIGINT handler would end the test
    // process with exit code 4 here.
    std::this_thread::sleep_for(300ms);
    ::kill(::getpid(), SIGINT);
    Result<CompiledKernel> kernel = compile.get();
    std::signal(SIGINT, previous);
    EXPECT_EQ(interrupts.load(), 1);
    ASSERT_TRUE(kernel) << kernel.error().toString();
    EXPECT_TRUE(kernel->ok) << kernel->log;
}

TEST(NvrtcProcess, MissingCompilerExecutableIsAClearError)
{
    const NvrtcCompiler compiler({}, "/nonexistent/kforge-nvrtc");
    EXPECT_EQ(compiler.compilerExecutable(), "/nonexistent/kforge-nvrtc");
    Result<CompiledKernel> kernel = compiler.compile(test::addKernel(), CompileOptions{});
    ASSERT_FALSE(kernel);
    EXPECT_EQ(kernel.error().code, ErrorCode::NotFound);
    EXPECT_EQ(kernel.error().toString(),
              "/nonexistent/kforge-nvrtc: cannot start the NVRTC compiler: no such file (kforge-nvrtc is installed "
              "next to kforge; KFORGE_NVRTC names another path)");
}

TEST(NvrtcProcess, BuildTreeProgramsFindTheBuildsCompiler)
{
    const NvrtcCompiler compiler;
    EXPECT_TRUE(std::filesystem::exists(compiler.compilerExecutable())) << compiler.compilerExecutable();
    EXPECT_EQ(std::filesystem::path(compiler.compilerExecutable()).filename(), "kforge-nvrtc");
}

TEST(NvrtcProcess, OneProcessServesConsecutiveCompiles)
{
    const NvrtcCompiler compiler;
    for (int i = 0; i < 3; ++i) {
        Result<CompiledKernel> kernel =
            compiler.compile(test::addKernel("kforge_add_" + std::to_string(i)), CompileOptions{});
        ASSERT_TRUE(kernel) << kernel.error().toString();
        EXPECT_TRUE(kernel->ok) << kernel->log;
        EXPECT_EQ(compilerChildren().size(), 1u);
    }
}

TEST(NvrtcProcess, UnfinishedCompilesAreNotCachedFinishedOnesAre)
{
    CachingCompiler compiler;
    CompileOptions options;
    options.timeout = 500ms;
    for (int attempt = 0; attempt < 2; ++attempt) {
        Result<CompiledKernel> kernel = compiler.compile(slowSource(400), options);
        ASSERT_TRUE(kernel) << kernel.error().toString();
        EXPECT_FALSE(kernel->ok);
        EXPECT_FALSE(kernel->fromCache) << "attempt " << attempt;
        EXPECT_FALSE(kernel->unfinished.empty());
    }
    ASSERT_TRUE(compiler.compile(test::addKernel(), options));
    Result<CompiledKernel> hit = compiler.compile(test::addKernel(), options);
    ASSERT_TRUE(hit);
    EXPECT_TRUE(hit->ok);
    EXPECT_TRUE(hit->fromCache);
}

TEST(NvrtcProcess, WaiterCompilesItselfWhenTheCompileItJoinedWasStopped)
{
    CachingCompiler compiler;
    std::atomic<bool> stopFirst{false};
    CompileOptions first;
    first.stop = &stopFirst;
    CompileOptions second; // same key: timeout and stop are not part of it
    second.timeout = 1500ms;
    auto a = std::async(std::launch::async, [&] { return compiler.compile(slowSource(400), first); });
    ASSERT_NE(waitForCompilerChild(), 0);
    auto b = std::async(std::launch::async, [&] { return compiler.compile(slowSource(400), second); });
    std::this_thread::sleep_for(300ms); // b waits for a's compile
    stopFirst = true;
    Result<CompiledKernel> stopped = a.get();
    ASSERT_FALSE(stopped);
    EXPECT_EQ(stopped.error().code, ErrorCode::Cancelled);
    ASSERT_EQ(b.wait_for(10s), std::future_status::ready);
    Result<CompiledKernel> own = b.get();
    ASSERT_TRUE(own) << own.error().toString();
    EXPECT_NE(own->unfinished.find("within 1.5 s"), std::string::npos) << own->unfinished;
}

TEST(NvrtcProcess, WaiterHonoursItsOwnStop)
{
    CachingCompiler compiler;
    CompileOptions first;
    first.timeout = 3000ms;
    std::atomic<bool> stopSecond{false};
    CompileOptions second;
    second.stop = &stopSecond;
    auto a = std::async(std::launch::async, [&] { return compiler.compile(slowSource(400), first); });
    ASSERT_NE(waitForCompilerChild(), 0);
    auto b = std::async(std::launch::async, [&] { return compiler.compile(slowSource(400), second); });
    std::this_thread::sleep_for(200ms);
    stopSecond = true;
    ASSERT_EQ(b.wait_for(1s), std::future_status::ready);
    Result<CompiledKernel> waiter = b.get();
    ASSERT_FALSE(waiter);
    EXPECT_EQ(waiter.error().code, ErrorCode::Cancelled);
    Result<CompiledKernel> timedOut = a.get();
    ASSERT_TRUE(timedOut);
    EXPECT_FALSE(timedOut->unfinished.empty());
}

TEST(NvrtcProcess, DestroyingCompileAheadStopsItsRunningCompile)
{
    CachingCompiler compiler;
    std::optional<CompileAhead> pool(std::in_place, compiler, 1);
    pool->submit({CompileJob{slowSource(400), CompileOptions{}}});
    ASSERT_NE(waitForCompilerChild(), 0);
    std::this_thread::sleep_for(200ms);
    const auto start = Clock::now();
    pool.reset();
    EXPECT_LT(secondsSince(start), 2.0);
    EXPECT_TRUE(compilerChildren().empty());
    EXPECT_FALSE(compiler.cache().lookup(compiler.compiler().cacheKey(slowSource(400), CompileOptions{}).value()))
        << "a stopped compile is not cached";
}

} // namespace
} // namespace kforge::core
