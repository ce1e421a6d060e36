#pragma once
// The report's "compile.kernels": per launch of the plan, what its kernel uses of an SM (ptxas's
// resource report in the compile log, kernel/PtxasResources.h) and the theoretical occupancy of
// its block size on the compiled architecture (kernel/Occupancy.h). docs/validation.md lists the
// fields. Torch-free.

#include "model/LaunchPlan.h"

#include <nlohmann/json.hpp>

#include <string>

namespace kforge::core {

/// One object per launch of `plan`, in launch order; a launch whose kernel the log does not report
/// has its name only.
nlohmann::json kernelResourceReport(const std::string& compileLog, const LaunchPlan& plan,
                                    const std::string& architecture);

} // namespace kforge::core
