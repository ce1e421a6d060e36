#pragma once
// The launch plan of a candidate kernel (docs/kernel-contract.md): which extern "C" kernels of the
// candidate's source run, in order, with which grid, block, dynamic shared memory and arguments,
// the outputs they must produce and the scratch buffers they need. Torch-free value type.

#include "model/OperatorCard.h"
#include "util/Result.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge::core {

/// The C type a kernel parameter is passed as.
enum class ParamType { Pointer, I32, I64, U32, U64, F32, F64 };
const char* paramTypeName(ParamType type);

/// Where a kernel argument's value comes from.
enum class ParamSource {
    TensorArg, // a tensor argument of the card, by schema name (list element: name.K)
    Output,    // the Nth output (outN)
    Scratch,   // a scratch buffer of the plan (scratch.NAME)
    CardValue, // a non-tensor argument of the card, or a host number's value, by schema name
    Literal,   // a number written in the plan
};

/// One kernel parameter, parsed from a token "TYPE:SOURCE" such as "ptr:self", "ptr:out0",
/// "ptr:scratch.partials", "i32:4096", "f32:eps".
struct KernelParam {
    std::string token; // as written
    ParamType type = ParamType::Pointer;
    ParamSource source = ParamSource::Literal;
    std::string name;   // argument name, scratch name; empty for outputs and literals
    int index = -1;     // output index, or tensor-list element (-1: not a list element)
    double literal = 0; // for Literal (integers are exact up to 2^53)
};

struct KernelLaunch {
    std::string kernel; // extern "C" __global__ function name
    std::array<std::uint32_t, 3> grid{1, 1, 1};
    std::array<std::uint32_t, 3> block{1, 1, 1};
    std::uint32_t sharedBytes = 0; // dynamic shared memory
    std::vector<KernelParam> params;
};

struct ScratchBuffer {
    std::string name;
    std::int64_t bytes = 0;
    bool zeroed = false; // false: filled with a poison pattern, so reading it before writing shows
};

struct LaunchPlan {
    std::vector<KernelLaunch> launches;
    std::vector<TensorSpec> outputs; // must equal the card's eager outputs
    std::vector<ScratchBuffer> scratch;
};

/// Limits that the plan is checked against (the device's; defaults are Hopper's).
struct LaunchLimits {
    std::uint32_t maxThreadsPerBlock = 1024;
    std::array<std::uint32_t, 3> maxBlock{1024, 1024, 64};
    std::array<std::uint32_t, 3> maxGrid{2147483647u, 65535u, 65535u};
    std::uint32_t maxDynamicSharedBytes = 227 * 1024;
    int maxLaunches = 16;
    std::int64_t maxScratchBytes = 4ll << 30;
};

/// Parses plan JSON. Missing "outputs" means: the card's outputs. Every error names the JSON path
/// ("launches[1].args[2]") and what is wrong.
Result<LaunchPlan> parseLaunchPlan(const nlohmann::json& json, const OperatorCard& card);

/// Checks a parsed plan against the card and the limits: every binding resolves (the named tensor
/// argument exists and is present, the output index is in range, the scratch buffer is declared,
/// scalar sources are numeric card values or host numbers (OperatorCard::isHostNumberArg), which a
/// pointer may not name), every launch has 1..max threads per block and a
/// non-empty grid, shared memory and scratch sizes are in range, outputs equal the card's.
Result<void> validateLaunchPlan(const LaunchPlan& plan, const OperatorCard& card, const LaunchLimits& limits = {});

nlohmann::json toJson(const LaunchPlan& plan);

/// The plan JSON embedded in a candidate's source as a block comment that starts with
/// "/*kforge-plan" and ends with the first "*/" (so a source file can carry its own plan).
/// nullopt when the source has none.
std::optional<std::string> embeddedPlanText(const std::string& source);

} // namespace kforge::core
