#include "kernel/KernelDisassembly.h"

#include "util/ChildProcess.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace kforge::core {

namespace {

// nvdisasm's reason: its "fatal" or "error" line (warnings come first), else its first line.
std::string reasonLine(const std::string& text)
{
    std::string first;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        const std::string line = text.substr(start, end - start);
        if (line.find("fatal") != std::string::npos || line.find("error") != std::string::npos)
            return line;
        if (first.empty() && line.find_first_not_of(" \r\t") != std::string::npos)
            first = line;
        start = end + 1;
    }
    return first;
}

// A cubin written to a fresh file in the temporary directory, removed with this object.
class TemporaryCubin {
public:
    explicit TemporaryCubin(const std::vector<std::uint8_t>& bytes)
    {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/kforge-sass-XXXXXX";
        std::vector<char> name(pattern.begin(), pattern.end());
        name.push_back('\0');
        const int fd = ::mkstemp(name.data());
        if (fd < 0)
            return;
        std::size_t written = 0;
        while (written < bytes.size()) {
            const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
            if (n <= 0)
                break;
            written += static_cast<std::size_t>(n);
        }
        ::close(fd);
        m_path = name.data();
        m_complete = written == bytes.size();
    }
    ~TemporaryCubin()
    {
        if (!m_path.empty())
            ::unlink(m_path.c_str());
    }
    TemporaryCubin(const TemporaryCubin&) = delete;
    TemporaryCubin& operator=(const TemporaryCubin&) = delete;

    const std::string& path() const { return m_path; }
    bool ok() const { return !m_path.empty() && m_complete; }

private:
    std::string m_path;
    bool m_complete = false;
};

} // namespace

std::string findNvdisasm()
{
    if (const char* fromEnv = std::getenv("KFORGE_NVDISASM"); fromEnv && *fromEnv)
        return ::access(fromEnv, X_OK) == 0 ? fromEnv : std::string();
    std::vector<std::string> fallbacks;
    if (const char* cudaHome = std::getenv("CUDA_HOME"); cudaHome && *cudaHome)
        fallbacks.push_back(std::string(cudaHome) + "/bin/nvdisasm");
    fallbacks.push_back("/usr/local/cuda/bin/nvdisasm");
    return findExecutable("nvdisasm", fallbacks);
}

Result<std::string> disassembleCubin(const std::vector<std::uint8_t>& cubin)
{
    const std::string context = "SASS";
    if (cubin.empty())
        return makeError(ErrorCode::InvalidArgument, "no cubin (the kernel did not compile)", context);
    const std::string nvdisasm = findNvdisasm();
    if (nvdisasm.empty())
        return makeError(ErrorCode::Unsupported,
                         "nvdisasm not found: install the CUDA toolkit (or set KFORGE_NVDISASM to an nvdisasm)",
                         context);
    TemporaryCubin file(cubin);
    if (!file.ok())
        return makeError(ErrorCode::Internal, std::string("cannot write a temporary cubin: ") + std::strerror(errno),
                         context);
    auto run = runChildProcess(nvdisasm, {"-c", file.path()});
    if (!run)
        return run.error();
    if (run->exitCode != 0) {
        const std::string why = reasonLine(run->err.empty() ? run->out : run->err);
        return makeError(
            ErrorCode::Internal,
            "nvdisasm failed (exit " + std::to_string(run->exitCode) + ")" + (why.empty() ? "" : ": " + why), context);
    }
    std::string text = std::move(run->out);
    if (text.size() > kMaxSassBytes) {
        text.resize(kMaxSassBytes);
        text += "\n// ... cut: the listing is longer than " + std::to_string(kMaxSassBytes >> 20) + " MiB\n";
    }
    return text;
}

KernelListing kernelListing(const NvrtcCompiler& compiler, const std::string& source, const std::string& architecture)
{
    KernelListing listing;
    CompileOptions options;
    options.architecture = architecture;
    auto compiled = compiler.compile(source, options);
    if (!compiled) {
        listing.problem = compiled.error().toString();
        return listing;
    }
    if (!compiled->ok) {
        const auto error = std::find_if(compiled->diagnostics.begin(), compiled->diagnostics.end(),
                                        [](const Diagnostic& d) { return d.severity == DiagnosticSeverity::Error; });
        listing.problem = "does not compile for " + architecture +
            (error != compiled->diagnostics.end() ? ": line " + std::to_string(error->line) + ": " + error->message
                                                  : std::string());
        return listing;
    }
    listing.ptx = compiled->ptx;
    auto sass = disassembleCubin(compiled->cubin);
    if (sass)
        listing.sass = std::move(sass.value());
    else
        listing.problem = sass.error().message;
    return listing;
}

} // namespace kforge::core
