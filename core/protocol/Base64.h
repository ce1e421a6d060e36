#pragma once
// Base64 (RFC 4648, section 4: standard alphabet, '=' padding) for binary payloads such as cubins
// that travel inside worker-protocol JSON messages.
//
// Thread: reentrant, no state.

#include "util/Result.h"

#include <string>
#include <string_view>

namespace kforge::core {

/// Encodes arbitrary bytes; the output length is 4 * ceil(n / 3), padded with '='.
std::string base64Encode(std::string_view bytes);

/// Decodes canonical base64 only: length a multiple of 4, standard alphabet, at most two '=' and
/// only at the end, zero pad bits, no whitespace. Anything else is InvalidArgument naming the
/// offending offset, so a damaged payload is never silently turned into different bytes.
Result<std::string> base64Decode(std::string_view text);

} // namespace kforge::core
