#include "engine/InModelCheckTool.h"

#include "cast/CastReader.h"
#include "util/ChildProcess.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

namespace kforge::core {

std::string castRunToolPath()
{
    return siblingExecutablePath("kforge-cast-run", "cast_run", "KFORGE_CAST_RUN");
}

InModelCheck runInModelCheckTool(const std::filesystem::path& package, const CaptureInfo& capture)
{
    const std::string tool = castRunToolPath();
    if (::access(tool.c_str(), X_OK) != 0)
        return {false, false, "this build has no CUDA runtime (kforge-cast-run not found)", {}};
    auto child = runChildProcess(
        tool,
        {"check", package.string(), "--recorded-inputs", capture.inputs, "--seed", std::to_string(capture.inputSeed)});
    if (!child)
        return {false, false, child.error().toString(), {}};
    if (child->signal != 0) {
        InModelCheck crashed{true, false, "kforge-cast-run crashed (signal " + std::to_string(child->signal) + ")", {}};
        if (auto opened = openCast(package))
            for (const CastKernel& k : opened->kernels)
                if (k.kind == KernelKind::Custom)
                    crashed.dropped.push_back({k.id, "in-model check: the model run crashed"});
        return crashed;
    }
    std::string firstErrorLine = child->err.substr(0, child->err.find('\n'));
    if (firstErrorLine.starts_with("kforge: error: "))
        firstErrorLine.erase(0, 15);
    if (child->exitCode != 0)
        return {false, false, firstErrorLine.empty() ? "kforge-cast-run failed" : firstErrorLine, {}};
    auto check = inModelCheckFromJson(nlohmann::json::parse(child->out, nullptr, /*allow_exceptions=*/false));
    if (!check)
        return {false, false, "kforge-cast-run printed no verdict", {}};
    return check.value();
}

} // namespace kforge::core
