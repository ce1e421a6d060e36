#pragma once
// A TorchScript model prepared for a package's fused-region kernels (docs/runtime.md, "Fused
// regions"): a method of its own whose graph calls kforge::region_call where a region kernel's
// chain runs, with the original ops as the fallback. `kforge run`, export's in-model check and
// C++ users run that method with the package loaded, and forward without it.

#include "cast/CastPackage.h"
#include "util/Result.h"

#include <torch/csrc/jit/api/module.h>

#include <string>
#include <vector>

namespace kforge::runtime {

/// The method the region kernels are added as.
inline constexpr const char* kRegionMethod = "kforge_regions_forward";

struct RegionMethod {
    std::string method = "forward"; // the method to run with the package loaded
    int replaced = 0;               // places of the graph that call region kernels
    std::vector<std::string> notes; // one line per region kernel (group) that replaced nothing
};

/// For a package with custom region kernels: adds kRegionMethod to `module` and returns it. For a
/// package without: "forward", and the module is left as it is. An error when a region kernel's
/// card does not read back, or the model cannot be rewritten (a method of that name exists).
core::Result<RegionMethod> prepareRegionMethod(torch::jit::Module& module, const core::CastPackage& package);

} // namespace kforge::runtime
