#include "util/Utf8.h"

namespace kforge::core {

std::optional<std::size_t> firstInvalidUtf8(std::string_view text) {
  const auto byte = [&](std::size_t i) {
    return static_cast<unsigned char>(text[i]);
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char lead = byte(i);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xbf; // the allowed range of the second
                                           // byte (RFC 3629, table 3-7)
    if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead == 0xe0)
        low = 0xa0; // no overlong forms
      else if (lead == 0xed)
        high = 0x9f; // no surrogates
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead == 0xf0)
        low = 0x90;
      else if (lead == 0xf4)
        high = 0x8f; // nothing above U+10FFFF
    } else {
      return i;
    }
    if (i + length > text.size())
      return i;
    if (byte(i + 1) < low || byte(i + 1) > high)
      return i;
    for (std::size_t k = 2; k < length; ++k) {
      if ((byte(i + k) & 0xc0) != 0x80)
        return i;
    }
    i += length;
  }
  return std::nullopt;
}

} // namespace kforge::core
