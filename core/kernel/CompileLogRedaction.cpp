#include "kernel/CompileLogRedaction.h"

#include <unordered_set>
#include <vector>

namespace kforge::core {
namespace {

std::string_view withoutCarriageReturn(std::string_view line)
{
    if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
    return line;
}

std::vector<std::string_view> splitLines(std::string_view text)
{
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos)
            end = text.size();
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

// Only blanks and exactly one '^' (what NVRTC prints under a quoted line).
bool isCaretLine(std::string_view line)
{
    line = withoutCarriageReturn(line);
    const std::size_t caret = line.find_first_not_of(" \t");
    return caret != std::string_view::npos && line[caret] == '^' &&
        line.find_first_not_of(" \t", caret + 1) == std::string_view::npos;
}

bool isIndented(std::string_view line)
{
    return !line.empty() && (line.front() == ' ' || line.front() == '\t');
}

} // namespace

std::string redactCompileLog(std::string_view log, std::string_view source, std::string_view sourceName)
{
    std::unordered_set<std::string_view> sourceLines;
    for (std::string_view line : splitLines(source))
        sourceLines.insert(withoutCarriageReturn(line));
    const std::string header = std::string(sourceName) + "(";

    const std::vector<std::string_view> lines = splitLines(log);
    std::string out;
    out.reserve(log.size());
    bool inCandidateBlock = false; // the nearest unindented line above names the candidate's file
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string_view line = lines[i];
        const bool quoted = i + 1 < lines.size() && isCaretLine(lines[i + 1]) && !isCaretLine(line);
        if (!quoted && !line.empty() && !isIndented(line))
            inCandidateBlock = line.substr(0, header.size()) == header;
        if (quoted) {
            const std::string_view text = withoutCarriageReturn(line);
            const bool own = inCandidateBlock && text.substr(0, 2) == "  " && sourceLines.count(text.substr(2)) > 0;
            if (own)
                out += line;
            else
                out += "  " + std::string(kRedactedLogLine);
        } else {
            out += line;
        }
        if (i + 1 < lines.size())
            out += '\n';
    }
    return out;
}

} // namespace kforge::core
