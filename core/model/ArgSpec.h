#pragma once
// Value types describing one argument of a captured operator call. Torch-free: the capture adapter
// fills them from IValues; everything downstream (project files, CLI, GUI) reads only these.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::core {

/// Layout of one tensor as the operator saw it. Sizes and strides are in elements.
struct TensorSpec {
    std::string dtype; // short name: "float32", "float16", "bfloat16", "int64", ...
    std::vector<std::int64_t> sizes;
    std::vector<std::int64_t> strides;
    std::string device; // "cpu", "cuda:0", ...

    bool isContiguous() const;
    std::int64_t numel() const;
    /// Elements of storage the layout spans (0 for an empty tensor): 1 + sum((size - 1) * stride).
    std::int64_t storageSpan() const;
    /// "bfloat16[8,8,512,512]" plus the strides when they are not the contiguous ones.
    std::string toShortString() const;

    bool operator==(const TensorSpec&) const = default;
};

enum class ArgKind {
    Tensor,     // exactly one tensor
    TensorList, // Tensor[] or Tensor?[] (absent entries are not allowed: see `value`)
    Value,      // any non-tensor value (int, float, bool, string, list of scalars, dtype, ...)
    None,       // an optional argument that was not given
    Opaque,     // a value the capture cannot describe (a Generator, an object): not replayable
};

/// 1 + sum((size_d - 1) * stride_d) for non-negative strides; 0 when any size is 0.
std::int64_t storageSpanElements(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides);

const char* argKindName(ArgKind kind);
bool argKindFromName(const std::string& name, ArgKind& out);

/// One argument of an operator call, named as in the operator's schema.
struct ArgSpec {
    std::string name; // schema argument name ("self", "dim", ...)
    std::string type; // schema type ("Tensor", "int[]", "ScalarType?", ...)
    ArgKind kind = ArgKind::None;
    std::vector<TensorSpec> tensors; // one for Tensor, n for TensorList
    nlohmann::json value;            // for Value: the value itself; for Opaque: a description

    /// Canonical text of this argument for the variant key (name excluded: the schema fixes it).
    std::string keyText() const;
    std::string toShortString() const;

    bool operator==(const ArgSpec&) const = default;
};

} // namespace kforge::core
