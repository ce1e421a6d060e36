#pragma once
// Failure reasons as every tool shows them: one readable line, plus an optional detail
// (docs/search.md, "Node status"). Exception text from C++ code, LibTorch's c10::Error above all,
// carries a backtrace ("Exception raised from malloc at ...", then "frame #0: ..." lines); it must
// never reach a tree file, the GUI or the CLI. This is the one place that reduces such text.
//
// Thread: pure functions; reentrant.

#include <cstddef>
#include <string>
#include <string_view>

namespace kforge::core {

/// The longest reason line kept, in bytes (a longer one is cut to end in " [truncated]").
inline constexpr std::size_t kMaxReasonLineBytes = 2048;
/// The longest reason detail kept (bytes, before the truncation note).
inline constexpr std::size_t kMaxReasonDetailBytes = 16 * 1024;

/// A failure reason reduced for storage and display.
struct FailureText {
    /// The first meaningful line: no line break, tab or other control character, trimmed, runs
    /// of blanks made one space, at most kMaxReasonLineBytes (cut at a UTF-8 boundary). Empty
    /// only when the text said nothing. Reducing a line gives the line itself.
    std::string line;
    /// The whole text without its backtrace, trimmed and bounded (kMaxReasonDetailBytes), when it
    /// says more than `line`; empty otherwise.
    std::string detail;

    bool operator==(const FailureText&) const = default;
};

/// `text` without backtrace lines: a line starting (after blanks) with "Exception raised from",
/// "frame #<digit>" or "<omitting python frames>" is dropped. For text where other lines follow a
/// trace (a process's stderr), unlike failureText() this keeps them.
std::string withoutBacktraceLines(std::string_view text);

/// Reduces exception or error text to a FailureText. A c10 message ends where its backtrace
/// begins ("\nException raised from ..."): everything from there on is dropped; then backtrace
/// lines anywhere (withoutBacktraceLines), then the first non-blank line is the reason.
FailureText failureText(std::string_view text);

/// failureText(text).line.
std::string oneLineReason(std::string_view text);

/// A detail as kept beside a reason line: `text` without backtrace lines, trimmed, bounded to
/// kMaxReasonDetailBytes (boundedText). For details that come from elsewhere (another process).
std::string reasonDetail(std::string_view text);

/// True when `text` is already a reason line: no line break, tab or other C0 control character.
bool isOneLine(std::string_view text);

} // namespace kforge::core
