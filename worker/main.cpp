// kforge-worker: the only process that runs candidate kernels on a GPU (docs/worker-protocol.md).
// One worker per GPU, pinned with CUDA_VISIBLE_DEVICES by the engine; a kernel that faults or hangs
// takes only this process down.

#include "protocol/WorkerServer.h"

#ifdef KFORGE_WORKER_GPU
#include "gpu_evaluation/CandidateEvaluator.h"
#endif

#include <cstdio>

using kforge::core::Result;
using kforge::core::WorkerServer;

int main()
{
    auto streams = WorkerServer::claimStandardStreams();
    if (!streams) {
        std::fprintf(stderr, "kforge-worker: %s\n", streams.error().toString().c_str());
        return WorkerServer::kExitProtocolError;
    }
    WorkerServer server(streams->inFd, streams->outFd);
#ifdef KFORGE_WORKER_GPU
    server.registerHandler("hello", [](const nlohmann::json&) -> Result<nlohmann::json> {
        auto gpu = kforge::core::describeGpu();
        if (!gpu)
            return nlohmann::json{{"gpu", false}, {"reason", gpu.error().message}};
        return gpu;
    });
    server.registerHandler("evaluate",
                           [](const nlohmann::json& request) { return kforge::core::evaluateCandidate(request); });
#else
    server.registerHandler("hello", [](const nlohmann::json&) -> Result<nlohmann::json> {
        return nlohmann::json{{"gpu", false}, {"reason", "this build has no CUDA backend (compile-only)"}};
    });
    server.registerHandler("evaluate", [](const nlohmann::json&) -> Result<nlohmann::json> {
        return kforge::core::makeError(kforge::core::ErrorCode::Unsupported,
                                       "this worker has no GPU: candidates can be compiled but not evaluated",
                                       "kforge-worker");
    });
#endif
    return server.run();
}
