#pragma once
// Numbers written into generated CUDA source.

#include <string>

namespace kforge::core {

/// A C++ float expression for `v`, exact to float rounding ("static_cast<float>(1e-05)"); infinities
/// and NaN as bit patterns (__int_as_float).
std::string floatLiteral(double v);

} // namespace kforge::core
