#include "kernel/NvrtcCompiler.h"

#include "kernel/CompileLogRedaction.h"
#include "kernel/KernelSourcePolicy.h"
#include "kernel/NvrtcCompilerPath.h"
#include "kernel/NvrtcDiagnostics.h"
#include "nvrtc_run/NvrtcRun.h"
#include "util/Sha256.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#ifndef KFORGE_CUDA_INCLUDE_DIR
#error "KFORGE_CUDA_INCLUDE_DIR must name the CUDA toolkit include directory (set by core/kernel/CMakeLists.txt)"
#endif

namespace kforge::core {
namespace {

std::string resolveIncludeDir(std::string requested)
{
    if (!requested.empty())
        return requested;
    // getenv is read once per compiler object; nothing in the engine sets this variable at run time.
    if (const char* env = std::getenv("KFORGE_CUDA_INCLUDE"); env != nullptr && *env != '\0')
        return env;
    return KFORGE_CUDA_INCLUDE_DIR;
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

NvrtcCompiler::NvrtcCompiler(std::string cudaIncludeDir, std::string compilerExecutable)
    : m_cudaIncludeDir(resolveIncludeDir(std::move(cudaIncludeDir))), m_nvrtcVersion(nvrtcLibraryVersion()),
      m_processes(std::make_shared<NvrtcProcessPool>(
          compilerExecutable.empty() ? nvrtcCompilerPath() : std::move(compilerExecutable), m_nvrtcVersion))
{
}

const std::string& NvrtcCompiler::compilerExecutable() const
{
    return m_processes->executable();
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
                         "invalid GPU architecture \"" + options.architecture +
                             "\" (expected sm_NN, sm_NNa or sm_NNf, e.g. sm_90)",
                         "compile options");
    }
    std::vector<std::string> list;
    list.reserve(8 + options.extraOptions.size());
    list.push_back("--gpu-architecture=" + options.architecture);
    list.push_back("--std=c++17");
    list.push_back("-default-device");
    // A quoted #include is not looked up next to the source (the process's working directory).
    list.push_back("--no-source-include");
    if (options.lineInfo)
        list.push_back("-lineinfo");
    // ptxas's resource report (registers, shared memory, spills) into the log: PtxasResources.h.
    list.push_back("--ptxas-options=-v");
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
    appendField(canonical, "kforge-nvrtc-compile-v3"); // v3: ptxas's resource report in the log
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
    NvrtcCompileRequest request{source, sourceName, std::move(*list), options.timeout};
    Result<NvrtcCompileReply> reply = m_processes->compile(request, options.stop);
    if (!reply)
        return reply.error();
    if (reply->status == NvrtcStatus::InvalidOption)
        return makeError(ErrorCode::InvalidArgument, "NVRTC rejected the compile options: " + reply->failure, "NVRTC");
    if (reply->status == NvrtcStatus::NvrtcFailed)
        return makeError(ErrorCode::Internal, reply->failure, "NVRTC");

    // NVRTC ends ptxas's verbose report with a NUL before ptxas's own messages: a line break here.
    std::replace(reply->log.begin(), reply->log.end(), '\0', '\n');
    reply->log = redactCompileLog(reply->log, source, sourceName); // before the log is stored, parsed or shown
    Result<CompiledKernel> kernel =
        toCompiledKernel(std::move(*reply), std::move(*key), options.architecture, sourceName);
    if (kernel)
        kernel->compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return kernel;
}

Result<CompiledKernel> NvrtcCompiler::toCompiledKernel(NvrtcCompileReply reply, std::string key,
                                                       const std::string& architecture,
                                                       const std::string& sourceName) const
{
    CompiledKernel kernel;
    kernel.cacheKey = std::move(key);
    if (reply.status == NvrtcStatus::NotFinished) {
        kernel.unfinished = reply.failure;
        kernel.log = reply.failure + "\n";
        kernel.diagnostics.push_back(Diagnostic{sourceName, 0, 0, DiagnosticSeverity::Error, reply.failure});
        return kernel;
    }
    kernel.log = std::move(reply.log);
    kernel.diagnostics = parseNvrtcLog(kernel.log);
    kernel.ptx = std::move(reply.ptx);
    if (reply.status == NvrtcStatus::Compiled) {
        kernel.cubin = std::move(reply.cubin);
        if (kernel.cubin.empty() || kernel.ptx.empty()) {
            return makeError(ErrorCode::InvalidArgument,
                             "NVRTC produced no " + std::string(kernel.cubin.empty() ? "cubin" : "PTX") + " for " +
                                 architecture + " (an extra option such as -dlto changes the output kind)",
                             "NVRTC");
        }
        kernel.ok = true;
    }
    return kernel;
}

} // namespace kforge::core
