#include "kernel/KernelSourcePolicy.h"

#include "util/Utf8Text.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace kforge::core {
namespace {

constexpr std::array<std::string_view, 10> kAllowedHeaders = {
    "cuda_fp16.h",     "cuda_bf16.h",      "cuda_fp8.h",     "cooperative_groups.h",       "mma.h",
    "cuda_pipeline.h", "cuda_awbarrier.h", "cuda_runtime.h", "device_launch_parameters.h", "math_constants.h",
};
constexpr std::array<std::string_view, 4> kAllowedPrefixes = {"cooperative_groups/", "cub/", "cuda/", "nv/"};

// Directives that neither read files nor change how later lines are read.
constexpr std::array<std::string_view, 14> kPlainDirectives = {
    "define",   "undef", "if",    "ifdef", "ifndef",  "elif",    "elifdef",
    "elifndef", "else",  "endif", "error", "warning", "include", "pragma",
};

// Identifiers that run a pragma or probe the host's files from inside an expression; for the
// probes also the spellings preprocessors use internally (__has_include__, ...).
bool isForbiddenIdentifier(std::string_view word)
{
    if (word == "_Pragma" || word == "__pragma")
        return true;
    return word.substr(0, 13) == "__has_include" || word.substr(0, 11) == "__has_embed";
}

constexpr std::array<std::string_view, 5> kRawStringPrefixes = {"R", "LR", "uR", "UR", "u8R"};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& list, std::string_view word)
{
    return std::find(list.begin(), list.end(), word) != list.end();
}

