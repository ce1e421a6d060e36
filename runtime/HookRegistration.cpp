#include "runtime/HookRegistration.h"

#include "runtime/CompositeHooks.h"
#include "runtime/HookRegistry.h"
#include "runtime/OpHooks.h"
#include "runtime/ReductionHooks.h"

#include "model/RegionChain.h"

#include <c10/util/Exception.h>

namespace kforge::runtime {

bool hookSupported(const core::RuntimeHook& hook)
{
    const std::string key = hookKey(hook);
    return key == core::kRegionOp || plainHookKnown(key) || compositeHookKnown(key) || reductionHookKnown(key);
}

namespace {

// The dispatcher warns, once per process, that a kernel overrides the one registered for the same
// operator and dispatch key: what every hook does by design (docs/runtime.md), so the warning only
// alarms the user. Every other warning goes on to the handler that was current before.
class OverrideWarningFilter final : public c10::WarningHandler {
public:
    explicit OverrideWarningFilter(c10::WarningHandler* next) : m_next(next) {}
    void process(const c10::Warning& warning) override
    {
        if (warning.msg().find("Overriding a previously registered kernel") != std::string::npos)
            return;
        if (m_next)
            m_next->process(warning);
        else
            c10::WarningHandler().process(warning);
    }

private:
    c10::WarningHandler* m_next;
};

} // namespace

std::vector<std::unique_ptr<torch::Library>> registerHooks()
{
    OverrideWarningFilter filter(c10::WarningUtils::get_warning_handler());
    const c10::WarningUtils::WarningHandlerGuard quietOverrides(&filter);
    auto library = std::make_unique<torch::Library>(torch::Library::IMPL, "aten",
                                                    std::make_optional(c10::DispatchKey::CUDA), __FILE__, __LINE__);
    auto autograd = std::make_unique<torch::Library>(
        torch::Library::IMPL, "aten", std::make_optional(c10::DispatchKey::AutogradCUDA), __FILE__, __LINE__);
    for (const std::string& key : pendingHookKeys()) {
        if (key == core::kRegionOp) // served through kforge::region_call (RegionCall.h), no override
            continue;
        if (!registerPlainHook(*library, key) && !registerReductionHook(*library, *autograd, key))
            registerComposite(*library, *autograd, key);
    }
    publishRegistry();
    std::vector<std::unique_ptr<torch::Library>> libraries;
    libraries.push_back(std::move(library));
    libraries.push_back(std::move(autograd));
    return libraries;
}

} // namespace kforge::runtime
