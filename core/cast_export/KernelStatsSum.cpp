#include "cast_export/KernelStatsSum.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace kforge::core {

void addKernelStats(nlohmann::json& kernels, const nlohmann::json& stats)
{
    if (!kernels.is_array())
        kernels = nlohmann::json::array();
    const nlohmann::json reasons = stats.value("fallback_reasons", nlohmann::json::object());
    for (const nlohmann::json& kernel : stats.value("kernels", nlohmann::json::array())) {
        const std::string id = kernel.value("id", std::string());
        auto known = std::find_if(kernels.begin(), kernels.end(),
                                  [&](const nlohmann::json& k) { return k.value("id", std::string()) == id; });
        if (known == kernels.end()) {
            nlohmann::json first = kernel;
            first["last_fallback_reason"] = "";
            kernels.push_back(std::move(first));
            known = kernels.end() - 1;
        } else {
            (*known)["hits"] = known->value("hits", std::int64_t{0}) + kernel.value("hits", std::int64_t{0});
            (*known)["fallbacks"] =
                known->value("fallbacks", std::int64_t{0}) + kernel.value("fallbacks", std::int64_t{0});
        }
        const std::string reason = reasons.value(id, std::string());
        if (!reason.empty())
            (*known)["last_fallback_reason"] = reason;
    }
}

} // namespace kforge::core