bool isIdentifierStart(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool isIdentifierChar(char c)
{
    return isIdentifierStart(c) || (c >= '0' && c <= '9');
}

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

bool isBlank(char c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

// Punctuator characters of C++ (the quotes and '#' are handled on their own).
bool isPunctuatorChar(char c)
{
    static constexpr std::string_view kChars = "{}[]()<>;:,.?!~+-*/%^&|=";
    return kChars.find(c) != std::string_view::npos;
}

// The violation at byte `offset` of `source`: 1-based line (lines end at '\n', as NVRTC counts them)
// and byte column.
SourcePolicyViolation locate(std::string_view source, std::size_t offset, std::string reason)
{
    SourcePolicyViolation violation;
    violation.line = 1 + static_cast<int>(std::count(source.begin(), source.begin() + offset, '\n'));
    const std::size_t lineStart = offset == 0 ? std::string_view::npos : source.rfind('\n', offset - 1);
    violation.column = static_cast<int>(offset - (lineStart == std::string_view::npos ? 0 : lineStart + 1)) + 1;
    violation.reason = std::move(reason);
    return violation;
}

// Scans the source after the checks on raw bytes (so there is no lone '\r'). `m_text` is the source
// with backslash-newline splices removed and "\r\n" turned into '\n'; `m_origin[i]` is the offset in
// the original source of m_text[i], so that refusals name physical lines.
class Scanner {
public:
    explicit Scanner(std::string_view source) : m_source(source)
    {
        m_text.reserve(source.size());
        m_origin.reserve(source.size() + 1);
        for (std::size_t i = 0; i < source.size(); ++i) {
            const char c = source[i];
            if (c == '\\' && i + 1 < source.size() && source[i + 1] == '\n') {
                ++i;
                continue;
            }
            if (c == '\\' && i + 2 < source.size() && source[i + 1] == '\r' && source[i + 2] == '\n') {
                i += 2;
                continue;
            }
            if (c == '\r' && i + 1 < source.size() && source[i + 1] == '\n')
                continue; // the '\n' that follows ends the line
            m_text += c;
            m_origin.push_back(i);
        }
        m_origin.push_back(source.size());
    }

    std::optional<SourcePolicyViolation> run()
    {
        bool lineStart = true;
        while (m_pos < m_text.size()) {
            if (!skipBlank())
                return m_violation;
            if (m_pos >= m_text.size())
                break;
            if (m_text[m_pos] == '\n') {
                ++m_pos;
                lineStart = true;
                continue;
            }
            if (lineStart) {
                lineStart = false;
                if (const std::size_t hash = hashLength(m_pos); hash > 0) {
                    if (!directive(hash))
                        return m_violation;
                    continue;
                }
            }
            if (!token())
                return m_violation;
        }
        return std::nullopt;
    }

private:
    bool fail(std::size_t logicalOffset, std::string reason)
    {
        const std::size_t offset = m_origin[std::min(logicalOffset, m_origin.size() - 1)];
        m_violation = locate(m_source, offset, std::move(reason));
        return false;
    }

    bool at(std::size_t pos, std::string_view word) const
    {
        return pos <= m_text.size() && m_text.compare(pos, word.size(), word) == 0;
    }

    // 1 for '#', 2 for the digraph "%:", 0 otherwise; a pasting operator is not a '#'.
    std::size_t hashLength(std::size_t pos) const
    {
        if (at(pos, "##") || at(pos, "%:%:"))
            return 0;
        if (at(pos, "#"))
            return 1;
        if (at(pos, "%:"))
            return 2;
        return 0;
    }

    // Skips spaces and comments; a block comment may span lines (it is one space, so the logical
    // line goes on after it). Stops at '\n' or the end.
    bool skipBlank()
    {
        while (m_pos < m_text.size()) {
            const char c = m_text[m_pos];
            if (isBlank(c)) {
                ++m_pos;
            } else if (at(m_pos, "//")) {
                const std::size_t end = m_text.find('\n', m_pos);
                m_pos = end == std::string::npos ? m_text.size() : end;
            } else if (at(m_pos, "/*")) {
                const std::size_t end = m_text.find("*/", m_pos + 2);
                if (end == std::string::npos)
                    return fail(m_pos, "unterminated /* comment");
                m_pos = end + 2;
            } else {
                break;
            }
        }
        return true;
    }

    bool atLineEnd() const { return m_pos >= m_text.size() || m_text[m_pos] == '\n'; }

    std::string_view identifier()
    {
        const std::size_t begin = m_pos;
        while (m_pos < m_text.size() && isIdentifierChar(m_text[m_pos]))
            ++m_pos;
        return std::string_view(m_text).substr(begin, m_pos - begin);
    }

    // A '#' (or "%:") that starts a logical line, `hash` characters long.
    bool directive(std::size_t hash)
    {
        const std::size_t start = m_pos;
        m_pos += hash;
        if (!skipBlank())
            return false;
        if (atLineEnd())
            return true; // the null directive
        if (isDigit(m_text[m_pos]))
            return fail(start, "line markers ('# <number> \"file\"') are not allowed");
        if (!isIdentifierStart(m_text[m_pos]))
            return fail(start,
                        "'#' followed by '" + excerptForMessage(m_text.substr(m_pos, 1)) + "' is not a directive");
        const std::string_view name = identifier();
        if (name == "include")
            return include(start);
        if (name == "pragma")
            return pragma(start);
        if (!contains(kPlainDirectives, name))
            return fail(start, "#" + excerptForMessage(name) + " is not allowed (" + allowedDirectivesText() + ")");
        if ((name == "define" || name == "undef") && m_firstMacroOffset == std::string::npos)
            m_firstMacroOffset = start;
        return true; // the rest of the line is read as tokens
    }

    static std::string allowedDirectivesText()
    {
        return "allowed directives: #include, #define, #undef, #if, #ifdef, #ifndef, #elif, #else, #endif, "
               "#error, #warning, #pragma";
    }

    bool include(std::size_t start)
    {
        if (!skipBlank())
            return false;
        if (atLineEnd())
            return fail(start, "#include without a header name");
        const char open = m_text[m_pos];
        if (open != '<' && open != '"')
            return fail(start,
                        "#include of a macro or computed name is not allowed: write the header literally, "
                        "e.g. #include <cuda_bf16.h>");
        const char close = open == '<' ? '>' : '"';
        const std::size_t lineEnd = std::min(m_text.find('\n', m_pos), m_text.size());
        const std::size_t end = m_text.find(close, m_pos + 1);
        if (end == std::string::npos || end > lineEnd)
            return fail(start,
                        "#include " + excerptForMessage(m_text.substr(m_pos, lineEnd - m_pos)) +
                            ": unterminated header name");
        const std::string_view name = std::string_view(m_text).substr(m_pos + 1, end - m_pos - 1);
        const std::string spelled = open + excerptForMessage(name) + close;
        if (!isAllowedKernelHeader(name))
            return fail(start,
                        "#include " + spelled + " is not an allowed header (allowed: " + allowedKernelHeadersText() +
                            ")");
        if (m_firstMacroOffset != std::string::npos) {
            const SourcePolicyViolation macro = locate(m_source, m_origin[m_firstMacroOffset], {});
            return fail(start,
                        "#include " + spelled + " after the #define or #undef on line " + std::to_string(macro.line) +
                            ": put every #include before the first #define or #undef (a macro must not change "
                            "what a CUDA header includes)");
        }
        m_pos = end + 1;
        if (!skipBlank())
            return false;
        if (!atLineEnd())
            return fail(start, "#include " + spelled + " is followed by more text on its line");
        return true;
    }

    bool pragma(std::size_t start)
    {
        static const std::string kAllowed = "allowed: #pragma unroll [count], #pragma nounroll, #pragma once";
        if (!skipBlank())
            return false;
        if (atLineEnd() || !isIdentifierStart(m_text[m_pos]))
            return fail(start, "this #pragma is not allowed (" + kAllowed + ")");
        const std::string_view name = identifier();
        if (name == "once" || name == "nounroll") {
            if (!skipBlank())
                return false;
            if (!atLineEnd())
                return fail(start, "#pragma " + std::string(name) + " takes no arguments");
            return true;
        }
        if (name != "unroll")
            return fail(start, "#pragma " + excerptForMessage(name) + " is not allowed (" + kAllowed + ")");
        // unroll [count]: the count is an integral constant expression; no string or character literal.
        for (;;) {
            if (!skipBlank())
                return false;
            if (atLineEnd())
                return true;
            if (m_text[m_pos] == '"' || m_text[m_pos] == '\'')
                return fail(start, "#pragma unroll takes a count, not a string");
            if (!token())
                return false;
        }
    }

    // One token outside a directive's name (the pos is at a non-blank character that is not a line end).
    bool token()
    {
        const char c = m_text[m_pos];
        if (isIdentifierStart(c)) {
            const std::size_t begin = m_pos;
            const std::string_view word = identifier();
            if (isForbiddenIdentifier(word))
                return fail(begin, std::string(word) + " is not allowed (it runs a pragma or probes the host's files)");
            if (m_pos < m_text.size() && m_text[m_pos] == '"' && contains(kRawStringPrefixes, word))
                return fail(begin, "raw string literals (" + std::string(word) + "\"...\") are not allowed");
            return true;
        }
        if (isDigit(c) || (c == '.' && m_pos + 1 < m_text.size() && isDigit(m_text[m_pos + 1]))) {
            number();
            return true;
        }
        if (c == '"' || c == '\'') {
            literal(c);
            return true;
        }
        if (at(m_pos, "##") || at(m_pos, "%:%:"))
            return fail(m_pos, "token pasting (##) is not allowed (it can assemble _Pragma or __has_include)");
        if (at(m_pos, "<<<"))
            return fail(m_pos,
                        "'<<<': device-side kernel launches (dynamic parallelism) are not available; the "
                        "launch plan launches every kernel");
        if (c == '#' || isPunctuatorChar(c)) {
            ++m_pos;
            return true;
        }
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x80)
            return fail(m_pos, "a non-ASCII character outside comments and string literals is not allowed");
        if (c == '\\')
            return fail(m_pos, "a backslash outside string literals is only allowed at the end of a line");
        if (byte < 0x20 || byte == 0x7F)
            return fail(m_pos, "control character " + std::to_string(byte) + " outside comments and string literals");
        return fail(m_pos, "character '" + std::string(1, c) + "' is not allowed outside comments and string literals");
    }

    // A preprocessing number: a digit (or '.' digit), then digits, letters, '_', '.', a digit
    // separator "'x", and a sign after e, E, p or P (so 1'000 and 1e+5 are one token each).
    void number()
    {
        ++m_pos;
        while (m_pos < m_text.size()) {
            const char c = m_text[m_pos];
            if ((c == '+' || c == '-') &&
                (m_text[m_pos - 1] == 'e' || m_text[m_pos - 1] == 'E' || m_text[m_pos - 1] == 'p' ||
                 m_text[m_pos - 1] == 'P')) {
                ++m_pos;
            } else if (c == '\'' && m_pos + 1 < m_text.size() && isIdentifierChar(m_text[m_pos + 1])) {
                m_pos += 2;
            } else if (isIdentifierChar(c) || c == '.') {
                ++m_pos;
            } else {
                break;
            }
        }
    }

    // A string or character literal; it ends at its closing quote or, unterminated, at the line end
    // (as the preprocessor reads one in a skipped group).
    void literal(char quote)
    {
        ++m_pos;
        while (m_pos < m_text.size() && m_text[m_pos] != '\n') {
            const char c = m_text[m_pos];
            if (c == '\\' && m_pos + 1 < m_text.size() && m_text[m_pos + 1] != '\n') {
                m_pos += 2;
                continue;
            }
            ++m_pos;
            if (c == quote)
                return;
        }
    }

    std::string_view m_source;
    std::string m_text;
    std::vector<std::size_t> m_origin;
    std::size_t m_pos = 0;
    std::size_t m_firstMacroOffset = std::string::npos; // logical offset of the first #define/#undef
    std::optional<SourcePolicyViolation> m_violation;
};

// "??" followed by one of the nine trigraph characters.
std::size_t firstTrigraph(std::string_view source)
{
    static constexpr std::string_view kThird = "=/'()!<>-";
    for (std::size_t pos = source.find("??"); pos != std::string_view::npos; pos = source.find("??", pos + 1)) {
        if (pos + 2 < source.size() && kThird.find(source[pos + 2]) != std::string_view::npos)
            return pos;
    }
    return std::string_view::npos;
}

} // namespace

