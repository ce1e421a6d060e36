// kforge-nvrtc: the process that runs NVRTC on candidate sources (docs/nvrtc-compile.md, "The
// compiler process"). The engine starts it in a process group of its own, sends compile requests
// over the worker protocol and kills it when a compile takes too long or is stopped; a source that
// hangs or crashes NVRTC costs this process, never the engine. It links NVRTC only.

#include "nvrtc_run/NvrtcRun.h"
#include "protocol/WorkerServer.h"

#include <cstdio>

using kforge::core::Result;
using kforge::core::WorkerServer;

int main()
{
    auto streams = WorkerServer::claimStandardStreams();
    if (!streams) {
        std::fprintf(stderr, "kforge-nvrtc: %s\n", streams.error().toString().c_str());
        return WorkerServer::kExitProtocolError;
    }
    WorkerServer server(streams->inFd, streams->outFd);
    server.registerHandler("hello", [](const nlohmann::json&) -> Result<nlohmann::json> {
        return nlohmann::json{{"nvrtc_version", kforge::core::nvrtcLibraryVersion()}};
    });
    server.registerHandler(kforge::core::kNvrtcCompileType, kforge::core::serveNvrtcCompile);
    return server.run();
}
