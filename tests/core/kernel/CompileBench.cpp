// Measures compile latency of the candidate pipeline on this machine (NVRTC in this process and in a
// kforge-nvrtc process, reused or fresh; memory hit, disk hit). Not a test: prints medians.
// Usage: kforge_kernel_compile_bench [repetitions]

#include "KernelTestSupport.h"

#include "kernel/CachingCompiler.h"
#include "nvrtc_run/NvrtcRun.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using namespace kforge::core;

namespace {

double millisecondsOf(const std::function<void()>& work)
{
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

bool check(const Result<CompiledKernel>& kernel, bool expectCached)
{
    if (!kernel) {
        std::fprintf(stderr, "error: %s\n", kernel.error().toString().c_str());
        return false;
    }
    if (!kernel->ok || kernel->fromCache != expectCached) {
        std::fprintf(stderr, "unexpected outcome (ok=%d fromCache=%d)\n%s\n", kernel->ok, kernel->fromCache,
                     kernel->log.c_str());
        return false;
    }
    return true;
}

bool measure(const char* label, const std::string& source, int repetitions, bool& firstDone)
{
    const CompileOptions options; // sm_90, -lineinfo
    const NvrtcCompiler nvrtc;
    bool good = true;
    if (!firstDone) {
        const double first = millisecondsOf([&] { good = check(nvrtc.compile(source, options), false); });
        std::printf("%-28s first compile in the process: %8.2f ms\n", label, first);
        firstDone = true;
    }
    std::vector<double> cold, coldReported, memory, disk, store;
    for (int i = 0; i < repetitions && good; ++i) {
        cold.push_back(millisecondsOf([&] {
            Result<CompiledKernel> kernel = nvrtc.compile(source, options);
            good = check(kernel, false);
            if (good)
                coldReported.push_back(kernel->compileMs);
        }));
    }
    // The engine compiles in a kforge-nvrtc process: against NVRTC called in this process (what
    // the engine did before), and against a fresh process for every compile (no reuse).
    std::vector<double> inProcess, freshProcess;
    const NvrtcCompileRequest request{source, "candidate.cu", nvrtc.nvrtcOptions(options).value(), {}};
    for (int i = 0; i < repetitions && good; ++i) {
        inProcess.push_back(millisecondsOf([&] { good = runNvrtc(request).status == NvrtcStatus::Compiled; }));
        const NvrtcCompiler fresh;
        freshProcess.push_back(millisecondsOf([&] { good = good && check(fresh.compile(source, options), false); }));
    }
    test::ScratchDir dir("bench");
    {
        CachingCompiler compiler(dir.path());
        good = good && check(compiler.compile(source, options), false);
        for (int i = 0; i < repetitions && good; ++i)
            memory.push_back(millisecondsOf([&] { good = check(compiler.compile(source, options), true); }));
    }
    for (int i = 0; i < repetitions && good; ++i) {
        CachingCompiler fresh(dir.path()); // a new process's view of the directory
        disk.push_back(millisecondsOf([&] { good = check(fresh.compile(source, options), true); }));
    }
    {
        // The disk write a miss adds (three files, each fsynced and renamed, plus directory fsyncs).
        Result<CompiledKernel> kernel = nvrtc.compile(source, options);
        good = good && check(kernel, false);
        test::ScratchDir storeDir("bench-store");
        CompileCache cache(storeDir.path());
        for (int i = 0; i < repetitions && good; ++i) {
            const std::string key = kernel->cacheKey.substr(0, 60) + std::to_string(1000 + i);
            store.push_back(millisecondsOf([&] { cache.store(key, *kernel); }));
        }
        good = good && cache.stats().diskWriteFailures == 0;
    }
    if (!good)
        return false;
    std::printf("%-28s NVRTC in this process:        %8.2f ms median of %d\n", label, median(inProcess), repetitions);
    std::printf("%-28s cold NVRTC (cubin+PTX):       %8.2f ms median of %d (compileMs %.2f; kforge-nvrtc, reused)\n",
                label, median(cold), repetitions, median(coldReported));
    std::printf("%-28s fresh kforge-nvrtc each time: %8.2f ms median of %d\n", label, median(freshProcess),
                repetitions);
    std::printf("%-28s cached, memory hit:           %8.4f ms median of %d\n", label, median(memory), repetitions);
    std::printf("%-28s cached, disk hit (new cache): %8.4f ms median of %d\n", label, median(disk), repetitions);
    std::printf("%-28s disk store on a miss:         %8.4f ms median of %d\n", label, median(store), repetitions);
    return true;
}

} // namespace

int main(int argc, char** argv)
{
    const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 21;
    std::printf("NVRTC %s, sm_90, options: --std=c++17 -default-device -lineinfo\n",
                NvrtcCompiler().nvrtcVersion().c_str());
    bool firstDone = false;
    if (!measure("softmax (warp shuffles)", test::softmaxKernel(), repetitions, firstDone))
        return 1;
    if (!measure("softmax bf16 (cub)", test::cubSoftmaxKernel(), std::max(1, repetitions / 4), firstDone))
        return 1;
    return 0;
}
