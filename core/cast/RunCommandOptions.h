#pragma once
// The options of `kforge run`, parsed in one place for the CLI (which checks usage, then hands the
// command to kforge-cast-run) and for kforge-cast-run (which runs it).

#include "util/ArgParser.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge::core {

struct RunCommandOptions {
    std::string castFile;
    std::vector<std::string> inputs;
    std::optional<std::string> model;
    int runs = 20;
    int warmup = 3;
    std::uint64_t seed = 0;
    bool kernels = true;
    bool json = false;
};

/// Parses `kforge run` arguments (after "run"). The error is a usage line (exit 2).
inline std::optional<std::string> parseRunCommandOptions(const std::vector<std::string>& args,
                                                         RunCommandOptions& options)
{
    ArgParser parser;
    parser.multiOption("--inputs")
        .option("--runs")
        .option("--warmup")
        .option("--model")
        .option("--seed")
        .flag("--no-kernels")
        .flag("--json");
    if (auto error = parser.parse(args))
        return "run: " + *error + " (see 'kforge run --help')";
    if (parser.positionals().size() != 1)
        return std::string("run: expected exactly one FILE.cast (see 'kforge run --help')");
    options.castFile = parser.positionals().front();
    options.inputs = parser.values("--inputs");
    if (options.inputs.empty())
        return std::string("run: --inputs is required (see 'kforge run --help')");
    if (auto text = parser.value("--runs"); text && (!parseNumber(*text, options.runs) || options.runs < 1))
        return "--runs: expected a whole number >= 1, got '" + *text + "'";
    if (auto text = parser.value("--warmup"); text && (!parseNumber(*text, options.warmup) || options.warmup < 0))
        return "--warmup: expected a whole number >= 0, got '" + *text + "'";
    if (auto text = parser.value("--seed"); text && !parseNumber(*text, options.seed))
        return "--seed: expected a whole number, got '" + *text + "'";
    options.model = parser.value("--model");
    options.kernels = !parser.has("--no-kernels");
    options.json = parser.has("--json");
    return std::nullopt;
}

} // namespace kforge::core
