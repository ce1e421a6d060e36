#include "gpu_evaluation/GpuActivityTimer.h"

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace kforge::core {
namespace {

constexpr size_t kBufferBytes = 8 << 20;
constexpr CUpti_ActivityKind kRecordedKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,    CUPTI_ACTIVITY_KIND_MEMSET,  CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};
constexpr size_t kAlignment = 8;

// CUPTI hands completed buffers to a callback on its own thread; they are parsed on collect().
struct CompletedBuffers {
    std::mutex mutex;
    std::vector<std::pair<std::uint8_t*, size_t>> buffers; // buffer, valid bytes
    size_t dropped = 0;
};
CompletedBuffers g_completed;
bool g_active = false;

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords)
{
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *maxNumRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext context, uint32_t streamId, uint8_t* buffer, size_t size, size_t validSize)
{
    size_t dropped = 0;
    cuptiActivityGetNumDroppedRecords(context, streamId, &dropped);
    std::lock_guard lock(g_completed.mutex);
    g_completed.dropped += dropped;
    if (validSize > 0)
        g_completed.buffers.emplace_back(buffer, validSize);
    else
        std::free(buffer);
    (void)size;
}

std::string cuptiMessage(CUptiResult result)
{
    const char* text = nullptr;
    cuptiGetResultString(result, &text);
    return text ? text : "unknown CUPTI error";
}

} // namespace

Result<std::unique_ptr<GpuActivityTimer>> GpuActivityTimer::create()
{
    if (g_active)
        return makeError(ErrorCode::Internal, "a GpuActivityTimer already exists in this process", "CUPTI");
    CUptiResult result = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted);
    // External-correlation records are emitted for traced API calls only: the runtime and driver
    // API kinds must be on for launches to be tied to a bracket (their records are ignored).
    for (CUpti_ActivityKind kind : kRecordedKinds) {
        if (result == CUPTI_SUCCESS)
            result = cuptiActivityEnable(kind);
    }
    if (result != CUPTI_SUCCESS) {
        for (CUpti_ActivityKind kind : kRecordedKinds)
            cuptiActivityDisable(kind);
        return makeError(ErrorCode::Unsupported, "cannot enable activity recording: " + cuptiMessage(result), "CUPTI");
    }
    g_active = true;
    return std::unique_ptr<GpuActivityTimer>(new GpuActivityTimer());
}

GpuActivityTimer::~GpuActivityTimer()
{
    cudaDeviceSynchronize();
    cuptiActivityFlushAll(1);
    for (CUpti_ActivityKind kind : kRecordedKinds)
        cuptiActivityDisable(kind);
    std::lock_guard lock(g_completed.mutex);
    for (auto& [buffer, size] : g_completed.buffers)
        std::free(buffer);
    g_completed.buffers.clear();
    g_active = false;
}

void GpuActivityTimer::begin(std::uint64_t tag)
{
    cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, tag);
}

void GpuActivityTimer::end()
{
    std::uint64_t last = 0;
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

Result<std::map<std::uint64_t, GpuActivityTimer::TagTime>> GpuActivityTimer::collect()
{
    if (cudaError_t error = cudaDeviceSynchronize(); error != cudaSuccess)
        return makeError(ErrorCode::Internal, std::string("CUDA error: ") + cudaGetErrorString(error), "timing");
    if (CUptiResult result = cuptiActivityFlushAll(1); result != CUPTI_SUCCESS)
        return makeError(ErrorCode::Internal, "flush failed: " + cuptiMessage(result), "CUPTI");

    std::vector<std::pair<std::uint8_t*, size_t>> buffers;
    size_t dropped = 0;
    {
        std::lock_guard lock(g_completed.mutex);
        buffers.swap(g_completed.buffers);
        dropped = g_completed.dropped;
        g_completed.dropped = 0;
    }
    // Correlation ids of launches -> the tag of the bracket they were launched in.
    std::unordered_map<std::uint32_t, std::uint64_t> tagOfCorrelation;
    struct Span {
        std::uint32_t correlation;
        std::uint64_t durationNs;
    };
    std::vector<Span> spans;
    for (auto& [buffer, validSize] : buffers) {
        CUpti_Activity* record = nullptr;
        while (cuptiActivityGetNextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
            switch (record->kind) {
            case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
                const auto* r = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
                if (r->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
                    tagOfCorrelation[r->correlationId] = r->externalId;
                break;
            }
            case CUPTI_ACTIVITY_KIND_KERNEL:
            case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
                const auto* r = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
                spans.push_back({r->correlationId, r->end - r->start});
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMSET: {
                const auto* r = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
                spans.push_back({r->correlationId, r->end - r->start});
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMCPY: {
                const auto* r = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
                spans.push_back({r->correlationId, r->end - r->start});
                break;
            }
            default:
                break;
            }
        }
        std::free(buffer);
    }
    if (dropped > 0)
        return makeError(ErrorCode::Internal, std::to_string(dropped) + " activity records were dropped", "CUPTI");
    std::map<std::uint64_t, TagTime> times;
    m_lastStats = Stats{spans.size(), tagOfCorrelation.size(), 0};
    for (const Span& span : spans) {
        auto tag = tagOfCorrelation.find(span.correlation);
        if (tag == tagOfCorrelation.end())
            continue; // launched outside any bracket (flush, input copies)
        ++m_lastStats.matched;
        TagTime& time = times[tag->second];
        time.gpuNs += static_cast<double>(span.durationNs);
        time.activities += 1;
    }
    return times;
}

} // namespace kforge::core
