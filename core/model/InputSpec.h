#pragma once
// The user's description of a model's example inputs: either a file saved with torch.save, or one
// shape spec per input such as "8x3x224x224:float16" or "4x512:int64[0,32000)".

#include "util/Result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge::core {

/// One synthesized input tensor. Floats are seeded standard normal unless a range is given, in
/// which case they are uniform in [low, high); integers are uniform in [low, high); bool is 0/1.
struct ShapeSpec {
    std::vector<std::int64_t> sizes;
    std::string dtype = "float32";   // canonical dtype name (see canonicalDtypeName)
    std::optional<double> low, high; // the range, if given

    std::string toString() const;
};

struct InputSpec {
    std::optional<std::string> file; // a torch.save file: a tensor, or a tuple/list of tensors
    std::vector<ShapeSpec> shapes;   // used when `file` is empty

    std::string toString() const;
};

/// Parses the --inputs values. One value naming an existing file means a torch.save file; otherwise
/// every value must be a shape spec. Errors name the offending value.
Result<InputSpec> parseInputSpec(const std::vector<std::string>& values);

/// Parses one shape spec: DIMS[:DTYPE[RANGE]], DIMS = N(xN)*, RANGE = [LOW,HIGH).
Result<ShapeSpec> parseShapeSpec(const std::string& text);

/// Maps user spellings (fp16, half, bf16, long, ...) to the canonical dtype name used in cards
/// ("float16", "bfloat16", "int64", ...). Returns nullopt for an unknown name.
std::optional<std::string> canonicalDtypeName(const std::string& name);

/// True for floating-point canonical dtype names.
bool isFloatingDtype(const std::string& canonicalName);

} // namespace kforge::core
