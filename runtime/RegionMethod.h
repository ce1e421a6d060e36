#pragma once
// A TorchScript model prepared for a package's fused-region kernels (docs/runtime.md, "Fused
// regions"): a method of its own whose graph calls kforge::region_call where a region kernel's
// chain runs, with the original ops as the fallback. `kforge run`, export's in-model check and
// C++ users run that method with the package loaded, and forward without it; Python gets it
// through kforge::region_module (a saved module in, the same module with the method out).

#include "cast/CastPackage.h"
#include "region_rewrite/RegionRewrite.h"
#include "util/Result.h"

#include <nlohmann/json.hpp>
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

    /// {"method", "replaced", "notes"}
    nlohmann::json toJson() const;
};

/// The chains of `package`'s custom region kernels, by kernel id. An error when a region kernel's
/// card does not read back.
core::Result<std::vector<core::RegionKernelChain>> regionKernelChains(const core::CastPackage& package);

/// With region kernels: adds kRegionMethod to `module` and returns it. Without: "forward", and the
/// module is left as it is. An error when the model cannot be rewritten (a method of that name
/// exists already).
core::Result<RegionMethod> prepareRegionMethod(torch::jit::Module& module,
                                               const std::vector<core::RegionKernelChain>& kernels);
/// The same for `package`'s region kernels.
core::Result<RegionMethod> prepareRegionMethod(torch::jit::Module& module, const core::CastPackage& package);

} // namespace kforge::runtime
