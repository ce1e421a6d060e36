#include "capture/TorchInterop.h"

#include "util/FailureText.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <array>
#include <cmath>
#include <sstream>
#include <utility>

namespace kforge::core::torchinterop {
namespace {

constexpr std::array<std::pair<c10::ScalarType, const char*>, 13> kDtypeNames = {{
    {c10::ScalarType::Float, "float32"},
    {c10::ScalarType::Half, "float16"},
    {c10::ScalarType::BFloat16, "bfloat16"},
    {c10::ScalarType::Double, "float64"},
    {c10::ScalarType::Long, "int64"},
    {c10::ScalarType::Int, "int32"},
    {c10::ScalarType::Short, "int16"},
    {c10::ScalarType::Char, "int8"},
    {c10::ScalarType::Byte, "uint8"},
    {c10::ScalarType::Bool, "bool"},
    {c10::ScalarType::ComplexFloat, "complex64"},
    {c10::ScalarType::ComplexDouble, "complex128"},
    {c10::ScalarType::Float8_e4m3fn, "float8_e4m3fn"},
}};

nlohmann::json doubleJson(double value)
{
    // JSON has no NaN/Inf; spell them so that keys stay distinct and readable.
    if (std::isnan(value))
        return "nan";
    if (std::isinf(value))
        return value > 0 ? "inf" : "-inf";
    return value;
}

// A JSON description of a non-tensor IValue; false if the value cannot be described.
bool describeValue(const c10::IValue& value, nlohmann::json& out)
{
    if (value.isNone()) {
        out = nullptr;
    } else if (value.isBool()) {
        out = value.toBool();
    } else if (value.isInt()) {
        out = value.toInt();
    } else if (value.isDouble()) {
        out = doubleJson(value.toDouble());
    } else if (value.isSymInt()) {
        out = value.toSymInt().guard_int(__FILE__, __LINE__);
    } else if (value.isSymFloat()) {
        out = doubleJson(value.toSymFloat().guard_float(__FILE__, __LINE__));
    } else if (value.isComplexDouble()) {
        const auto c = value.toComplexDouble();
        out = nlohmann::json::array({doubleJson(c.real()), doubleJson(c.imag())});
    } else if (value.isString()) {
        out = value.toStringRef();
    } else if (value.isDevice()) {
        out = value.toDevice().str();
    } else if (value.isList() || value.isTuple()) {
        out = nlohmann::json::array();
        const auto elements = value.isList() ? value.toListRef().vec() : value.toTupleRef().elements().vec();
        for (const c10::IValue& element : elements) {
            nlohmann::json item;
            if (!describeValue(element, item))
                return false;
            out.push_back(std::move(item));
        }
    } else {
        return false;
    }
    return true;
}

bool isTensorListLike(const c10::IValue& value)
{
    if (value.isTensorList())
        return true;
    if (!value.isList())
        return false;
    bool anyTensor = false;
    for (const c10::IValue& element : value.toListRef()) {
        if (element.isTensor())
            anyTensor = true;
        else if (!element.isNone())
            return false;
    }
    return anyTensor;
}

std::int64_t storageSpanOf(const at::Tensor& tensor)
{
    return storageSpanElements(tensor.sizes().vec(), tensor.strides().vec());
}

} // namespace

std::string dtypeName(c10::ScalarType type)
{
    for (const auto& [scalar, name] : kDtypeNames) {
        if (scalar == type)
            return name;
    }
    std::string fallback = c10::toString(type);
    for (char& c : fallback)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return fallback;
}

bool scalarTypeFromName(const std::string& name, c10::ScalarType& out)
{
    for (const auto& [scalar, canonical] : kDtypeNames) {
        if (name == canonical) {
            out = scalar;
            return true;
        }
    }
    return false;
}

TensorSpec tensorSpecOf(const at::Tensor& tensor)
{
    TensorSpec spec;
    spec.dtype = dtypeName(tensor.scalar_type());
    spec.sizes = tensor.sizes().vec();
    spec.strides =
        tensor.layout() == c10::kStrided ? tensor.strides().vec() : std::vector<std::int64_t>(spec.sizes.size(), 0);
    spec.device = tensor.device().str();
    return spec;
}

ArgSpec argSpecOf(const c10::IValue& value, std::string name, std::string type)
{
    ArgSpec arg;
    arg.name = std::move(name);
    arg.type = std::move(type);
    if (value.isTensor()) {
        const at::Tensor& tensor = value.toTensor();
        if (!tensor.defined()) {
            arg.kind = ArgKind::None;
        } else if (tensor.layout() != c10::kStrided) {
            arg.kind = ArgKind::Opaque;
            arg.value = "non-strided tensor";
        } else {
            arg.kind = ArgKind::Tensor;
            arg.tensors.push_back(tensorSpecOf(tensor));
        }
        return arg;
    }
    if (isTensorListLike(value)) {
        arg.kind = ArgKind::TensorList;
        nlohmann::json present = nlohmann::json::array();
        bool anyAbsent = false;
        for (const c10::IValue& element : value.toListRef()) {
            const bool isPresent = element.isTensor() && element.toTensor().defined();
            present.push_back(isPresent);
            anyAbsent = anyAbsent || !isPresent;
            if (isPresent)
                arg.tensors.push_back(tensorSpecOf(element.toTensor()));
        }
        // Tensor?[] with absent entries: the presence mask is part of the variant.
        arg.value = anyAbsent ? present : nlohmann::json();
        return arg;
    }
    if (value.isNone()) {
        arg.kind = ArgKind::None;
        return arg;
    }
    if (describeValue(value, arg.value)) {
        arg.kind = ArgKind::Value;
    } else {
        arg.kind = ArgKind::Opaque;
        arg.value = value.tagKind();
    }
    return arg;
}

at::Tensor cloneExact(const at::Tensor& tensor, c10::Device device)
{
    if (!tensor.defined())
        return tensor;
    const std::int64_t span = storageSpanOf(tensor);
    if (span == 0)
        return at::empty_strided(tensor.sizes(), tensor.strides(), tensor.options().device(device));
    at::Tensor flat = tensor.as_strided({span}, {1}, tensor.storage_offset());
    if (flat.is_cpu() && device.is_cuda()) {
        // Host to device goes through pinned memory (PyTorch's caching host allocator, which keeps
        // the staging block until the copy has run): a DMA copy instead of the driver's pageable
        // bounce buffer. The caller synchronizes before relying on the values.
        return flat.pin_memory()
            .to(tensor.options().device(device), /*non_blocking=*/true, /*copy=*/true)
            .as_strided(tensor.sizes(), tensor.strides(), 0);
    }
    flat = flat.to(tensor.options().device(device), /*non_blocking=*/false, /*copy=*/true);
    return flat.as_strided(tensor.sizes(), tensor.strides(), 0);
}

c10::IValue mapTensors(const c10::IValue& value, const std::function<at::Tensor(const at::Tensor&)>& replace)
{
    if (value.isTensor())
        return replace(value.toTensor());
    if (value.isTensorList()) {
        c10::List<at::Tensor> mapped;
        for (const at::Tensor& t : value.toTensorVector())
            mapped.push_back(replace(t));
        return mapped;
    }
    if (value.isList()) {
        c10::impl::GenericList mapped(value.toList().elementType());
        for (const c10::IValue& element : value.toListRef())
            mapped.push_back(mapTensors(element, replace));
        return mapped;
    }
    if (value.isTuple()) {
        std::vector<c10::IValue> elements;
        for (const c10::IValue& element : value.toTupleRef().elements())
            elements.push_back(mapTensors(element, replace));
        return c10::ivalue::Tuple::create(std::move(elements));
    }
    return value;
}

c10::IValue cloneValue(const c10::IValue& value, c10::Device device)
{
    return mapTensors(value, [device](const at::Tensor& t) { return cloneExact(t, device); });
}

std::int64_t payloadBytes(const c10::IValue& value)
{
    if (value.isTensor()) {
        const at::Tensor& t = value.toTensor();
        return t.defined() ? storageSpanOf(t) * static_cast<std::int64_t>(t.element_size()) : 0;
    }
    std::int64_t total = 0;
    if (value.isList()) {
        for (const c10::IValue& element : value.toListRef())
            total += payloadBytes(element);
    } else if (value.isTuple()) {
        for (const c10::IValue& element : value.toTupleRef().elements())
            total += payloadBytes(element);
    }
    return total;
}

std::string oneLineError(const std::exception& error)
{
    std::string text;
    if (const auto* c10Error = dynamic_cast<const c10::Error*>(&error))
        text = c10Error->what_without_backtrace();
    else
        text = error.what();
    // TorchScript wraps the real error after a traceback; the last "...Error: " line is the cause.
    std::istringstream lines(withoutBacktraceLines(text));
    std::string line;
    std::string cause;
    while (std::getline(lines, line)) {
        for (const char* marker : {"RuntimeError: ", "ValueError: ", "TypeError: ", "IndexError: "}) {
            const size_t at = line.find(marker);
            if (at != std::string::npos)
                cause = line.substr(at + std::string(marker).size());
        }
    }
    const std::string result = oneLineReason(cause.empty() ? text : cause);
    return result.empty() ? std::string("unknown LibTorch error") : result;
}

} // namespace kforge::core::torchinterop