bool isAllowedKernelHeader(std::string_view name)
{
    if (name.empty() || name.front() == '/')
        return false;
    for (char c : name) {
        if (!isIdentifierChar(c) && c != '.' && c != '/' && c != '-')
            return false;
    }
    for (std::size_t begin = 0; begin <= name.size();) {
        const std::size_t end = std::min(name.find('/', begin), name.size());
        const std::string_view component = name.substr(begin, end - begin);
        if (component.empty() || component == "." || component == "..")
            return false;
        begin = end + 1;
    }
    if (contains(kAllowedHeaders, name))
        return true;
    return std::any_of(kAllowedPrefixes.begin(), kAllowedPrefixes.end(),
                       [&](std::string_view prefix) { return name.substr(0, prefix.size()) == prefix; });
}

const char* allowedKernelHeadersText()
{
    return "cuda_fp16.h, cuda_bf16.h, cuda_fp8.h, cooperative_groups.h, cooperative_groups/..., mma.h, "
           "cuda_pipeline.h, cuda_awbarrier.h, cuda_runtime.h, device_launch_parameters.h, math_constants.h, "
           "cub/..., cuda/... (libcu++: cuda/std/...), nv/...";
}

std::optional<SourcePolicyViolation> checkKernelSource(std::string_view source)
{
    if (source.size() > kMaxKernelSourceBytes) {
        SourcePolicyViolation violation;
        violation.reason = "the source is " + std::to_string(source.size()) + " bytes; the limit is " +
            std::to_string(kMaxKernelSourceBytes) + " (256 KiB)";
        return violation;
    }
    if (const std::size_t nul = source.find('\0'); nul != std::string_view::npos)
        return locate(source, nul, "a NUL byte is not allowed in a source");
    if (const auto bad = firstInvalidUtf8(source))
        return locate(source, *bad, "the source is not valid UTF-8");
    // NVRTC reads a lone CR as a space: "#\rinclude" is a directive, which a line end would split.
    for (std::size_t cr = source.find('\r'); cr != std::string_view::npos; cr = source.find('\r', cr + 1)) {
        if (cr + 1 == source.size() || source[cr + 1] != '\n')
            return locate(source, cr, "a carriage return not followed by a line feed is not allowed");
    }
    if (const std::size_t trigraph = firstTrigraph(source); trigraph != std::string_view::npos)
        return locate(source, trigraph, "trigraph '" + std::string(source.substr(trigraph, 3)) + "' is not allowed");
    return Scanner(source).run();
}

CompiledKernel refusedCompile(const SourcePolicyViolation& violation, const std::string& sourceName)
{
    const std::string message = "refused before compiling: " + violation.reason;
    CompiledKernel kernel;
    kernel.ok = false;
    kernel.log = violation.line > 0 ? sourceName + "(" + std::to_string(violation.line) + "): error: " + message
                                    : "error: " + message + " (" + sourceName + ")";
    kernel.log += "\n";
    Diagnostic diagnostic;
    diagnostic.file = sourceName;
    diagnostic.line = violation.line;
    diagnostic.column = violation.column;
    diagnostic.severity = DiagnosticSeverity::Error;
    diagnostic.message = message;
    kernel.diagnostics.push_back(std::move(diagnostic));
    return kernel;
}

} // namespace kforge::core
