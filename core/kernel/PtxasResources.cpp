#include "kernel/PtxasResources.h"

#include <regex>

namespace kforge::core {

namespace {

std::vector<std::string_view> linesOf(std::string_view text)
{
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = text.find('\n', start);
        std::string_view line =
            text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        lines.push_back(line);
        if (end == std::string_view::npos)
            break;
        start = end + 1;
    }
    return lines;
}

std::int64_t bytesBefore(const std::string& text, const std::regex& pattern)
{
    std::smatch match;
    return std::regex_search(text, match, pattern) ? std::stoll(match[1].str()) : 0;
}

} // namespace

bool isPtxasReportLine(std::string_view line)
{
    static const std::regex report(
        R"(^ptxas\s+(info\s+:\s+(Compiling entry function|Function properties for|Used \d+ registers|\d+ bytes gmem|Compile time)|\.\s+\d+ bytes stack frame))");
    const std::string text(line);
    return std::regex_search(text, report);
}

std::vector<KernelResources> parsePtxasResources(std::string_view log)
{
    static const std::regex entry(
        R"(^ptxas\s+info\s+:\s+(?:Compiling entry function|Function properties for)\s+'?([A-Za-z_$][A-Za-z0-9_$]*)'?)");
    static const std::regex used(R"(^ptxas\s+info\s+:\s+Used (\d+) registers)");
    static const std::regex barriers(R"(used (\d+) barriers)");
    static const std::regex smem(R"((\d+) bytes smem)");
    static const std::regex stack(R"((\d+) bytes stack frame)");
    static const std::regex spillStores(R"((\d+) bytes spill stores)");
    static const std::regex spillLoads(R"((\d+) bytes spill loads)");
    std::vector<KernelResources> kernels;
    KernelResources current;
    for (std::string_view view : linesOf(log)) {
        const std::string line(view);
        std::smatch match;
        if (std::regex_search(line, match, entry)) {
            if (match[1].str() != current.entry)
                current = KernelResources{match[1].str()};
        } else if (line.find("bytes stack frame") != std::string::npos) {
            current.stackFrameBytes = bytesBefore(line, stack);
            current.spillStoreBytes = bytesBefore(line, spillStores);
            current.spillLoadBytes = bytesBefore(line, spillLoads);
        } else if (std::regex_search(line, match, used) && !current.entry.empty()) {
            current.registers = std::stoi(match[1].str());
            current.barriers = static_cast<int>(bytesBefore(line, barriers));
            current.sharedBytes = bytesBefore(line, smem);
            kernels.push_back(current);
            current = KernelResources{};
        }
    }
    return kernels;
}

} // namespace kforge::core
