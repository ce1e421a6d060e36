// kforge_fake_worker: a stand-in for kforge-worker that misbehaves on request, so WorkerClient's
// failure handling is tested against a real child process. No GPU.
//
// Arguments: --tag T          hello info carries {"tag": T}
//            --refuse-hello   the hello handler returns an error
//            --exit-on-start N  writes a line to stderr and exits with N before serving
//            --ignore-shutdown  the shutdown handler never returns
// Request types: echo, sleep {seconds}, crash {signal: SEGV|ABRT}, exit {status}, big {bytes},
//                fail, throw, noise (prints to stdout), env {name}, evaluate (answers
//                {"status": "passed"} as a real worker's passed validation does).

#include "protocol/WorkerProtocol.h"
#include "protocol/WorkerServer.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <sys/prctl.h>
#include <thread>
#include <unistd.h>

using namespace kforge::core;
using nlohmann::json;

int main(int argc, char** argv)
{
    std::string tag;
    bool refuseHello = false;
    bool ignoreShutdown = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--tag" && i + 1 < argc) {
            tag = argv[++i];
        } else if (arg == "--refuse-hello") {
            refuseHello = true;
        } else if (arg == "--ignore-shutdown") {
            ignoreShutdown = true;
        } else if (arg == "--exit-on-start" && i + 1 < argc) {
            std::fprintf(stderr, "fake worker: cannot initialize the device\n");
            return std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "fake worker: unknown argument %s\n", arg.c_str());
            return 64;
        }
    }
    // Crashes on request must not write core files.
    ::prctl(PR_SET_DUMPABLE, 0);

    Result<WorkerServer::StandardStreams> fds = WorkerServer::claimStandardStreams();
    if (!fds) {
        std::fprintf(stderr, "fake worker: %s\n", fds.error().toString().c_str());
        return 1;
    }
    WorkerServer server(fds->inFd, fds->outFd);

    server.registerHandler("hello", [&](const json&) -> Result<json> {
        if (refuseHello)
            return makeError(ErrorCode::Unsupported, "no device for this worker", "fake");
        json info{{"worker", "fake"}, {"gpu", false}};
        if (!tag.empty())
            info["tag"] = tag;
        return info;
    });
    if (ignoreShutdown) {
        server.registerHandler("shutdown", [](const json&) -> Result<json> {
            for (;;)
                std::this_thread::sleep_for(std::chrono::seconds(1));
        });
    }
    server.registerHandler("evaluate", [](const json&) -> Result<json> { return json{{"status", "passed"}}; });
    server.registerHandler("echo", [](const json& request) -> Result<json> { return workerRequestPayload(request); });
    server.registerHandler("sleep", [](const json& request) -> Result<json> {
        const double seconds = request.value("seconds", 0.0);
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
        return json{{"slept", seconds}};
    });
    server.registerHandler("crash", [](const json& request) -> Result<json> {
        const std::string signal = request.value("signal", "SEGV");
        std::fprintf(stderr, "CUDA error: an illegal memory access was encountered\n");
        std::fflush(stderr);
        const int number = signal == "ABRT" ? SIGABRT : SIGSEGV;
        std::signal(number, SIG_DFL); // die of it even where a sanitizer installed a handler
        std::raise(number);
        return json{};
    });
    server.registerHandler("exit", [](const json& request) -> Result<json> {
        const int status = request.value("status", 1);
        std::fprintf(stderr, "fake worker: exiting with status %d\n", status);
        std::fflush(stderr);
        ::_exit(status);
    });
    server.registerHandler("big", [](const json& request) -> Result<json> {
        const size_t bytes = request.value("bytes", size_t(0));
        std::string data(bytes, '\0');
        for (size_t i = 0; i < bytes; ++i)
            data[i] = static_cast<char>('a' + i % 26);
        return json{{"data", std::move(data)}};
    });
    server.registerHandler("fail", [](const json&) -> Result<json> {
        return makeError(ErrorCode::Unsupported, "this fake cannot do that", "fake kernel");
    });
    server.registerHandler("throw", [](const json&) -> Result<json> { throw std::runtime_error("boom"); });
    server.registerHandler("noise", [](const json&) -> Result<json> {
        std::printf("stray stdout from a library\n");
        std::fflush(stdout);
        std::cout << "more stray stdout" << std::endl;
        return json{{"quiet", false}};
    });
    server.registerHandler("env", [](const json& request) -> Result<json> {
        const std::string name = request.value("name", "");
        const char* value = std::getenv(name.c_str());
        return json{{"value", value ? json(value) : json(nullptr)}};
    });
    return server.run();
}
