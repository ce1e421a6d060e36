// kforge run: checks the usage here, then hands the whole command to kforge-cast-run, the helper
// that links libkforge_runtime and the CUDA driver (cast_run/CastRunTool.cpp). The CLI itself
// stays free of the driver, so it starts on machines without one; only CUDA builds have the helper.

#include "Commands.h"
#include "cast/RunCommandOptions.h"

#include "engine/InModelCheckTool.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace kforge::cli {

int runRunCommand(const std::vector<std::string>& args)
{
    core::RunCommandOptions options;
    if (auto error = core::parseRunCommandOptions(args, options))
        return fail(*error, 2);
    const std::string tool = core::castRunToolPath();
    if (::access(tool.c_str(), X_OK) != 0)
        return fail("run: this build has no CUDA runtime (" + tool + " not found; build with -DKFORGE_TORCH_CUDA=ON)");
    std::vector<std::string> words{tool, "run"};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& word : words)
        argv.push_back(word.data());
    argv.push_back(nullptr);
    ::execv(tool.c_str(), argv.data()); // returns only on failure
    return fail("run: cannot start " + tool + ": " + std::strerror(errno));
}

} // namespace kforge::cli
