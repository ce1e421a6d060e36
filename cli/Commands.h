#pragma once
// kforge subcommands. Each takes the words after its name, prints results to stdout, progress to
// stderr, and returns the process exit code: 0 success, 1 failure (one "kforge: error:" line), 2 usage.

#include <string>
#include <vector>

namespace kforge::cli {

int runCaptureCommand(const std::vector<std::string>& args);
int runCardsCommand(const std::vector<std::string>& args);
int runBenchCommand(const std::vector<std::string>& args);
int runTreeCommand(const std::vector<std::string>& args);
int runOptimizeCommand(const std::vector<std::string>& args);
int runVerifyCommand(const std::vector<std::string>& args);
int runExportCommand(const std::vector<std::string>& args);
int runRunCommand(const std::vector<std::string>& args);

/// Prints "kforge: error: <message>" to stderr and returns `exitCode`.
int fail(const std::string& message, int exitCode = 1);

} // namespace kforge::cli
