#include "cast/HostNumbers.h"

#include <cmath>

namespace kforge::core {

namespace {

// Whether finite non-zero `f` is a value of a binary format with `precision` significand bits
// (the leading one included), normal exponents down to `minExponent` (the smallest normal is
// 2^minExponent) and largest finite value `largest`.
bool representable(float f, int precision, int minExponent, double largest)
{
    const double magnitude = std::fabs(static_cast<double>(f));
    if (magnitude > largest)
        return false;
    int exponent = 0;
    std::frexp(magnitude, &exponent); // magnitude = m * 2^exponent, m in [0.5, 1)
    // Bits available below the leading one: fewer for a subnormal of the format.
    const int leading = exponent - 1; // magnitude in [2^leading, 2^(leading + 1))
    const int bits = leading >= minExponent ? precision - 1 : precision - 1 - (minExponent - leading);
    if (bits < 0)
        return false;
    const double scaled = std::ldexp(magnitude, bits - leading); // an integer iff representable
    return scaled == std::floor(scaled);
}

} // namespace

std::string hostNumberOutputDtype(const std::vector<std::pair<std::string, bool>>& guardDtypesAndZeroDim,
                                  const std::string& outputDtype)
{
    if (outputDtype != "float32" && outputDtype != "float16" && outputDtype != "bfloat16")
        return "";
    for (const auto& [dtype, zeroDim] : guardDtypesAndZeroDim)
        if (!zeroDim && dtype != outputDtype)
            return "";
    return outputDtype;
}

bool hostNumberSurvivesRounding(double value, const std::string& outputDtype)
{
    const float f = static_cast<float>(value); // what eager reads a host number into
    if (std::isnan(f))
        return false;
    if (outputDtype == "float32")
        return true;
    if (f == 0.0f)
        return outputDtype == "float16" || outputDtype == "bfloat16";
    if (std::isinf(f))
        return outputDtype == "float16" || outputDtype == "bfloat16"; // infinity converts to infinity
    if (outputDtype == "float16")
        return representable(f, 11, -14, 65504.0);
    if (outputDtype == "bfloat16")
        return representable(f, 8, -126, 3.3895313892515355e38);
    return false;
}

} // namespace kforge::core
