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
                      print a project's operator cards and fused-region cards, sorted by share of
                      model time
  bench PROJECT_DIR --card ID --kernel FILE.cu [--plan FILE.json] [options]
                      compile, validate and time one candidate kernel; prints a JSON report
  optimize PROJECT_DIR [--cards ID...] [--iterations N] [--time-limit S] [--seed S] [--resume|--restart]
                      search faster kernels for the cards (MCTS; built-in or LLM proposer)
  tree PROJECT_DIR --card ID [--json | --node ID [--save-kernel FILE]]
                      print a card's search tree: status, latency, speedup, what produced each node
  export PROJECT_DIR -o FILE.cast [--min-speedup X] [--cards ID...] [--arch sm_NN...] [options]
                      package the best proven kernel of every card into a .cast file, with an audit
  run FILE.cast --inputs SPEC... [--runs N] [--no-kernels] [--json]
                      run a package's model end to end, eager and with its kernels (CUDA builds)
  verify FILE.cast [--arch sm_NN] [--json]
                      check a .cast package (checksums, format, manifest, compatibility); print its audit
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
  --sample-budget-mb MB   total size of all samples, or auto (default): half the free disk space
                          of the project's file system or half the available memory, the smaller
  --sample-vendor         also sample cuBLAS/cuDNN-backed cards (not searched by default)
  --seed S                seed of synthesized inputs (default 0)
  --json                  print the cards as JSON (with phase timings) instead of a table
  --quiet                 no progress lines on stderr

Ctrl-C cancels the capture: no project is written and the exit status is 130.
)";

constexpr const char* kCardsHelp = R"(usage: kforge cards PROJECT_DIR [--json]

Prints the cards of a project, largest share of model time first. Beside one card per operator
variant there are fused-region cards ("region: op -> op -> ..."): connected chains of native (not
vendor-backed) ops on the captured call graph that one kernel may replace, with the eager time of
the chain replayed alone; their member ops keep their own cards (docs/project-format.md, "Region
cards").

  --json   machine-readable output: {"capture": {...}, "cards": [...]}; a region card has "region"
)";

constexpr const char* kBenchHelp =
    R"(usage: kforge bench PROJECT_DIR --card ID --kernel FILE.cu [--plan FILE.json] [options]

Compiles a candidate kernel with NVRTC, then in a kforge-worker process validates it against eager
PyTorch on the card's captured samples and on fresh inputs, and times it against the eager kernel
on the same inputs, interleaved (docs/kernel-contract.md, docs/validation.md). Prints a JSON report;
exits 0 when the candidate passed (or was only compiled, on a machine without a GPU), 1 otherwise.
Ctrl-C stops the compile or the evaluation at once and exits with status 130.

  --card ID           the card (an id or a unique prefix, see 'kforge cards')
  --kernel FILE.cu    CUDA source with extern "C" __global__ kernels
  --plan FILE.json    the launch plan (default: the /*kforge-plan {...} */ block in the source)
  --arch sm_NN        target architecture (default: the worker's GPU, sm_90 without one)
  --timeout S         time limit in seconds for the NVRTC compile, and for validation and
                      timing (default 60)
  --repetitions N     timed repetitions of candidate and eager each (default 50)
  --fresh-sets N      fresh random input sets besides the captured samples (default 3)
  --no-timing         validate only
  --sanitize          after passing, validate again on the captured samples under compute-sanitizer
                      memcheck, racecheck, initcheck and synccheck; any finding fails the candidate
  --emit-cubin FILE   also write the compiled cubin to FILE (a new file: an existing one is never replaced)
  --repeat N          evaluate N times with the same (warm) worker; wall times in "repeat_wall_ms"
  --no-cache          compile every time (no on-disk or in-memory compile cache)
  --worker PATH       the kforge-worker executable (default: next to kforge; or $KFORGE_WORKER)
)";

constexpr const char* kTreeHelp = R"(usage: kforge tree PROJECT_DIR --card ID [--json | --node ID [--save-kernel FILE]]

Prints the search tree of one card (PROJECT_DIR/search/<card id>/tree.json, docs/search.md): per
node its parent, status, median latency, speedup over eager and the transformation, LLM or manual
edit that produced it, with the failure reason of failed nodes; then the best passed node of each
GPU model the nodes were evaluated on (timings are only compared within one GPU model). Earlier
root attempts that failed and were retried are listed first.

  --card ID   the card (an id or a unique prefix)
  --json      the tree file's JSON, plus "best_by_gpu": {GPU model: node id}; LLM prompts and
              replies appear as references to their text blobs (docs/search.md, "Text blobs")
  --node ID   one node in full: status, reason, source, launch plan and, for an LLM node, the
              system prompt and every call's prompt, reply and error, read from the text blobs
  --save-kernel FILE
              with --node: write that node's kernel to FILE instead, its launch plan embedded as a
              /*kforge-plan ... */ block, ready to edit and run with 'kforge bench --kernel FILE'
              (an existing FILE is never overwritten)
)";

