#include "kernel/NvrtcCompiler.h"

#include "kernel/CompileLogRedaction.h"
#include "kernel/KernelSourcePolicy.h"
#include "kernel/NvrtcDiagnostics.h"
#include "util/Sha256.h"

#include <nvrtc.h>

#include <chrono>
#include <cstdlib>

#ifndef KFORGE_CUDA_INCLUDE_DIR
#error "KFORGE_CUDA_INCLUDE_DIR must name the CUDA toolkit include directory (set by core/kernel/CMakeLists.txt)"
#endif

namespace kforge::core {
namespace {

// Owns one nvrtcProgram for the duration of a compile() call.
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

Error nvrtcFailure(const char* call, nvrtcResult result)
{
    return makeError(ErrorCode::Internal, std::string(call) + " failed: " + nvrtcGetErrorString(result), "NVRTC");
}

std::string firstLine(const std::string& text)
{
    std::string line = text.substr(0, text.find('\n'));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\0'))
        line.pop_back();
    return line;
}

Result<std::string> programLog(nvrtcProgram program)
{
    std::size_t size = 0;
    if (nvrtcResult r = nvrtcGetProgramLogSize(program, &size); r != NVRTC_SUCCESS)
        return nvrtcFailure("nvrtcGetProgramLogSize", r);
    std::string log(size, '\0');
    if (size > 0) {
        if (nvrtcResult r = nvrtcGetProgramLog(program, log.data()); r != NVRTC_SUCCESS)
            return nvrtcFailure("nvrtcGetProgramLog", r);
    }
    while (!log.empty() && log.back() == '\0')
        log.pop_back();
    return log;
}

Result<std::string> programPtx(nvrtcProgram program)
{
    std::size_t size = 0;
    if (nvrtcResult r = nvrtcGetPTXSize(program, &size); r != NVRTC_SUCCESS)
        return nvrtcFailure("nvrtcGetPTXSize", r);
    std::string ptx(size, '\0');
    if (size > 0) {
        if (nvrtcResult r = nvrtcGetPTX(program, ptx.data()); r != NVRTC_SUCCESS)
            return nvrtcFailure("nvrtcGetPTX", r);
    }
    while (!ptx.empty() && ptx.back() == '\0')
        ptx.pop_back();
    return ptx;
}

Result<std::vector<std::uint8_t>> programCubin(nvrtcProgram program)
{
    std::size_t size = 0;
    if (nvrtcResult r = nvrtcGetCUBINSize(program, &size); r != NVRTC_SUCCESS)
        return nvrtcFailure("nvrtcGetCUBINSize", r);
    std::vector<std::uint8_t> cubin(size);
    if (size > 0) {
        if (nvrtcResult r = nvrtcGetCUBIN(program, reinterpret_cast<char*>(cubin.data())); r != NVRTC_SUCCESS)
            return nvrtcFailure("nvrtcGetCUBIN", r);
    }
    return cubin;
}

std::string resolveIncludeDir(std::string requested)
{
    if (!requested.empty())
        return requested;
    // getenv is read once per compiler object; nothing in the engine sets this variable at run time.
    if (const char* env = std::getenv("KFORGE_CUDA_INCLUDE"); env != nullptr && *env != '\0')
        return env;
    return KFORGE_CUDA_INCLUDE_DIR;
}

std::string queryNvrtcVersion()
{
    int major = 0;
    int minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
        return "unknown";
    return std::to_string(major) + "." + std::to_string(minor);
}

// Length-prefixed so that no two different inputs serialize to the same bytes.
void appendField(std::string& out, std::string_view field)
{
    out += std::to_string(field.size());
    out += ':';
    out += field;
    out += '\n';
}

} // namespace

NvrtcCompiler::NvrtcCompiler(std::string cudaIncludeDir)
    : m_cudaIncludeDir(resolveIncludeDir(std::move(cudaIncludeDir)))
    , m_nvrtcVersion(queryNvrtcVersion())
{
}

bool NvrtcCompiler::isValidArchitecture(std::string_view architecture)
{
    if (architecture.substr(0, 3) != "sm_")
        return false;
    std::string_view rest = architecture.substr(3);
    if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f'))
        rest.remove_suffix(1);
    if (rest.size() < 2 || rest.size() > 3 || rest.front() == '0')
        return false;
    for (char c : rest) {
        if (c < '0' || c > '9')
            return false;
    }
    return true;
}

std::string NvrtcCompiler::virtualArchitecture(std::string_view architecture)
{
    return "compute_" + std::string(architecture.substr(3));
}

Result<std::vector<std::string>> NvrtcCompiler::nvrtcOptions(const CompileOptions& options) const
{
    if (!isValidArchitecture(options.architecture)) {
        return makeError(ErrorCode::InvalidArgument,
                         "invalid GPU architecture \"" + options.architecture + "\" (expected sm_NN, sm_NNa or sm_NNf, e.g. sm_90)",
                         "compile options");
    }
    std::vector<std::string> list;
    list.reserve(7 + options.extraOptions.size());
    list.push_back("--gpu-architecture=" + options.architecture);
    list.push_back("--std=c++17");
    list.push_back("-default-device");
    // A quoted #include is not looked up next to the source (the process's working directory).
    list.push_back("--no-source-include");
    if (options.lineInfo)
        list.push_back("-lineinfo");
    list.push_back("--include-path=" + m_cudaIncludeDir);
    list.push_back("--include-path=" + m_cudaIncludeDir + "/cccl");
    list.insert(list.end(), options.extraOptions.begin(), options.extraOptions.end());
    return list;
}

Result<std::string> NvrtcCompiler::cacheKey(const std::string& source, const CompileOptions& options,
                                            const std::string& sourceName) const
{
    Result<std::vector<std::string>> list = nvrtcOptions(options);
    if (!list)
        return list.error();
    std::string canonical;
    canonical.reserve(source.size() + 512);
    appendField(canonical, "kforge-nvrtc-compile-v2"); // v2: source policy and log redaction
    appendField(canonical, m_nvrtcVersion);
    appendField(canonical, sourceName);
    appendField(canonical, source);
    appendField(canonical, options.architecture);
    appendField(canonical, std::to_string(list->size()));
    for (const std::string& option : *list)
        appendField(canonical, option);
    appendField(canonical, m_cudaIncludeDir);
    return Sha256::hex(canonical);
}

Result<CompiledKernel> NvrtcCompiler::compile(const std::string& source, const CompileOptions& options,
                                              const std::string& sourceName) const
{
    Result<std::vector<std::string>> list = nvrtcOptions(options);
    if (!list)
        return list.error();
    Result<std::string> key = cacheKey(source, options, sourceName);
    if (!key)
        return key.error();
    if (std::optional<SourcePolicyViolation> refused = checkKernelSource(source)) {
        CompiledKernel kernel = refusedCompile(*refused, sourceName);
        kernel.cacheKey = std::move(*key);
        return kernel;
    }

    const auto start = std::chrono::steady_clock::now();
    ProgramGuard program;
    if (nvrtcResult r = nvrtcCreateProgram(program.out(), source.c_str(), sourceName.c_str(), 0, nullptr, nullptr);
        r != NVRTC_SUCCESS) {
        return nvrtcFailure("nvrtcCreateProgram", r);
    }
    std::vector<const char*> argv;
    argv.reserve(list->size());
    for (const std::string& option : *list)
        argv.push_back(option.c_str());
    const nvrtcResult compiled = nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());

