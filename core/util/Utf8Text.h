#pragma once
// Checks and escapes for text that comes from files: names and strings from a package or a project
// reach the terminal and error lines, and must not carry raw bytes or terminal control sequences.

#include <string>
#include <string_view>

namespace kforge::core {

/// True when `text` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above
/// U+10FFFF).
bool isValidUtf8(std::string_view text);

/// True when `text` holds a C0 control character, DEL or a C1 control character (U+0080-U+009F).
/// Expects valid UTF-8.
bool hasControlCharacter(std::string_view text);

/// `text` fit for one line of a terminal: control characters (C0, DEL, C1) and bytes that are not
/// part of well-formed UTF-8 are written as \xNN, a backslash as \\; everything else as is.
std::string escapeForTerminal(std::string_view text);

} // namespace kforge::core
