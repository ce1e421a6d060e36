#include "pointwise/CudaLiteral.h"

#include <cstdio>

namespace kforge::core {

std::string floatLiteral(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    std::string text = buf;
    if (text == "inf" || text == "-inf" || text == "nan")
        text = text == "nan" ? "__int_as_float(0x7fc00000)"
                             : (text == "inf" ? "__int_as_float(0x7f800000)" : "(-__int_as_float(0x7f800000))");
    else if (text.find_first_of(".e") == std::string::npos)
        text += ".0";
    return "static_cast<float>(" + text + ")";
}

} // namespace kforge::core
