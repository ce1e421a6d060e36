#pragma once
// Keeps a compile log to the candidate's own text before anything stores it or sends it anywhere.

#include <string>
#include <string_view>

namespace kforge::core {

/// What replaces a quoted line that is not the candidate's own.
inline constexpr std::string_view kRedactedLogLine = "[line not from the candidate source]";

/// `log` (NVRTC's log of compiling `source` under the name `sourceName`) with every quoted source
/// line that is not a line of the candidate replaced by two spaces and kRedactedLogLine.
///
/// NVRTC quotes a source line under a diagnostic: the line indented by two spaces, then a caret
/// line (`^` under the column). A quoted line is kept only when the diagnostic it belongs to (the
/// nearest unindented line above it) is located in `sourceName` (`<sourceName>(<line>): ...`) and
/// the line, without its two-space indent, is byte for byte a line of `source` (a trailing '\r'
/// ignored on both). Quotes of any other file (a CUDA header a candidate includes) are replaced.
/// NVRTC's own words (the diagnostic lines, their context lines such as "detected during
/// instantiation of ...", ptxas lines, summaries) and the caret lines are kept, so parseNvrtcLog
/// reads the same diagnostics, lines and columns from the result. Pure; any thread.
std::string redactCompileLog(std::string_view log, std::string_view source, std::string_view sourceName);

} // namespace kforge::core
