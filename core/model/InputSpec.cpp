#include "model/InputSpec.h"

#include <array>
#include <charconv>
#include <filesystem>
#include <utility>

namespace kforge::core {
namespace {

Error specError(const std::string& spec, const std::string& message)
{
    return makeError(ErrorCode::InvalidArgument, message, "input spec '" + spec + "'");
}

bool parseDouble(const std::string& text, double& out)
{
    if (text.empty())
        return false;
    const char* begin = text.data();
    const char* end = begin + text.size();
    auto [ptr, ec] = std::from_chars(begin, end, out);
    return ec == std::errc() && ptr == end;
}

std::string formatNumber(double value)
{
    std::array<char, 32> buffer{};
    auto [ptr, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    return ec == std::errc() ? std::string(buffer.data(), ptr) : std::string("?");
}

} // namespace

std::optional<std::string> canonicalDtypeName(const std::string& name)
{
    static const std::array<std::pair<const char*, const char*>, 22> aliases = {{
        {"float32", "float32"},   {"float", "float32"}, {"fp32", "float32"},    {"f32", "float32"},
        {"float16", "float16"},   {"half", "float16"},  {"fp16", "float16"},    {"f16", "float16"},
        {"bfloat16", "bfloat16"}, {"bf16", "bfloat16"}, {"float64", "float64"}, {"double", "float64"},
        {"fp64", "float64"},      {"int64", "int64"},   {"long", "int64"},      {"int32", "int32"},
        {"int", "int32"},         {"int16", "int16"},   {"int8", "int8"},       {"uint8", "uint8"},
        {"bool", "bool"},         {"short", "int16"},
    }};
    for (const auto& [alias, canonical] : aliases) {
        if (name == alias)
            return std::string(canonical);
    }
    return std::nullopt;
}

bool isFloatingDtype(const std::string& canonicalName)
{
    return canonicalName == "float32" || canonicalName == "float16" || canonicalName == "bfloat16" ||
        canonicalName == "float64";
}

std::string ShapeSpec::toString() const
{
    std::string text;
    for (size_t i = 0; i < sizes.size(); ++i) {
        if (i)
            text += 'x';
        text += std::to_string(sizes[i]);
    }
    text += ':' + dtype;
    if (low && high)
        text += '[' + formatNumber(*low) + ',' + formatNumber(*high) + ')';
    return text;
}

std::string InputSpec::toString() const
{
    if (file)
        return *file;
    std::string text;
    for (size_t i = 0; i < shapes.size(); ++i) {
        if (i)
            text += ' ';
        text += shapes[i].toString();
    }
    return text;
}

Result<ShapeSpec> parseShapeSpec(const std::string& text)
{
    ShapeSpec spec;
    const size_t colon = text.find(':');
    const std::string dims = text.substr(0, colon);
    if (dims.empty())
        return specError(text, "missing dimensions (expected e.g. 8x3x224x224:float16)");
    size_t start = 0;
    while (start <= dims.size()) {
        const size_t x = dims.find('x', start);
        const std::string part = dims.substr(start, x == std::string::npos ? std::string::npos : x - start);
        std::int64_t size = 0;
        auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), size);
        if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || size < 0)
            return specError(text, "dimension '" + part + "' is not a non-negative integer");
        spec.sizes.push_back(size);
        if (x == std::string::npos)
            break;
        start = x + 1;
    }
    if (colon == std::string::npos)
        return spec;

    std::string rest = text.substr(colon + 1);
    const size_t bracket = rest.find('[');
    const std::string dtypeText = rest.substr(0, bracket);
    auto dtype = canonicalDtypeName(dtypeText);
    if (!dtype)
        return specError(text, "unknown dtype '" + dtypeText + "'");
    spec.dtype = *dtype;
    if (bracket == std::string::npos)
        return spec;

    const std::string range = rest.substr(bracket);
    const size_t comma = range.find(',');
    if (range.size() < 5 || range.back() != ')' || comma == std::string::npos)
        return specError(text, "range must look like [LOW,HIGH)");
    double low = 0;
    double high = 0;
    if (!parseDouble(range.substr(1, comma - 1), low) ||
        !parseDouble(range.substr(comma + 1, range.size() - comma - 2), high))
        return specError(text, "range bounds must be numbers, as in [0,1000)");
    if (!(low < high))
        return specError(text, "range is empty: LOW must be below HIGH");
    if (spec.dtype == "bool")
        return specError(text, "bool inputs take no range");
    spec.low = low;
    spec.high = high;
    return spec;
}

Result<InputSpec> parseInputSpec(const std::vector<std::string>& values)
{
    if (values.empty())
        return makeError(ErrorCode::InvalidArgument, "no inputs given (a torch.save file or shape specs)", "--inputs");
    InputSpec spec;
    std::error_code ec;
    const bool looksLikeFile = values.size() == 1 &&
        (std::filesystem::exists(values[0], ec) || values[0].ends_with(".pt") || values[0].ends_with(".pth") ||
         values[0].find('/') != std::string::npos);
    if (looksLikeFile) {
        if (std::filesystem::is_directory(values[0], ec))
            return makeError(ErrorCode::InvalidArgument, "is a directory, not an inputs file (a torch.save file)",
                             values[0]);
        if (!std::filesystem::is_regular_file(values[0], ec))
            return makeError(ErrorCode::NotFound, "no such inputs file", values[0]);
        spec.file = values[0];
        return spec;
    }
    for (const std::string& value : values) {
        auto shape = parseShapeSpec(value);
        if (!shape)
            return shape.error();
        spec.shapes.push_back(std::move(shape.value()));
    }
    return spec;
}

} // namespace kforge::core
