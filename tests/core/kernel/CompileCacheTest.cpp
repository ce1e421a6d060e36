// CompileCache and CachingCompiler: hits, misses, the disk directory, damaged entries, LRU, threads.

#include "KernelTestSupport.h"

#include "kernel/CachingCompiler.h"
#include "kernel/CompileCache.h"
#include "util/AtomicFile.h"
#include "util/Sha256.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <thread>

namespace kforge::core {
namespace {

const std::string kBroken = "extern \"C\" __global__ void k(float* x) {\n"
                            "    x[0] = nowhere;\n"
                            "}\n";

TEST(Sha256, KnownVectors)
{
    EXPECT_EQ(Sha256::hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(Sha256::hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(Sha256::hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    // One million 'a', fed in uneven pieces to exercise the buffering.
    Sha256 sha;
    const std::string chunk(997, 'a');
    std::size_t fed = 0;
    while (fed + chunk.size() <= 1000000) {
        sha.update(chunk);
        fed += chunk.size();
    }
    sha.update(std::string(1000000 - fed, 'a'));
    EXPECT_EQ(sha.finishHex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(CachingCompiler, SecondCompileOfTheSameSourceIsAHit)
{
    CachingCompiler compiler;
    Result<CompiledKernel> first = compiler.compile(test::addKernel(), CompileOptions{});
    ASSERT_TRUE(first) << first.error().toString();
    ASSERT_TRUE(first->ok);
    EXPECT_FALSE(first->fromCache);
    EXPECT_GT(first->compileMs, 0.0);

    Result<CompiledKernel> second = compiler.compile(test::addKernel(), CompileOptions{});
    ASSERT_TRUE(second) << second.error().toString();
    EXPECT_TRUE(second->fromCache);
    EXPECT_EQ(second->compileMs, 0.0);
    EXPECT_TRUE(second->ok);
    EXPECT_EQ(second->cubin, first->cubin);
    EXPECT_EQ(second->ptx, first->ptx);
    EXPECT_EQ(second->cacheKey, first->cacheKey);
    const CompileCache::Stats stats = compiler.cache().stats();
    EXPECT_EQ(stats.memoryHits, 1u);
    EXPECT_EQ(stats.stores, 1u);
}

TEST(CachingCompiler, AnyChangedInputIsAMiss)
{
    CachingCompiler compiler;
    const CompileOptions base;
    CompileOptions fastMath = base;
    fastMath.extraOptions = {"--use_fast_math"};
    CompileOptions fastMathAndFtz = base;
    fastMathAndFtz.extraOptions = {"--use_fast_math", "--ftz=true"};
    CompileOptions reordered = base;
    reordered.extraOptions = {"--ftz=true", "--use_fast_math"};
    CompileOptions otherArch = base;
    otherArch.architecture = "sm_80";
    CompileOptions noLines = base;
    noLines.lineInfo = false;

    std::vector<std::string> keys;
    auto compileFresh = [&](const std::string& source, const CompileOptions& options, const std::string& name) {
        Result<CompiledKernel> kernel = compiler.compile(source, options, name);
        ASSERT_TRUE(kernel) << kernel.error().toString();
        EXPECT_TRUE(kernel->ok) << kernel->log;
        EXPECT_FALSE(kernel->fromCache) << name << " " << options.architecture;
        keys.push_back(kernel->cacheKey);
    };
    compileFresh(test::softmaxKernel(), base, "candidate.cu");
    compileFresh(test::softmaxKernel(), fastMath, "candidate.cu");
    compileFresh(test::softmaxKernel(), fastMathAndFtz, "candidate.cu");
    compileFresh(test::softmaxKernel(), reordered, "candidate.cu");
    compileFresh(test::softmaxKernel(), otherArch, "candidate.cu");
    compileFresh(test::softmaxKernel(), noLines, "candidate.cu");
    compileFresh(test::softmaxKernel(), base, "other_name.cu");
    compileFresh(test::softmaxKernel() + "\n", base, "candidate.cu");
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(std::unique(keys.begin(), keys.end()), keys.end());
    EXPECT_EQ(compiler.cache().stats().misses, 8u);

    Result<CompiledKernel> again = compiler.compile(test::softmaxKernel(), otherArch);
    ASSERT_TRUE(again);
    EXPECT_TRUE(again->fromCache);
    EXPECT_NE(again->ptx.find(".target sm_80"), std::string::npos);
}

TEST(CachingCompiler, FailedCompilesAreCachedErrorsAreNot)
{
    test::ScratchDir dir("failed");
    std::vector<Diagnostic> diagnostics;
    {
        CachingCompiler compiler(dir.path());
        Result<CompiledKernel> first = compiler.compile(kBroken, CompileOptions{});
        ASSERT_TRUE(first) << first.error().toString();
        ASSERT_FALSE(first->ok);
        ASSERT_FALSE(first->diagnostics.empty());
        diagnostics = first->diagnostics;
        Result<CompiledKernel> second = compiler.compile(kBroken, CompileOptions{});
        ASSERT_TRUE(second);
        EXPECT_TRUE(second->fromCache);
        EXPECT_FALSE(second->ok);
        EXPECT_EQ(second->diagnostics, diagnostics);
        EXPECT_EQ(second->log, first->log);

        CompileOptions bad;
        bad.architecture = "sm_99";
        EXPECT_FALSE(compiler.compile(test::addKernel(), bad));
        EXPECT_FALSE(compiler.compile(test::addKernel(), bad));
        EXPECT_EQ(compiler.cache().stats().stores, 1u);
    }
    CachingCompiler later(dir.path());
    Result<CompiledKernel> fromDisk = later.compile(kBroken, CompileOptions{});
    ASSERT_TRUE(fromDisk);
    EXPECT_TRUE(fromDisk->fromCache);
    EXPECT_FALSE(fromDisk->ok);
    EXPECT_EQ(fromDisk->diagnostics, diagnostics);
    EXPECT_EQ(later.cache().stats().diskHits, 1u);
}

TEST(CachingCompiler, DiskCacheSurvivesANewCacheObject)
{
    test::ScratchDir dir("disk");
    CompiledKernel original;
    {
        CachingCompiler compiler(dir.path() / "nested" / "cache"); // created on first store
        Result<CompiledKernel> kernel = compiler.compile(test::softmaxKernel(), CompileOptions{});
        ASSERT_TRUE(kernel) << kernel.error().toString();
        ASSERT_TRUE(kernel->ok);
        original = *kernel;
        const CompileCache& cache = compiler.cache();
        EXPECT_TRUE(std::filesystem::exists(cache.cubinPath(kernel->cacheKey)));
        EXPECT_TRUE(std::filesystem::exists(cache.ptxPath(kernel->cacheKey)));
        EXPECT_TRUE(std::filesystem::exists(cache.jsonPath(kernel->cacheKey)));
        EXPECT_EQ(std::filesystem::file_size(cache.cubinPath(kernel->cacheKey)), kernel->cubin.size());
    }
    // A new object over the same directory stands in for a new process.
    CachingCompiler reopened(dir.path() / "nested" / "cache");
    Result<CompiledKernel> hit = reopened.compile(test::softmaxKernel(), CompileOptions{});
    ASSERT_TRUE(hit) << hit.error().toString();
    EXPECT_TRUE(hit->fromCache);
    EXPECT_EQ(hit->compileMs, 0.0);
    EXPECT_TRUE(hit->ok);
    EXPECT_EQ(hit->cubin, original.cubin);
    EXPECT_EQ(hit->ptx, original.ptx);
    EXPECT_EQ(hit->log, original.log);
    EXPECT_EQ(hit->diagnostics, original.diagnostics);
    EXPECT_EQ(hit->cacheKey, original.cacheKey);
    EXPECT_EQ(reopened.cache().stats().diskHits, 1u);
    // Promoted to memory: the next lookup does not read the disk.
    ASSERT_TRUE(reopened.compile(test::softmaxKernel(), CompileOptions{}));
    EXPECT_EQ(reopened.cache().stats().memoryHits, 1u);
}

class DamagedDiskEntry : public ::testing::Test {
protected:
    // Compiles once into the directory and returns the entry's key.
    std::string populate()
    {
        CachingCompiler compiler(m_dir.path());
        Result<CompiledKernel> kernel = compiler.compile(test::softmaxKernel(), CompileOptions{});
        EXPECT_TRUE(kernel && kernel->ok);
        m_original = *kernel;
        return kernel->cacheKey;
    }

    // A fresh object must miss, recompile, rewrite the entry, and a third object must hit again.
    void expectMissAndRewrite(const std::string& key)
    {
        {
            CachingCompiler compiler(m_dir.path());
            Result<CompiledKernel> kernel = compiler.compile(test::softmaxKernel(), CompileOptions{});
            ASSERT_TRUE(kernel) << kernel.error().toString();
            EXPECT_TRUE(kernel->ok);
            EXPECT_FALSE(kernel->fromCache);
            EXPECT_GT(kernel->compileMs, 0.0);
            EXPECT_EQ(kernel->cubin, m_original.cubin);
            EXPECT_EQ(compiler.cache().stats().misses, 1u);
            EXPECT_EQ(compiler.cache().stats().diskWriteFailures, 0u);
        }
        const CompileCache probe(m_dir.path());
        EXPECT_EQ(std::filesystem::file_size(probe.cubinPath(key)), m_original.cubin.size());
        EXPECT_EQ(readWholeFile(probe.ptxPath(key)).value(), m_original.ptx);
        EXPECT_TRUE(nlohmann::json::parse(readWholeFile(probe.jsonPath(key)).value(), nullptr, false).is_object());

        CachingCompiler again(m_dir.path());
        Result<CompiledKernel> hit = again.compile(test::softmaxKernel(), CompileOptions{});
        ASSERT_TRUE(hit);
        EXPECT_TRUE(hit->fromCache);
        EXPECT_EQ(hit->cubin, m_original.cubin);
    }

    test::ScratchDir m_dir{"damaged"};
    CompiledKernel m_original;
};

TEST_F(DamagedDiskEntry, TruncatedCubin)
{
    const std::string key = populate();
    const CompileCache probe(m_dir.path());
    std::filesystem::resize_file(probe.cubinPath(key), m_original.cubin.size() / 2);
    expectMissAndRewrite(key);
}

TEST_F(DamagedDiskEntry, SameSizeCubinWithFlippedBytes)
{
    const std::string key = populate();
    const CompileCache probe(m_dir.path());
    std::string bytes = readWholeFile(probe.cubinPath(key)).value();
    bytes[bytes.size() / 2] ^= 0x5a;
    test::writeText(probe.cubinPath(key), bytes);
    expectMissAndRewrite(key);
}

TEST_F(DamagedDiskEntry, GarbageJson)
{
    const std::string key = populate();
    const CompileCache probe(m_dir.path());
    test::writeText(probe.jsonPath(key), "{\"format\": 1, \"key\": \"trunc");
    expectMissAndRewrite(key);
}

TEST_F(DamagedDiskEntry, JsonWithWrongTypes)
{
    const std::string key = populate();
    const CompileCache probe(m_dir.path());
    nlohmann::json meta = nlohmann::json::parse(readWholeFile(probe.jsonPath(key)).value());
    meta["diagnostics"] = "not a list";
    meta["cubinSize"] = "big";
    test::writeText(probe.jsonPath(key), meta.dump());
    expectMissAndRewrite(key);
}

TEST_F(DamagedDiskEntry, MissingPtx)
{
    const std::string key = populate();
    const CompileCache probe(m_dir.path());
    std::filesystem::remove(probe.ptxPath(key));
    expectMissAndRewrite(key);
}

TEST(CompileCache, LeastRecentlyUsedEntryIsEvicted)
{
    CompileCache cache({}, 2);
    auto kernelNamed = [](const std::string& ptx) {
        CompiledKernel kernel;
        kernel.ok = true;
        kernel.ptx = ptx;
        kernel.cubin = {0x7f, 'E', 'L', 'F'};
        return kernel;
    };
    cache.store("aa", kernelNamed("a"));
    cache.store("bb", kernelNamed("b"));
    ASSERT_TRUE(cache.lookup("aa")); // "aa" is now the most recently used
    cache.store("cc", kernelNamed("c"));
    EXPECT_EQ(cache.size(), 2u);
    EXPECT_FALSE(cache.lookup("bb"));
    std::optional<CompiledKernel> a = cache.lookup("aa");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->ptx, "a");
    EXPECT_TRUE(a->fromCache);
    EXPECT_EQ(a->cacheKey, "aa");
    EXPECT_TRUE(cache.lookup("cc"));
    EXPECT_EQ(cache.stats().evictions, 1u);
    EXPECT_EQ(CompileCache().capacity(), 256u);
}

TEST(CompileCache, EvictedEntriesComeBackFromDisk)
{
    test::ScratchDir dir("evict");
    CompileCache cache(dir.path(), 1);
    CompiledKernel kernel;
    kernel.ok = true;
    kernel.cubin = {0x7f, 'E', 'L', 'F', 1, 2, 3};
    kernel.ptx = ".version 9.0";
    kernel.log = "candidate.cu(2): warning #177-D: x\n  \xff bad utf-8\n";
    kernel.diagnostics = {{"candidate.cu", 2, 5, DiagnosticSeverity::Warning, "x [#177-D]"}};
    const std::string first = Sha256::hex("first");
    const std::string second = Sha256::hex("second");
    cache.store(first, kernel);
    cache.store(second, kernel);
    EXPECT_FALSE(cache.lookupInMemory(first));
    std::optional<CompiledKernel> back = cache.lookup(first);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->cubin, kernel.cubin);
    EXPECT_EQ(back->diagnostics, kernel.diagnostics);
    EXPECT_EQ(cache.stats().diskHits, 1u);
    EXPECT_EQ(cache.stats().diskWriteFailures, 0u);
}

TEST(CompileCache, KeysThatAreNotHexDigestsStayInMemory)
{
    test::ScratchDir dir("keys");
    CompileCache cache(dir.path() / "cache");
    CompiledKernel kernel;
    kernel.ok = true;
    cache.store("../escape", kernel);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "escape.json"));
    EXPECT_EQ(cache.stats().diskWriteFailures, 1u);
    EXPECT_TRUE(cache.lookup("../escape"));
}

TEST(CachingCompiler, FourThreadsSameAndDifferentSources)
{
    test::ScratchDir dir("threads");
    CachingCompiler compiler(dir.path());
    std::vector<Result<CompiledKernel>> same(4, Result<CompiledKernel>(makeError(ErrorCode::Internal, "not run")));
    std::vector<Result<CompiledKernel>> different(4, Result<CompiledKernel>(makeError(ErrorCode::Internal, "not run")));
    {
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&, t] { same[t] = compiler.compile(test::softmaxKernel(), CompileOptions{}); });
        for (std::thread& thread : threads)
            thread.join();
    }
    {
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&, t] {
                different[t] =
                    compiler.compile(test::addKernel("kforge_parallel_" + std::to_string(t)), CompileOptions{});
            });
        }
        for (std::thread& thread : threads)
            thread.join();
    }
    int compiled = 0;
    for (int t = 0; t < 4; ++t) {
        ASSERT_TRUE(same[t]) << same[t].error().toString();
        EXPECT_TRUE(same[t]->ok);
        EXPECT_EQ(same[t]->cubin, same[0]->cubin);
        compiled += same[t]->fromCache ? 0 : 1;
        ASSERT_TRUE(different[t]) << different[t].error().toString();
        EXPECT_TRUE(different[t]->ok);
        EXPECT_FALSE(different[t]->fromCache);
        EXPECT_NE(different[t]->ptx.find(".visible .entry kforge_parallel_" + std::to_string(t) + "("),
                  std::string::npos);
    }
    EXPECT_EQ(compiled, 1); // concurrent requests for one key share one compile
    EXPECT_EQ(compiler.cache().stats().stores, 5u);
    EXPECT_EQ(compiler.cache().stats().diskWriteFailures, 0u);
}

} // namespace
} // namespace kforge::core
