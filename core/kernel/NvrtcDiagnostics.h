#pragma once
// Turns NVRTC's free-text log into located diagnostics for the editor and the search.

#include "kernel/KernelSource.h"

#include <string>
#include <vector>

namespace kforge::core {

/// Parses an NVRTC 13 log into diagnostics, in the order NVRTC printed them. Pure; any thread.
///
/// Recognised forms:
///  - `<file>(<line>): <severity>[ #<code>]: <message>`, where severity is error, warning, remark,
///    catastrophic error, fatal error, internal error or note (a note, e.g. "to match this "{"", becomes
///    a Remark whose message starts with "note: "). Usually followed by the offending source
///    line echoed with a two-space indent and a caret line under it; the column is the caret's
///    character offset inside the echoed line (1-based). NVRTC copies tabs of the source into the
///    caret line and prints one space per byte of other characters, so the column counts bytes of
///    the UTF-8 source line with a tab counting as one. Without a caret line the column is 0.
///    The code (e.g. "#177-D") is kept at the end of the message: `... referenced [#177-D]`.
///    Indented context lines before the echo (e.g. "argument types are: ...") and after the caret
///    (e.g. "detected during instantiation of ...") are appended to the message, one per line.
///  - Lines without a location: `nvrtc: error: ...`, `At end of source: error: ...`, `error: ...`,
///    `ptxas error|fatal|warning|info : ...` (ptxas info becomes a Remark; its indented
///    continuation lines are appended). These have an empty file and line 0.
/// Summary lines ("1 error detected in the compilation of ...", "Compilation terminated.", and the
/// "Remark: The warnings can be suppressed ..." hint) are not diagnostics and are dropped; other
/// unrecognised lines are ignored (they remain in the full log).
std::vector<Diagnostic> parseNvrtcLog(const std::string& log);

} // namespace kforge::core
