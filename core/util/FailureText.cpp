#include "util/FailureText.h"

#include "util/Utf8Text.h"

#include <cctype>

namespace kforge::core {
namespace {

constexpr std::string_view kBacktraceStart = "Exception raised from";

std::string_view trimmed(std::string_view text)
{
    const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
    while (!text.empty() && blank(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && blank(text.back()))
        text.remove_suffix(1);
    return text;
}

bool isBacktraceLine(std::string_view line)
{
    line = trimmed(line);
    if (line.starts_with(kBacktraceStart) || line.starts_with("<omitting python frames>"))
        return true;
    return line.starts_with("frame #") && line.size() > 7 && std::isdigit(static_cast<unsigned char>(line[7]));
}

// Calls `visit(line)` for each line of `text` (without its '\n').
template <class Visit>
void forEachLine(std::string_view text, Visit visit)
{
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        visit(text.substr(0, end));
        if (end == std::string_view::npos)
            break;
        text.remove_prefix(end + 1);
    }
}

// The text before a c10 backtrace: up to the first line that starts with "Exception raised from".
std::string_view beforeBacktrace(std::string_view text)
{
    for (std::size_t at = text.find(kBacktraceStart); at != std::string_view::npos;
         at = text.find(kBacktraceStart, at + 1)) {
        if (at == 0 || text[at - 1] == '\n')
            return text.substr(0, at);
    }
    return text;
}

// One line for display: control characters become spaces, runs of blanks one space.
std::string flattened(std::string_view line)
{
    std::string out;
    out.reserve(line.size());
    for (const char c : line) {
        const bool control = static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
        if (control || c == ' ') {
            if (!out.empty() && out.back() != ' ')
                out += ' ';
        } else {
            out += c;
        }
    }
    while (!out.empty() && out.back() == ' ')
        out.pop_back();
    return out;
}

} // namespace

std::string withoutBacktraceLines(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    forEachLine(text, [&](std::string_view line) {
        if (isBacktraceLine(line))
            return;
        out.append(line);
        out += '\n';
    });
    if (!text.ends_with('\n') && !out.empty())
        out.pop_back();
    return out;
}

FailureText failureText(std::string_view text)
{
    FailureText result;
    const std::string message = withoutBacktraceLines(beforeBacktrace(text));
    const std::string_view body = trimmed(message);
    int meaningfulLines = 0;
    forEachLine(body, [&](std::string_view line) {
        if (trimmed(line).empty())
            return;
        if (++meaningfulLines == 1)
            result.line = flattened(line);
    });
    // The note fits inside the bound, so that reducing a reduced line changes nothing.
    constexpr std::string_view kTruncated = " [truncated]";
    if (result.line.size() > kMaxReasonLineBytes)
        result.line =
            std::string(utf8Prefix(result.line, kMaxReasonLineBytes - kTruncated.size())) + std::string(kTruncated);
    if (meaningfulLines > 1)
        result.detail = boundedText(body, kMaxReasonDetailBytes);
    return result;
}

std::string oneLineReason(std::string_view text)
{
    return failureText(text).line;
}

std::string reasonDetail(std::string_view text)
{
    return boundedText(trimmed(withoutBacktraceLines(text)), kMaxReasonDetailBytes);
}

bool isOneLine(std::string_view text)
{
    for (const char c : text)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            return false;
    return true;
}

} // namespace kforge::core
