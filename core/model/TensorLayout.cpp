#include "model/TensorLayout.h"

namespace kforge::core {
namespace {

// For error lines: at most the first 8 values.
std::string someInts(const std::vector<std::int64_t>& values)
{
    std::string text;
    for (size_t i = 0; i < values.size() && i < 8; ++i)
        text += (i ? "," : "") + std::to_string(values[i]);
    if (values.size() > 8)
        text += ",... (" + std::to_string(values.size()) + " dimensions)";
    return text;
}

} // namespace

std::string tensorLayoutProblem(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides)
{
    if (sizes.size() != strides.size())
        return "sizes and strides differ in length";
    for (size_t d = 0; d < sizes.size(); ++d) {
        if (sizes[d] < 0)
            return "sizes[" + std::to_string(d) + "] is " + std::to_string(sizes[d]) + " (expected >= 0)";
        if (strides[d] < 0)
            return "strides[" + std::to_string(d) + "] is " + std::to_string(strides[d]) + " (expected >= 0)";
    }
    std::int64_t elements = 1;
    for (auto size : sizes) {
        if (size == 0)
            return {}; // an empty tensor spans no storage, whatever the other sizes
        if (__builtin_mul_overflow(elements, size, &elements) || elements > kMaxTensorElements)
            return "sizes [" + someInts(sizes) + "] hold more than 2^59 elements";
    }
    std::int64_t span = 1;
    for (size_t d = 0; d < sizes.size(); ++d) {
        std::int64_t reach = 0;
        if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &reach) || __builtin_add_overflow(span, reach, &span) ||
            span > kMaxTensorElements)
            return "sizes [" + someInts(sizes) + "] with strides [" + someInts(strides) +
                "] span more than 2^59 elements";
    }
    return {};
}

} // namespace kforge::core
