#pragma once
// Which tensor layouts (sizes and strides in elements) a project file or a package may describe.
// Everything downstream multiplies sizes and strides (element counts, byte counts, storage spans),
// so a layout is checked once, where it is read, for values that make those products overflow.

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::core {

/// The largest element count and storage span a layout may have: the byte count of a tensor of any
/// dtype (at most 16 bytes an element) then fits in a signed 64-bit integer.
inline constexpr std::int64_t kMaxTensorElements = std::int64_t{1} << 59;

/// Empty when `sizes` and `strides` describe a layout a project can hold: the same rank, every size
/// and stride >= 0, and an element count and storage span of at most kMaxTensorElements (computed
/// without overflow). Otherwise why not, naming the field: "sizes[1] is -3 (expected >= 0)",
/// "sizes [4611686018427387904,64] hold more than 2^59 elements".
std::string tensorLayoutProblem(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides);

} // namespace kforge::core
