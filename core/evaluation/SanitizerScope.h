#pragma once
// Which compute-sanitizer tools can find anything in a candidate (docs/validation.md, "Sanitizer
// gate"). The gate's time is its slowest tool's, and racecheck on a large elementwise kernel ran for
// 84 s on the H200 while it can find nothing there:
// - racecheck detects hazards on shared memory only: a candidate none of whose launches has shared
//   memory (ptxas's static bytes and the plan's dynamic bytes both 0, from the report's
//   compile.kernels) has none to race on; any access to shared memory it lacks is memcheck's.
// - synccheck checks barriers and warp-synchronous primitives: a candidate whose PTX has none of
//   them (no bar / barrier / mbarrier instruction, no .sync form such as shfl.sync, vote.sync or
//   bar.warp.sync) has nothing for it to check.
// memcheck and initcheck always run. Whatever the report cannot say (a launch without ptxas's
// figures) runs the tool. Torch-free.

#include <nlohmann/json.hpp>

#include <map>
#include <string>

namespace kforge::core {

/// The gate's tools, in the order reports name them.
inline constexpr const char* kSanitizerTools[] = {"memcheck", "racecheck", "initcheck", "synccheck"};

/// Tool name -> why it is skipped, for the tools that cannot find anything in a candidate with this
/// PTX and these compile.kernels entries; a tool not in the map runs.
std::map<std::string, std::string> sanitizerToolsToSkip(const std::string& ptx, const nlohmann::json& kernels);

} // namespace kforge::core
