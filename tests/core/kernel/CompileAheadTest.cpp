// CompileAhead: candidates compiled on the pool are cache hits for the search afterwards; a newer
// submit replaces the jobs not yet started; destruction with work pending neither hangs nor crashes.

#include "KernelTestSupport.h"

#include "kernel/CompileAhead.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

using namespace kforge::core;

namespace {

std::string scaleKernel(int factor)
{
    return "extern \"C\" __global__ void scale(float* x) { x[threadIdx.x] *= " + std::to_string(factor) + ".0f; }\n";
}

bool waitFor(const CompileAhead& pool, std::size_t count)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (pool.completed() < count) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

} // namespace

TEST(CompileAhead, CompiledAheadCandidatesAreCacheHitsLater)
{
    CachingCompiler compiler;
    CompileAhead pool(compiler, 2);
    EXPECT_EQ(pool.threadCount(), 2u);
    pool.submit({{scaleKernel(2), CompileOptions{}}, {scaleKernel(3), CompileOptions{}}});
    ASSERT_TRUE(waitFor(pool, 2));
    for (int factor : {2, 3}) {
        auto compiled = compiler.compile(scaleKernel(factor), CompileOptions{});
        ASSERT_TRUE(compiled) << compiled.error().toString();
        EXPECT_TRUE(compiled->ok);
        EXPECT_TRUE(compiled->fromCache) << "factor " << factor;
    }
    // Never submitted: compiled by the caller.
    auto fresh = compiler.compile(scaleKernel(5), CompileOptions{});
    ASSERT_TRUE(fresh);
    EXPECT_FALSE(fresh->fromCache);
}

TEST(CompileAhead, FailingSourcesAreCachedAsFailuresForTheSearchToReport)
{
    CachingCompiler compiler;
    CompileAhead pool(compiler, 1);
    pool.submit({{"extern \"C\" __global__ void broken( { }\n", CompileOptions{}}});
    ASSERT_TRUE(waitFor(pool, 1));
    auto compiled = compiler.compile("extern \"C\" __global__ void broken( { }\n", CompileOptions{});
    ASSERT_TRUE(compiled);
    EXPECT_FALSE(compiled->ok);
    EXPECT_TRUE(compiled->fromCache);
    EXPECT_FALSE(compiled->diagnostics.empty());
}

TEST(CompileAhead, NewerSubmitReplacesPendingJobs)
{
    CachingCompiler compiler;
    std::size_t completed = 0;
    {
        CompileAhead pool(compiler, 1);
        std::vector<CompileJob> many;
        for (int factor = 10; factor < 40; ++factor)
            many.push_back({scaleKernel(factor), CompileOptions{}});
        pool.submit(std::move(many));
        pool.submit({{scaleKernel(99), CompileOptions{}}});
        ASSERT_TRUE(waitFor(pool, 1));
        // Give the single thread time to run anything still queued; at most the job already taken
        // from the first batch ran before the replacement.
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        completed = pool.completed();
        EXPECT_LE(completed, 2u);
    }
    auto replaced = compiler.compile(scaleKernel(99), CompileOptions{});
    ASSERT_TRUE(replaced);
    EXPECT_TRUE(replaced->fromCache);
}

TEST(CompileAhead, DestroyingWithPendingWorkReturnsPromptly)
{
    CachingCompiler compiler;
    const auto start = std::chrono::steady_clock::now();
    {
        CompileAhead pool(compiler, 2);
        std::vector<CompileJob> many;
        for (int factor = 100; factor < 200; ++factor)
            many.push_back({scaleKernel(factor), CompileOptions{}});
        pool.submit(std::move(many));
    }
    // Pending jobs are dropped: at most the two running compiles finish.
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}
