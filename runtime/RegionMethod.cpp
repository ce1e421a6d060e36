#include "runtime/RegionMethod.h"

#include "runtime/PackagedKernel.h"
#include "runtime/RegionCall.h"

#include "region_rewrite/RegionRewrite.h"

namespace kforge::runtime {

core::Result<RegionMethod> prepareRegionMethod(torch::jit::Module& module, const core::CastPackage& package)
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

} // namespace kforge::runtime