constexpr const char* kOptimizeHelp = R"(usage: kforge optimize PROJECT_DIR [options]

Searches faster kernels for the project's cards with Monte Carlo Tree Search (docs/search.md) and
a proposer: the built-in one (docs/builtin-proposer.md; offline, reproducible from --seed) or an
LLM (docs/llm-proposer.md; OpenAI-compatible Chat Completions or Anthropic Messages). Every
candidate is compiled, validated and timed as by 'kforge bench'; each card's tree is saved after
every node in PROJECT_DIR/search/<card id>/tree.json, LLM tokens and cost included, with the
prompts and replies beside it in search/<card id>/blobs/ (never the API key). Without a GPU,
candidates are generated and compiled only.

Exit status: 0 when every card's run completed; 1 when a card's run failed (an error, or a root
that failed, e.g. a worker that cannot start), with one line naming the cards and why (the other
cards are still searched); 130 after Ctrl-C, which stops after the candidates in flight, saves
the tree and starts no further card (--resume continues).

  --cards ID...       the cards to search (default: all, largest share of model time first;
                      vendor-backed cards are skipped, and with --proposer builtin the cards it
                      does not cover)
  --iterations N      nodes per card, root included (default 50)
  --time-limit S      wall-time limit per card in seconds
  --proposer NAME     builtin (default), openai or anthropic
  --seed S            seed of the search (default 0)
  --resume            continue existing trees instead of refusing to overwrite them; a tree that
                      is only a failed root starts again (the failed root stays on record)
  --restart           start every selected card afresh: an existing tree.json is renamed to
                      tree-<UTC time>.json (kept, never deleted) and a new tree begins
  --timeout S         time limit per candidate for its compile and for its evaluation (default 60)
  --worker PATH       the kforge-worker executable
  --gpus LIST         the GPUs to run workers on, one worker each, as numbered among the visible
                      GPUs (e.g. 0,2; default: every visible GPU). With more than one, candidates
                      are evaluated in parallel (docs/search.md, "Parallel search"); a GPU listed
                      twice gets two workers that take turns on it

LLM proposers (openai, anthropic); the settings are the provider's defaults, then the file, then
the flags (docs/llm-providers.md):
  --llm-config FILE   provider config JSON (base_url, model, api_key_env, timeouts, prices, ...)
  --model M           the model name (required, here or in the file)
  --base-url URL      endpoint without the path (e.g. http://127.0.0.1:8000/v1 for vLLM)
  --api-key-env NAME  the environment variable holding the API key (default OPENAI_API_KEY or
                      ANTHROPIC_API_KEY); the key itself is never accepted on the command line
The per-card line then ends with the model calls, tokens and cost of the card's tree.

One writer per project: while an optimize (or the app's Optimize or Benchmark Edit) is changing
PROJECT_DIR, another one fails at once, naming the holder's pid (docs/project-format.md).
)";

constexpr const char* kVerifyHelp = R"(usage: kforge verify FILE.cast [--arch sm_NN] [--json]

Checks a .cast package (docs/cast-format.md) without extracting or running anything: the ZIP
container, every CRC-32 and SHA-256, the format version (a newer major version is refused), the
manifest's consistency with the entries, and that every custom kernel can run on the architecture
(a cubin for it, or PTX no newer than it for the driver to JIT). Prints the package summary and
its audit (which ops are custom, which fell back and why); exits 1 with one line on any failure.

  --arch sm_NN           the GPU architecture to check against (default: sm_90, reported as assumed)
  --torch-version V      also require the package's minimum torch version to be <= V
  --cuda-version V       also require the package's minimum CUDA version to be <= V
  --json                 machine-readable report
)";

constexpr const char* kExportHelp = R"(usage: kforge export PROJECT_DIR -o FILE.cast [options]
       kforge export PROJECT_DIR --dry-run [--min-speedup X] [--cards ID...] [--json]

