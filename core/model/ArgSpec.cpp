#include "model/ArgSpec.h"

#include <sstream>

namespace kforge::core {
namespace {

std::string joinInts(const std::vector<std::int64_t>& values)
{
    std::string text;
    for (size_t i = 0; i < values.size(); ++i) {
        if (i)
            text += ',';
        text += std::to_string(values[i]);
    }
    return text;
}

} // namespace

bool TensorSpec::isContiguous() const
{
    std::int64_t expected = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
        if (sizes[i] != 1 && strides[i] != expected)
            return false;
        expected *= sizes[i];
    }
    return true;
}

std::int64_t TensorSpec::numel() const
{
    std::int64_t n = 1;
    for (auto s : sizes)
        n *= s;
    return n;
}

std::int64_t storageSpanElements(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides)
{
    std::int64_t span = 1;
    for (size_t d = 0; d < sizes.size(); ++d) {
        if (sizes[d] == 0)
            return 0;
        span += (sizes[d] - 1) * strides[d];
    }
    return span;
}

std::int64_t TensorSpec::storageSpan() const
{
    return storageSpanElements(sizes, strides);
}

std::string TensorSpec::toShortString() const
{
    std::string text = dtype + "[" + joinInts(sizes) + "]";
    if (!isContiguous())
        text += "{" + joinInts(strides) + "}";
    return text;
}

const char* argKindName(ArgKind kind)
{
    switch (kind) {
    case ArgKind::Tensor:
        return "tensor";
    case ArgKind::TensorList:
        return "tensor-list";
    case ArgKind::Value:
        return "value";
    case ArgKind::None:
        return "none";
    case ArgKind::Opaque:
        return "opaque";
    }
    return "opaque";
}

bool argKindFromName(const std::string& name, ArgKind& out)
{
    for (ArgKind kind : {ArgKind::Tensor, ArgKind::TensorList, ArgKind::Value, ArgKind::None, ArgKind::Opaque}) {
        if (name == argKindName(kind)) {
            out = kind;
            return true;
        }
    }
    return false;
}

std::string ArgSpec::keyText() const
{
    std::ostringstream text;
    text << argKindName(kind) << ':';
    switch (kind) {
    case ArgKind::Tensor:
    case ArgKind::TensorList:
        text << '(';
        for (size_t i = 0; i < tensors.size(); ++i) {
            const TensorSpec& t = tensors[i];
            if (i)
                text << ';';
            text << t.dtype << '[' << joinInts(t.sizes) << "]{" << joinInts(t.strides) << "}@" << t.device;
        }
        text << ')';
        break;
    case ArgKind::Value:
    case ArgKind::Opaque:
        text << value.dump();
        break;
    case ArgKind::None:
        break;
    }
    return text.str();
}

std::string ArgSpec::toShortString() const
{
    switch (kind) {
    case ArgKind::Tensor:
        return tensors.empty() ? std::string("?") : tensors.front().toShortString();
    case ArgKind::TensorList: {
        std::string text = "[";
        for (size_t i = 0; i < tensors.size(); ++i) {
            if (i)
                text += ", ";
            text += tensors[i].toShortString();
        }
        return text + "]";
    }
    case ArgKind::Value:
        return name + "=" + value.dump();
    case ArgKind::None:
        return name + "=None";
    case ArgKind::Opaque:
        return name + "=<" + (value.is_string() ? value.get<std::string>() : value.dump()) + ">";
    }
    return {};
}

} // namespace kforge::core
