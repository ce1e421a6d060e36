#include "kernel/NvrtcDiagnostics.h"

#include "kernel/PtxasResources.h"

#include <cctype>
#include <optional>
#include <string_view>

namespace kforge::core {
namespace {

// Severity words as EDG/NVRTC print them, longest first so "fatal error" wins over "error".
struct SeverityWord {
    std::string_view word;
    DiagnosticSeverity severity;
    bool isNote;
};
constexpr SeverityWord kSeverityWords[] = {
    {"catastrophic error", DiagnosticSeverity::Error, false},
    {"command-line error", DiagnosticSeverity::Error, false},
    {"internal error", DiagnosticSeverity::Error, false},
    {"fatal error", DiagnosticSeverity::Error, false},
    {"error", DiagnosticSeverity::Error, false},
    {"warning", DiagnosticSeverity::Warning, false},
    {"remark", DiagnosticSeverity::Remark, false},
    {"note", DiagnosticSeverity::Remark, true},
};

// "<severity>[ #<code>]: <message>" at the start of `text`.
struct SeverityAndMessage {
    DiagnosticSeverity severity;
    bool isNote;
    std::string code; // e.g. "177-D"; empty when absent
    std::string message;
};

std::optional<SeverityAndMessage> parseSeverityAndMessage(std::string_view text)
{
    for (const SeverityWord& candidate : kSeverityWords) {
        if (text.substr(0, candidate.word.size()) != candidate.word)
            continue;
        std::string_view rest = text.substr(candidate.word.size());
        std::string code;
        if (rest.substr(0, 2) == " #") {
            const std::size_t colon = rest.find(':');
            if (colon == std::string_view::npos)
                return std::nullopt;
            code = std::string(rest.substr(2, colon - 2));
            if (code.empty() || code.find(' ') != std::string::npos)
                return std::nullopt;
            rest = rest.substr(colon);
        }
        if (rest.substr(0, 2) == ": ")
            return SeverityAndMessage{candidate.severity, candidate.isNote, code, std::string(rest.substr(2))};
        if (rest == ":")
            return SeverityAndMessage{candidate.severity, candidate.isNote, code, {}};
        return std::nullopt;
    }
    return std::nullopt;
}

struct LocatedHeader {
    std::string file;
    int line = 0;
    SeverityAndMessage body;
};

// "<file>(<line>): <severity>...": the first "(digits): " whose tail parses as a severity, so file
// names containing parentheses still work.
std::optional<LocatedHeader> parseLocatedHeader(std::string_view text)
{
    // Echoed source lines are indented; a header never is.
    if (text.empty() || text.front() == ' ' || text.front() == '\t')
        return std::nullopt;
    for (std::size_t open = text.find('('); open != std::string_view::npos; open = text.find('(', open + 1)) {
        if (open == 0)
            continue;
        std::size_t pos = open + 1;
        while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])))
            ++pos;
        if (pos == open + 1 || pos - open - 1 > 9 || text.substr(pos, 3) != "): ")
            continue;
        std::optional<SeverityAndMessage> body = parseSeverityAndMessage(text.substr(pos + 3));
        if (!body)
            continue;
        LocatedHeader header;
        header.file = std::string(text.substr(0, open));
        header.line = std::stoi(std::string(text.substr(open + 1, pos - open - 1)));
        header.body = std::move(*body);
        return header;
    }
    return std::nullopt;
}

struct UnlocatedLine {
    SeverityAndMessage body;
    bool fromPtxas = false;
};

// Location-less diagnostics: "nvrtc: error: ...", "At end of source: error: ...", "error: ...",
// "ptxas error   : ...".
std::optional<UnlocatedLine> parseUnlocated(std::string_view text)
{
    if (text.substr(0, 5) == "ptxas") {
        std::string_view rest = text.substr(5);
        const std::size_t wordStart = rest.find_first_not_of(' ');
        if (wordStart == std::string_view::npos || wordStart == 0)
            return std::nullopt;
        rest = rest.substr(wordStart);
        const std::size_t wordEnd = rest.find_first_of(" :");
        const std::string_view word = rest.substr(0, wordEnd);
        if (wordEnd == std::string_view::npos)
            return std::nullopt;
        rest = rest.substr(wordEnd);
        const std::size_t colon = rest.find_first_not_of(' ');
        if (colon == std::string_view::npos || rest[colon] != ':')
            return std::nullopt;
        rest = rest.substr(colon + 1);
        if (!rest.empty() && rest.front() == ' ')
            rest.remove_prefix(1);
        DiagnosticSeverity severity;
        if (word == "error" || word == "fatal")
            severity = DiagnosticSeverity::Error;
        else if (word == "warning")
            severity = DiagnosticSeverity::Warning;
        else if (word == "info")
            severity = DiagnosticSeverity::Remark;
        else
            return std::nullopt;
        return UnlocatedLine{SeverityAndMessage{severity, false, {}, "ptxas: " + std::string(rest)}, true};
    }
    std::string suffix;
    std::string_view rest = text;
    if (rest.substr(0, 7) == "nvrtc: ") {
        rest.remove_prefix(7);
    } else if (rest.substr(0, 18) == "At end of source: ") {
        rest.remove_prefix(18);
        suffix = " (at end of source)";
    }
    std::optional<SeverityAndMessage> body = parseSeverityAndMessage(rest);
    if (!body)
        return std::nullopt;
    body->message += suffix;
    return UnlocatedLine{std::move(*body), false};
}

