#include "nvrtc_run/NvrtcRun.h"

#include <nvrtc.h>

#include <chrono>
#include <unistd.h>

namespace kforge::core {
namespace {

// Owns one nvrtcProgram for the duration of a runNvrtc() call.
class ProgramGuard {
public:
    ProgramGuard() = default;
    ProgramGuard(const ProgramGuard&) = delete;
    ProgramGuard& operator=(const ProgramGuard&) = delete;
    ~ProgramGuard()
    {
        if (m_program)
            nvrtcDestroyProgram(&m_program);
    }
    nvrtcProgram* out() { return &m_program; }
    nvrtcProgram get() const { return m_program; }

private:
    nvrtcProgram m_program = nullptr;
};

// Cancels the backstop alarm however the compile ends.
class AlarmGuard {
public:
    explicit AlarmGuard(unsigned seconds) { ::alarm(seconds); }
    AlarmGuard(const AlarmGuard&) = delete;
    AlarmGuard& operator=(const AlarmGuard&) = delete;
    ~AlarmGuard() { ::alarm(0); }
};

std::string failedCall(const char* call, nvrtcResult result)
{
    return std::string(call) + " failed: " + nvrtcGetErrorString(result);
}

std::string firstLine(const std::string& text)
{
    std::string line = text.substr(0, text.find('\n'));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\0'))
        line.pop_back();
    return line;
}

void dropTrailingNuls(std::string& text)
{
    while (!text.empty() && text.back() == '\0')
        text.pop_back();
}

std::string boundedLog(std::string log)
{
    if (log.size() <= kMaxNvrtcLogBytes)
        return log;
    const std::size_t total = log.size();
    std::size_t cut = log.rfind('\n', kMaxNvrtcLogBytes - 1);
    cut = cut == std::string::npos ? kMaxNvrtcLogBytes : cut + 1;
    log.resize(cut);
    log += "[kforge: NVRTC log truncated: " + std::to_string(cut) + " of " + std::to_string(total) + " bytes kept]\n";
    return log;
}

// Size-then-copy getters of an NVRTC output; false with `failure` set when a call fails.
template <class Buffer, class SizeFn, class GetFn>
bool fetch(nvrtcProgram program, SizeFn sizeFn, GetFn getFn, const char* sizeName, const char* getName, Buffer& out,
           std::string& failure)
{
    std::size_t size = 0;
    if (nvrtcResult r = sizeFn(program, &size); r != NVRTC_SUCCESS) {
        failure = failedCall(sizeName, r);
        return false;
    }
    out.resize(size);
    if (size > 0) {
        if (nvrtcResult r = getFn(program, reinterpret_cast<char*>(out.data())); r != NVRTC_SUCCESS) {
            failure = failedCall(getName, r);
            return false;
        }
    }
    return true;
}

} // namespace

NvrtcCompileReply runNvrtc(const NvrtcCompileRequest& request)
{
    const auto start = std::chrono::steady_clock::now();
    NvrtcCompileReply reply;
    reply.status = NvrtcStatus::NvrtcFailed;
    ProgramGuard program;
    if (nvrtcResult r =
            nvrtcCreateProgram(program.out(), request.source.c_str(), request.sourceName.c_str(), 0, nullptr, nullptr);
        r != NVRTC_SUCCESS) {
        reply.failure = failedCall("nvrtcCreateProgram", r);
        return reply;
    }
    std::vector<const char*> argv;
    argv.reserve(request.options.size());
    for (const std::string& option : request.options)
        argv.push_back(option.c_str());
    const nvrtcResult compiled = nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());

    if (!fetch(program.get(), nvrtcGetProgramLogSize, nvrtcGetProgramLog, "nvrtcGetProgramLogSize",
               "nvrtcGetProgramLog", reply.log, reply.failure))
        return reply;
    dropTrailingNuls(reply.log);
    if (compiled == NVRTC_ERROR_INVALID_OPTION) {
        reply.status = NvrtcStatus::InvalidOption;
        const std::string reason = firstLine(reply.log);
        reply.failure = reason.empty() ? std::string(nvrtcGetErrorString(compiled)) : reason;
        return reply;
    }
    if (compiled != NVRTC_SUCCESS && compiled != NVRTC_ERROR_COMPILATION) {
        reply.failure = failedCall("nvrtcCompileProgram", compiled);
        return reply;
    }
    reply.log = boundedLog(std::move(reply.log));

    // After a front-end failure NVRTC has no PTX; after a ptxas failure it still has the PTX, which
    // is worth keeping for the editor.
    if (!fetch(program.get(), nvrtcGetPTXSize, nvrtcGetPTX, "nvrtcGetPTXSize", "nvrtcGetPTX", reply.ptx, reply.failure))
        return reply;
    dropTrailingNuls(reply.ptx);
    if (compiled == NVRTC_SUCCESS) {
        if (!fetch(program.get(), nvrtcGetCUBINSize, nvrtcGetCUBIN, "nvrtcGetCUBINSize", "nvrtcGetCUBIN", reply.cubin,
                   reply.failure))
            return reply;
        reply.status = NvrtcStatus::Compiled;
    } else {
        reply.status = NvrtcStatus::CompileError;
    }
    reply.compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return reply;
}

std::string nvrtcLibraryVersion()
{
    int major = 0;
    int minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
        return "unknown";
    return std::to_string(major) + "." + std::to_string(minor);
}

Result<nlohmann::json> serveNvrtcCompile(const nlohmann::json& message)
{
    Result<NvrtcCompileRequest> request = nvrtcCompileRequestFromJson(message);
    if (!request)
        return request.error();
    const long long timeoutS = (request->timeout.count() + 999) / 1000;
    const unsigned backstop = request->timeout.count() == 0 ? 0u
        : timeoutS > 86400                                  ? 86400u + kBackstopGraceS
                                                            : static_cast<unsigned>(timeoutS) + kBackstopGraceS;
    AlarmGuard alarm(backstop);
    return toJson(runNvrtc(*request));
}

} // namespace kforge::core
