#pragma once
// RAII over the runtime's load / unload of one opened package (runtime/CastRuntime.h), for the
// whole-model runs of kforge-cast-run (cast_run/).

#include "ModelHarness.h"
#include "cast/CastPackage.h"
#include "runtime/CastRuntime.h"
#include "util/Result.h"

#include <optional>
#include <string>
#include <utility>

namespace kforge::runtime {

/// A package opened and verified once, loaded into the runtime or not, in turn: `kforge run`
/// alternates blocks with and without it, and the in-model check times "no kernel" with it unloaded,
/// as eager PyTorch runs (a loaded package's disabled kernels still cost their hooks a guard and a
/// redispatch per call). Unloads on destruction. One at a time (CastRuntime.h). While loaded, the
/// harness runs its region method (the model's region kernels, RegionMethod.h); else forward.
class PackageLoad {
public:
    PackageLoad(const core::CastPackage& package, std::string path, ModelHarness& harness)
        : m_package(package), m_path(std::move(path)), m_harness(harness)
    {
    }
    ~PackageLoad() { unload(); }
    PackageLoad(const PackageLoad&) = delete;
    PackageLoad& operator=(const PackageLoad&) = delete;

    core::Result<void> load()
    {
        if (m_handle)
            return {};
        auto handle = loadOpenedPackage(m_package, m_path);
        if (!handle)
            return handle.error();
        m_handle = handle.value();
        m_harness.method = m_harness.regionMethod;
        return {};
    }
    void unload()
    {
        if (m_handle)
            (void)unloadPackage(*m_handle);
        m_handle.reset();
        m_harness.method = "forward";
    }

private:
    const core::CastPackage& m_package; // opened and verified once
    std::string m_path;
    ModelHarness& m_harness;
    std::optional<int> m_handle;
};

} // namespace kforge::runtime