bool isSummaryLine(std::string_view text)
{
    return text.find("detected in the compilation of") != std::string_view::npos || text == "Compilation terminated." ||
        text.substr(0, 38) == "Remark: The warnings can be suppressed";
}

// Whitespace, one '^', whitespace. Returns the caret's offset or npos.
std::size_t caretOffset(std::string_view text)
{
    const std::size_t caret = text.find_first_not_of(" \t");
    if (caret == std::string_view::npos || text[caret] != '^')
        return std::string_view::npos;
    if (text.find_first_not_of(" \t", caret + 1) != std::string_view::npos)
        return std::string_view::npos;
    return caret;
}

std::string_view trim(std::string_view text)
{
    const std::size_t begin = text.find_first_not_of(" \t");
    if (begin == std::string_view::npos)
        return {};
    const std::size_t end = text.find_last_not_of(" \t");
    return text.substr(begin, end - begin + 1);
}

std::vector<std::string_view> splitLines(std::string_view log)
{
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    while (start < log.size()) {
        std::size_t end = log.find('\n', start);
        if (end == std::string_view::npos)
            end = log.size();
        std::string_view line = log.substr(start, end - start);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        // NVRTC NUL-terminates its log; a caller may pass the buffer with the terminator.
        while (!line.empty() && line.back() == '\0')
            line.remove_suffix(1);
        lines.push_back(line);
        start = end + 1;
    }
    return lines;
}

std::string composeMessage(const SeverityAndMessage& body)
{
    std::string message = body.isNote ? "note: " + body.message : body.message;
    if (!body.code.empty())
        message += " [#" + body.code + "]";
    return message;
}

bool startsNewEntry(std::string_view text)
{
    return parseLocatedHeader(text) || parseUnlocated(text) || isSummaryLine(text);
}

} // namespace

std::vector<Diagnostic> parseNvrtcLog(const std::string& log)
{
    std::vector<Diagnostic> diagnostics;
    const std::vector<std::string_view> lines = splitLines(log);
    bool lastWasPtxas = false;
    std::size_t i = 0;
    while (i < lines.size()) {
        const std::string_view line = lines[i];
        if (isPtxasReportLine(line)) { // resource use (--ptxas-options=-v): PtxasResources.h reads it
            lastWasPtxas = false;
            ++i;
            continue;
        }
        if (std::optional<LocatedHeader> header = parseLocatedHeader(line)) {
            Diagnostic diagnostic;
            diagnostic.file = std::move(header->file);
            diagnostic.line = header->line;
            diagnostic.severity = header->body.severity;
            diagnostic.message = composeMessage(header->body);

            // The block: lines up to a blank line or the next entry (with -brief-diag there are
            // no blank lines between entries).
            std::size_t end = i + 1;
            while (end < lines.size() && !lines[end].empty() && !startsNewEntry(lines[end]))
                ++end;
            std::size_t caretLine = end;
            for (std::size_t k = i + 2; k < end; ++k) {
                if (caretOffset(lines[k]) != std::string_view::npos) {
                    caretLine = k;
                    break;
                }
            }
            if (caretLine != end) {
                const std::string_view echo = lines[caretLine - 1];
                const std::string_view caret = lines[caretLine];
                // NVRTC indents both the echoed source line and the caret line by two spaces.
                const std::size_t indent = (echo.substr(0, 2) == "  " && caret.substr(0, 2) == "  ") ? 2 : 0;
                diagnostic.column = static_cast<int>(caretOffset(caret) - indent) + 1;
            }
            for (std::size_t k = i + 1; k < end; ++k) {
                if (caretLine != end && (k == caretLine || k + 1 == caretLine))
                    continue;
                const std::string_view context = trim(lines[k]);
                if (!context.empty())
                    diagnostic.message += "\n" + std::string(context);
            }
            diagnostics.push_back(std::move(diagnostic));
            lastWasPtxas = false;
            i = end;
            continue;
        }
        if (std::optional<UnlocatedLine> unlocated = parseUnlocated(line)) {
            Diagnostic diagnostic;
            diagnostic.severity = unlocated->body.severity;
            diagnostic.message = composeMessage(unlocated->body);
            diagnostics.push_back(std::move(diagnostic));
            lastWasPtxas = unlocated->fromPtxas;
        } else if (lastWasPtxas && line.substr(0, 5) == "ptxas" && !trim(line.substr(5)).empty()) {
            // "ptxas         .     0 bytes stack frame, ...": continues the previous ptxas line.
            std::string_view context = trim(line.substr(5));
            if (context.substr(0, 1) == ".")
                context = trim(context.substr(1));
            diagnostics.back().message += "\n" + std::string(context);
        } else {
            lastWasPtxas = false;
        }
        ++i;
    }
    return diagnostics;
}

} // namespace kforge::core
