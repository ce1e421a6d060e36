#pragma once
// The runtime's per-kernel counters summed over several loads of one package (`kforge run` loads
// and unloads it once per timed block; each load counts from zero). Torch-free.

#include <nlohmann/json.hpp>

namespace kforge::core {

/// Adds one load's stats (runtime/CastRuntime.h runtimeStats(): {"kernels": [{"id", "hits",
/// "fallbacks", ...}], "fallback_reasons": {id: reason}}) to `kernels`, a JSON array: hits and
/// fallbacks summed per kernel id, the other fields as the first load reported them, and
/// "last_fallback_reason" the latest non-empty reason ("" when the kernel never fell back).
void addKernelStats(nlohmann::json& kernels, const nlohmann::json& stats);

} // namespace kforge::core
