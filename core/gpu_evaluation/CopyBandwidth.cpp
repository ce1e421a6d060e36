#include "gpu_evaluation/CopyBandwidth.h"

#include "util/AtomicFile.h"
#include "util/CacheDirectory.h"

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <vector>

namespace kforge::core {
namespace {

namespace fs = std::filesystem;

fs::path cacheFile(const std::string& gpuName)
{
    std::string safe;
    for (char c : gpuName)
        safe += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return userCacheDirectory() / "copy-bandwidth" / (safe + ".json");
}

Result<double> measure(int deviceIndex)
{
    constexpr size_t kBytes = 1ull << 30;
    void* source = nullptr;
    void* target = nullptr;
    if (cudaSetDevice(deviceIndex) != cudaSuccess || cudaMalloc(&source, kBytes) != cudaSuccess)
        return makeError(ErrorCode::Unsupported, "cannot allocate 1 GiB for the bandwidth measurement", "GPU");
    if (cudaMalloc(&target, kBytes) != cudaSuccess) {
        cudaFree(source);
        return makeError(ErrorCode::Unsupported, "cannot allocate 1 GiB for the bandwidth measurement", "GPU");
    }
    cudaMemset(source, 1, kBytes);
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    std::vector<double> seconds;
    for (int i = 0; i < 12; ++i) {
        cudaEventRecord(start);
        cudaMemcpyAsync(target, source, kBytes, cudaMemcpyDeviceToDevice);
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        if (i >= 2) // two warm-up copies
            seconds.push_back(ms / 1000.0);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaFree(source);
    cudaFree(target);
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    if (median <= 0)
        return makeError(ErrorCode::Internal, "copy bandwidth measurement gave no time", "GPU");
    return 2.0 * static_cast<double>(kBytes) / median;
}

} // namespace

Result<double> deviceCopyBandwidth(int deviceIndex)
{
    cudaDeviceProp props{};
    if (cudaGetDeviceProperties(&props, deviceIndex) != cudaSuccess)
        return makeError(ErrorCode::Unsupported, "no such CUDA device", "GPU " + std::to_string(deviceIndex));
    const fs::path file = cacheFile(props.name);
    if (auto text = readWholeFile(file)) {
        try {
            const auto json = nlohmann::json::parse(text.value());
            if (json.at("bytes_per_second").get<double>() > 0)
                return json.at("bytes_per_second").get<double>();
        } catch (const std::exception&) {
            // A damaged cache entry is measured again.
        }
    }
    auto measured = measure(deviceIndex);
    if (!measured)
        return measured;
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    (void)writeFileAtomically(file,
                              nlohmann::json{{"gpu", props.name},
                                             {"bytes_per_second", measured.value()},
                                             {"method", "1 GiB cudaMemcpy device to device, median of 10"}}
                                  .dump(1));
    return measured;
}

} // namespace kforge::core
