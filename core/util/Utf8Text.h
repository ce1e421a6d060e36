#pragma once
// Checks and escapes for text that comes from files: names and strings from a package or a project
// reach the terminal and error lines, and must not carry raw bytes or terminal control sequences.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kforge::core {

/// The offset of the first byte that does not start or continue a well-formed UTF-8 sequence
/// (RFC 3629: overlong forms, surrogates and code points above U+10FFFF are ill-formed), or nullopt
/// when all of `text` is valid UTF-8. nlohmann::json refuses to dump invalid UTF-8, so text from
/// outside (a kernel file, a reply, a name in a package) is checked where it enters.
std::optional<std::size_t> firstInvalidUtf8(std::string_view text);

/// True when `text` is well-formed UTF-8 (firstInvalidUtf8 finds nothing).
bool isValidUtf8(std::string_view text);

/// True when `text` holds a C0 control character, DEL or a C1 control character (U+0080-U+009F).
/// Expects valid UTF-8.
bool hasControlCharacter(std::string_view text);

/// `text` fit for one line of a terminal: control characters (C0, DEL, C1) and bytes that are not
/// part of well-formed UTF-8 are written as \xNN, a backslash as \\; everything else as is.
std::string escapeForTerminal(std::string_view text);

/// Text from a file or a reply quoted inside a one-line message: escapeForTerminal of its first
/// `maxBytes` bytes, followed by "..." when it was longer.
std::string excerptForMessage(std::string_view text, std::size_t maxBytes = 120);

/// The longest prefix of `text` of at most `maxBytes` bytes that does not end inside a UTF-8
/// sequence (so a valid text stays valid when cut).
std::string_view utf8Prefix(std::string_view text, std::size_t maxBytes);

/// `text` itself when it has at most `maxBytes` bytes; otherwise its first bytes (utf8Prefix) and
/// a note "[kforge: truncated: N bytes in all, the first M kept]" on a line of its own. The result
/// may exceed `maxBytes` by the note's length (under 100 bytes).
std::string boundedText(std::string_view text, std::size_t maxBytes);

} // namespace kforge::core