Packages the project's proven kernels into a .cast file (docs/cast-format.md, "Export"). For every
card, the best node of its search tree that passed validation and was timed (highest paired
speedup over eager; ties: lower median) becomes a custom kernel when its speedup is at least
--min-speedup, the runtime can dispatch the card's operator, its source compiles with NVRTC for
every architecture, and the sanitizer gate finds nothing. Every other card is listed as a fallback
(the original PyTorch kernel runs) with the reason. Each custom kernel carries its cubins, PTX,
source, launch plan, speedup, timing spread, validation record and a guard (the card's exact
dtypes, sizes and strides, 16-byte alignment, the compute capability). Prints the audit of every
card; the package is written atomically and read back with the strict reader before it replaces
FILE.cast. Then the in-model check (CUDA builds with a GPU): the package's model runs through the
runtime on the captured inputs; its outputs must be as accurate as eager's against the model run
in float64 (at most twice eager's relative RMSE plus one rounding; element-wise tolerances when the
model does not run in float64), a kernel that alone breaks that is dropped, and so is a kernel
whose removal makes the model more than 1% faster (by its GPU time with the host's launch overhead
hidden; by wall time where that cannot be isolated), and every kernel when together they make the
model slower than none by either clock. Dropped kernels become fallbacks with the reason; the
audit notes say whether the check ran and what it found.

  -o, --output FILE.cast  the package to write (an existing file is replaced only if it is a .cast)
  --dry-run               write nothing: list, card by card, whose best node would ship as a custom
                          kernel and why every other card would fall back, before anything is
                          compiled (a shipping card can still fall back on a failed compile, a
                          sanitizer finding or the in-model check); -o is not needed
  --min-speedup X         minimum speedup over eager for a custom kernel (default 1.05)
  --cards ID...           export only these cards (ids or unique prefixes); the others are listed
                          as fallbacks ("not selected")
  --arch sm_NN...         architectures to build cubins for (default: the one each kernel was
                          measured on, else sm_90); PTX of the oldest goes along for newer GPUs
  --sanitize MODE         auto (default): run each custom kernel once more in a kforge-worker under
                          compute-sanitizer (memcheck, racecheck, initcheck, synccheck) when
                          compute-sanitizer and a GPU are there, a finding makes it a fallback;
                          otherwise it is recorded and printed as "not sanitizer-checked".
                          on: the same, but fail when the sanitizer cannot run. off: skip it.
                          A pass is remembered (in the user cache) and reused by later exports of
                          the same kernel on the same samples, GPU, driver and toolchain.
  --rerun-sanitizer       run the sanitizer on every kernel even where an earlier pass would be reused
  --sanitize-jobs N       kernels sanitizer-checked at once, 1 to 16 (default 1); each is five
                          processes with a CUDA context of its own
  --no-model              a kernels-only package (default: include the project's TorchScript model,
                          which must be the file that was captured)
  --worker PATH           the kforge-worker executable (default: next to kforge; or $KFORGE_WORKER)
  --no-model-check        skip the in-model check (the audit notes say it was not run)
  --json                  print a JSON report instead of the audit table

On a terminal a progress line shows the card in work. Ctrl-C (or SIGTERM) stops the export after
that card: nothing is written and the exit status is 130 (sanitizer passes found so far are kept
for the next export).
)";

constexpr const char* kRunHelp = R"(usage: kforge run FILE.cast --inputs SPEC... [options]

Runs the package's TorchScript model end to end on the GPU (cuda:0), eager and with the package
loaded through libkforge_runtime, in up to five alternating blocks of passes each (loaded and
unloaded in turn, so a host whose speed drifts moves both sides alike). Prints the median latency
of each (wall time of forward plus a device synchronize, over all its blocks) and its GPU time with the host's
launch overhead hidden (what the kernels took, whatever the host's launch speed), the largest output difference
against eager and whether the outputs are as accurate as eager's (the in-model check's criterion,
see 'kforge export --help'), and every custom kernel's hit and fallback counts with the last reason
a call fell back. Exits 1 when they are not. Only builds with the CUDA runtime (-DKFORGE_TORCH_CUDA=ON) have it.

  --inputs SPEC...        the model inputs, as for capture: a torch.save file, or shape specs
                          such as 32x3x224x224:float16 (synthesized, seeded)
  --runs N                timed forward passes per configuration (default 20)
  --warmup N              untimed passes before each side's first block (default 3; one before
                          each later block)
  --seed S                seed for synthesized inputs (default 0)
  --model MODEL.pt        run this TorchScript file instead of the package's model (required for a
                          kernels-only package)
  --no-kernels            eager only
  --json                  machine-readable report (docs/runtime.md, "kforge run")
)";

const char* helpFor(const std::string& command)
{
    if (command == "capture")
        return kCaptureHelp;
    if (command == "cards")
        return kCardsHelp;
    if (command == "bench")
        return kBenchHelp;
    if (command == "tree")
        return kTreeHelp;
    if (command == "optimize")
        return kOptimizeHelp;
    if (command == "verify")
        return kVerifyHelp;
    if (command == "export")
        return kExportHelp;
    if (command == "run")
        return kRunHelp;
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
    if (command == "bench")
        return runBenchCommand(rest);
    if (command == "tree")
        return runTreeCommand(rest);
    if (command == "optimize")
        return runOptimizeCommand(rest);
    if (command == "verify")
        return runVerifyCommand(rest);
    if (command == "export")
        return runExportCommand(rest);
    if (command == "run")
        return runRunCommand(rest);
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
