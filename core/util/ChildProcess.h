#pragma once
// Runs a helper executable to completion and collects what it wrote: for work that must not share
// the caller's process (export's in-model check loads CUDA and a model; the CLI itself does not
// link the CUDA driver). Not for long-lived children (see protocol/WorkerClient.h).

#include "util/Result.h"

#include <string>
#include <vector>

namespace kforge::core {

struct ChildOutput {
    int exitCode = -1; // the child's exit status; -1 when it was killed by a signal
    int signal = 0;    // the signal that killed it, 0 otherwise
    std::string out;   // everything written to stdout
    std::string err;   // everything written to stderr
};

/// Starts `executable` with `arguments` (stdin /dev/null), reads both pipes until it exits and
/// returns its output. Errors only when it cannot be started (not found, not executable).
Result<ChildOutput> runChildProcess(const std::string& executable, const std::vector<std::string>& arguments);

/// Where a helper executable that ships with kforge is: $ENV_VAR when set, else next to the
/// running executable, else in `buildSubdir` beside its folder (the build tree's layout:
/// build/cli/kforge finds build/runtime/kforge-cast-run). The first candidate when none exists.
std::string siblingExecutablePath(const std::string& name, const std::string& buildSubdir, const char* envVar);

/// The first executable file named `name` in a folder of $PATH, else the first of `fallbacks`
/// (full paths) that is executable; empty when there is none. For tools a user installs (the CUDA
/// toolkit's compute-sanitizer and nvdisasm).
std::string findExecutable(const std::string& name, const std::vector<std::string>& fallbacks);

} // namespace kforge::core