    Result<std::string> log = programLog(program.get());
    if (!log)
        return log.error();
    *log = redactCompileLog(*log, source, sourceName); // before the log is stored, parsed or shown
    if (compiled == NVRTC_ERROR_INVALID_OPTION) {
        const std::string reason = firstLine(*log);
        return makeError(ErrorCode::InvalidArgument,
                         "NVRTC rejected the compile options: " + (reason.empty() ? std::string(nvrtcGetErrorString(compiled)) : reason),
                         "NVRTC");
    }
    if (compiled != NVRTC_SUCCESS && compiled != NVRTC_ERROR_COMPILATION)
        return nvrtcFailure("nvrtcCompileProgram", compiled);

    CompiledKernel kernel;
    kernel.cacheKey = std::move(*key);
    kernel.log = std::move(*log);
    kernel.diagnostics = parseNvrtcLog(kernel.log);

    // After a front-end failure NVRTC has no PTX; after a ptxas failure it still has the PTX, which
    // is worth keeping for the editor.
    Result<std::string> ptx = programPtx(program.get());
    if (!ptx)
        return ptx.error();
    kernel.ptx = std::move(*ptx);

    if (compiled == NVRTC_SUCCESS) {
        Result<std::vector<std::uint8_t>> cubin = programCubin(program.get());
        if (!cubin)
            return cubin.error();
        kernel.cubin = std::move(*cubin);
        if (kernel.cubin.empty() || kernel.ptx.empty()) {
            return makeError(ErrorCode::InvalidArgument,
                             "NVRTC produced no " + std::string(kernel.cubin.empty() ? "cubin" : "PTX") + " for "
                                 + options.architecture + " (an extra option such as -dlto changes the output kind)",
                             "NVRTC");
        }
        kernel.ok = true;
    }
    kernel.compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return kernel;
}

} // namespace kforge::core
