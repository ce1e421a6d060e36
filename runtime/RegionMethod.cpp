#include "runtime/RegionMethod.h"

#include "runtime/PackagedKernel.h"
#include "runtime/RegionCall.h"

namespace kforge::runtime {

nlohmann::json RegionMethod::toJson() const
{
    return {{"method", method}, {"replaced", replaced}, {"notes", notes}};
}

core::Result<std::vector<core::RegionKernelChain>> regionKernelChains(const core::CastPackage& package)
{
    std::vector<core::RegionKernelChain> kernels;
    for (const core::CastKernel& kernel : package.kernels) {
        if (kernel.kind != core::KernelKind::Custom || kernel.region.is_null())
            continue;
        auto card = manifestCard(kernel);
        if (!card)
            return card.error();
        kernels.push_back(core::RegionKernelChain{kernel.id, *card->region});
    }
    return kernels;
}

core::Result<RegionMethod> prepareRegionMethod(torch::jit::Module& module,
                                               const std::vector<core::RegionKernelChain>& kernels)
{
    RegionMethod prepared;
    if (kernels.empty())
        return prepared;
    auto groups = core::addRegionMethod(module, kernels, kRegionCallOp, kRegionMethod);
    if (!groups)
        return groups.error();
    prepared.method = kRegionMethod;
    for (const core::RegionRewriteGroup& group : groups.value()) {
        prepared.replaced += group.replaced;
        if (group.replaced == 0) {
            std::string ids;
            for (const std::string& id : group.kernelIds)
                ids += (ids.empty() ? "" : ", ") + id;
            prepared.notes.push_back("region kernel " + ids + " (" + group.chainText + ") never runs: " + group.note);
        }
    }
    return prepared;
}

core::Result<RegionMethod> prepareRegionMethod(torch::jit::Module& module, const core::CastPackage& package)
{
    auto kernels = regionKernelChains(package);
    if (!kernels)
        return kernels.error();
    return prepareRegionMethod(module, kernels.value());
}

} // namespace kforge::runtime
