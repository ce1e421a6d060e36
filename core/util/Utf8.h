#pragma once
// UTF-8 validation of text that came from outside (a kernel file, a reply, a
// name in a package) before it reaches JSON: nlohmann::json refuses to dump
// invalid UTF-8 with an exception, so text is checked where it enters and
// refused with its origin named.

#include <cstddef>
#include <optional>
#include <string_view>

namespace kforge::core {

/// The offset of the first byte that does not start or continue a well-formed
/// UTF-8 sequence (overlong forms, surrogates and code points above U+10FFFF
/// are ill-formed), or nullopt when all of `text` is valid UTF-8.
std::optional<std::size_t> firstInvalidUtf8(std::string_view text);

} // namespace kforge::core
