// kforge: the headless command-line front end of Kernel Forge.

#include "Commands.h"

#include "util/Version.h"

#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr const char* kUsage = R"(usage: kforge COMMAND [ARGS]

Commands:
  capture MODEL.pt --inputs SPEC... -o PROJECT_DIR [options]
                      run a TorchScript model once and write its operator cards to a new project
  cards PROJECT_DIR [--json]
                      print a project's operator cards, sorted by share of model time
  help [COMMAND]      show help for a command

Options: --help, --version
)";

constexpr const char* kCaptureHelp = R"(usage: kforge capture MODEL.pt --inputs SPEC... -o PROJECT_DIR [options]

Runs MODEL.pt (a TorchScript file, see docs/exporting-models.md) once, records every top-level
ATen operator call, groups the calls into operator cards (one per op, overload, dtypes, shapes,
strides, device and non-tensor argument values), saves real input/output samples, times each
card's eager kernel and writes a new project folder (docs/project-format.md).

  --inputs SPEC...        a torch.save file holding a tensor or a tuple/list of tensors, or one
                          shape spec per model input: DIMS[:DTYPE[RANGE]], e.g. 8x3x224x224:float16,
                          4x512:int64[0,32000). Floats are seeded normal (uniform with a RANGE).
  -o, --output DIR        the project folder to create (absent or empty)
  --device DEV            auto (default: cuda:0 if a GPU is usable, else cpu), cpu, cuda, cuda:N
  --samples N             real samples saved per card (default 2)
  --sample-budget-mb MB   total size of all samples (default 1024)
  --sample-vendor         also sample cuBLAS/cuDNN-backed cards (not searched by default)
  --seed S                seed of synthesized inputs (default 0)
  --json                  print the cards as JSON (with phase timings) instead of a table
  --quiet                 no progress lines on stderr
)";

constexpr const char* kCardsHelp = R"(usage: kforge cards PROJECT_DIR [--json]

Prints the operator cards of a project, largest share of model time first.

  --json   machine-readable output: {"capture": {...}, "cards": [...]}
)";

const char* helpFor(const std::string& command)
{
    if (command == "capture")
        return kCaptureHelp;
    if (command == "cards")
        return kCardsHelp;
    return nullptr;
}

int dispatch(const std::vector<std::string>& words)
{
    using namespace kforge::cli;
    if (words.empty()) {
        std::cerr << kUsage;
        return 2;
    }
    const std::string& command = words.front();
    std::vector<std::string> rest(words.begin() + 1, words.end());
    if (command == "--help" || command == "-h") {
        std::cout << kUsage;
        return 0;
    }
    if (command == "--version") {
        std::cout << "kforge " << kforge::core::kKforgeVersion << "\n";
        return 0;
    }
    if (command == "help") {
        if (rest.empty()) {
            std::cout << kUsage;
            return 0;
        }
        const char* help = helpFor(rest.front());
        if (!help)
            return fail("unknown command '" + rest.front() + "' (see 'kforge --help')", 2);
        std::cout << help;
        return 0;
    }
    if (const char* help = helpFor(command)) {
        for (const std::string& word : rest) {
            if (word == "--help" || word == "-h") {
                std::cout << help;
                return 0;
            }
        }
    }
    if (command == "capture")
        return runCaptureCommand(rest);
    if (command == "cards")
        return runCardsCommand(rest);
    return fail("unknown command '" + command + "' (see 'kforge --help')", 2);
}

} // namespace

namespace kforge::cli {

int fail(const std::string& message, int exitCode)
{
    std::cerr << "kforge: error: " << message << "\n";
    return exitCode;
}

} // namespace kforge::cli

int main(int argc, char** argv)
{
    try {
        return dispatch(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const std::exception& e) {
        // Core returns errors as values; reaching this is a bug, still reported as one line.
        std::cerr << "kforge: error: internal: " << e.what() << "\n";
        return 1;
    }
}
