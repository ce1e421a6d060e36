#pragma once
// The current time as ISO 8601 UTC ("2026-12-01T04:42:41Z"), as project and package files record it.

#include <string>

namespace kforge::core {

std::string utcNowIso8601();

} // namespace kforge::core
