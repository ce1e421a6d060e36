#pragma once
// What `kforge export` puts in a .cast package (docs/cast-format.md, "Export"): for every card of a
// project, the best proven node of its search tree becomes a custom kernel when it is fast enough,
// the runtime can dispatch its operator, it compiles for every target architecture and the
// sanitizer gate finds nothing; every other card is a fallback with a one-line reason. Every card
// of the project appears in the manifest and the audit.
//
// Torch-free and NVRTC-free: compiling and the sanitizer gate are injected as functions, so the
// selection is tested without a compiler or a GPU. Stateless; buildCastExport() may be called from
// any thread, and calls the injected functions on that thread, one at a time.

#include "cast/CastPackage.h"
#include "model/OperatorCard.h"
#include "model/Project.h"
#include "model/SearchTree.h"
#include "util/Result.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kforge::core {

/// The default --min-speedup: a kernel must beat eager by more than timing noise.
inline constexpr double kDefaultMinSpeedup = 1.05;
/// The architecture a kernel is compiled for when neither --arch nor its evaluation names one.
inline constexpr const char* kDefaultExportArch = "sm_90";

/// One successful compile of a node's source.
struct ExportCompiled {
    std::string cubin; // SASS for the architecture asked for
    std::string ptx;   // PTX of the matching compute_NN
};

/// Compiles `source` for `arch` ("sm_90"). An Error (the source does not compile, NVRTC failed)
/// makes the card a fallback whose reason is the error's one line.
using ExportCompileFn = std::function<Result<ExportCompiled>(const std::string& source, const std::string& arch)>;

/// The sanitizer gate's answer for one kernel. `record` is stored as the kernel's
/// validation.sanitizer (docs/validation.md: {"checked": true, "tool", "passed", "tools"} or
/// {"checked": false, "reason"}, plus "reused": {"checked_utc"} when an earlier run's pass was reused,
/// listed in an audit note); a non-empty `finding` (one line) turns the card into a fallback.
struct SanitizerVerdict {
    nlohmann::json record;
    std::string finding;
};

/// Runs one custom kernel (the node's source and plan, on the card's captured samples) under
/// compute-sanitizer. An Error aborts the whole export (--sanitize on when the sanitizer cannot
/// run); a gate that cannot run but may be skipped answers {"checked": false, "reason"} instead.
using ExportSanitizeFn = std::function<Result<SanitizerVerdict>(const OperatorCard& card, const SearchNode& node)>;

struct ExportOptions {
    double minSpeedup = kDefaultMinSpeedup;
    /// Full card ids to export; empty: every card. Cards not named are listed as fallbacks
    /// ("not selected (--cards)") so that the audit still covers the whole project.
    std::vector<std::string> cardIds;
    /// Architectures to build cubins for; empty: per kernel, the one its evaluation was compiled
    /// for (details.compile.architecture), else kDefaultExportArch.
    std::vector<std::string> architectures;
    ExportCompileFn compile; // required
    /// Null: no kernel is sanitizer-checked and each records {"checked": false,
    /// "reason": sanitizerSkipReason}.
    ExportSanitizeFn sanitize;
    std::string sanitizerSkipReason = "--sanitize off";
    /// How many kernels' sanitizer gates may run at once, each on its own thread (`sanitize` must
    /// then be safe to call from that many threads); the package and its audit are the same. 1:
    /// each gate runs to its end before the next card is looked at.
    int sanitizeConcurrency = 1;
    std::optional<std::string> model; // TorchScript bytes; nullopt: a kernels-only package
    std::string producer;             // header fields, copied as given
    std::string createdUtc;
    std::string minTorchVersion;
    std::string minCudaVersion;
    /// Called before card `index` (0-based) of `count` is looked at; returning false stops the
    /// export there with ErrorCode::Cancelled (a card's compiles and sanitizer run are not cut
    /// short). Null: every card is looked at.
    std::function<bool(std::size_t index, std::size_t count)> beforeCard;
};

/// What happened to one card (one per card of the project, in project order).
struct ExportDecision {
    std::string cardId;
    std::string op; // "aten::softmax.int"
    std::string kernelId;
    bool custom = false;
    std::string reason;            // the audit reason: "1.623x (n3)" or why it fell back
    std::string nodeId;            // the node chosen (custom, or the best one that was refused); empty if none
    std::optional<double> speedup; // the chosen node's paired speedup
    double medianUs = 0;
    double spreadPercent = 0;
    std::vector<std::string> architectures; // cubins built (custom only)
    nlohmann::json sanitizer;               // the gate's record (custom, or a sanitizer fallback)
};

/// A custom kernel the in-model check took out of the package, and why.
struct DroppedKernel {
    std::string kernelId;
    std::string reason; // "in-model check: the model ran 2.1% faster without it"
};

/// The in-model check: the whole model run through libkforge_runtime with the chosen kernels on the
/// captured inputs, outputs compared with eager, each kernel's removal timed (docs/cast-format.md,
/// "In-model check"). Run by `kforge export` in builds with the runtime; `reason` says why not
/// otherwise, or summarizes the result.
struct InModelCheck {
    bool run = false;
    bool passed = false;
    std::string reason;
    std::vector<DroppedKernel> dropped;
};

struct ExportResult {
    CastPackage package;
    std::vector<ExportDecision> decisions;
    InModelCheck inModelCheck;
};

/// The search tree of each card that has one, by card id. A missing tree file is simply absent;
/// a damaged one is an error naming the file.
Result<std::map<std::string, SearchTree>> loadProjectTrees(const std::filesystem::path& projectDir,
                                                           const Project& project);

/// The node export would package: the tree's bestNode() (model/NodeRanking.h: the highest
/// nodeSpeedup, ties to the lower median latency, then to the earlier node, within the GPU model
/// with the most passed nodes that have a speedup) when it has a speedup. Null when there is none.
const SearchNode* bestExportableNode(const SearchTree& tree);

/// The first stage of a card's export decision, before anything is compiled: the node that would
/// become its kernel, or the audit's reason why there is none. `node` is also set when a node was
/// found but refused (below --min-speedup, no runtime hook, a bad plan).
struct ExportSelection {
    const SearchNode* node = nullptr;
    double speedup = 0;  // node's paired speedup (model/NodeRanking.h nodeSpeedup)
    std::string best;    // "best 1.623x (n3)", plus gpu
    std::string gpu;     // " on NVIDIA H200" when the tree holds passed nodes of several GPU models
    nlohmann::json plan; // the node's effective launch plan (when it proceeds)
    std::string reason;  // why the card is a fallback; empty: it proceeds to compile and sanitize

    bool proceeds() const { return reason.empty(); }
};

/// `selected`: full card ids (empty: every card). The rule buildCastExport applies first.
ExportSelection selectExportNode(const OperatorCard& card, const std::map<std::string, SearchTree>& trees,
                                 const std::set<std::string>& selected, double minSpeedup);

/// One card of previewCastExport.
struct ExportPreviewRow {
    std::string cardId;
    std::string op; // OperatorCard::displayName()
    bool ships = false;
    std::string nodeId; // the best node, also when it is refused; empty if none
    std::optional<double> speedup;
    std::string reason; // "best 1.623x (n3)" when it ships, else the fallback reason export would give
};

/// What an export with these options would do, card by card, before anything is compiled: the
/// cards whose best node would become a custom kernel and the fallback reason of every other
/// card, exactly as buildCastExport decides them first. A shipping card can still become a
/// fallback at export: a failed compile, a sanitizer finding, or the in-model check dropping it.
std::vector<ExportPreviewRow> previewCastExport(const Project& project, const std::map<std::string, SearchTree>& trees,
                                                const std::vector<std::string>& cardIds, double minSpeedup);

/// The guard of a card: one TensorGuard per tensor argument in schema order (a tensor list gives
/// one per element, named "arg[i]"), dtype, sizes and strides from the card, `alignmentBytes` for
/// every one, and the compute capability of `arch` (sm_90 -> 9.0, sm_100 -> 10.0).
KernelGuard guardForCard(const OperatorCard& card, const std::string& arch, std::int64_t alignmentBytes);

/// Records the in-model check in `result`: each dropped kernel becomes a fallback with its reason
/// (package entry, decision and audit line), the header's architectures shrink to those of the
/// remaining custom kernels, and one "in-model check: ..." audit note summarizes it.
void applyInModelCheck(ExportResult& result, InModelCheck check);

/// {"run", "passed", "reason", "dropped": [{"kernel", "reason"}]}: how kforge-cast-run hands the
/// check to kforge export, and how export's --json reports it.
nlohmann::json inModelCheckToJson(const InModelCheck& check);
/// The inverse; InvalidArgument when a field is missing or mistyped.
Result<InModelCheck> inModelCheckFromJson(const nlohmann::json& j);

/// Selects, compiles and gates every card and assembles the package (header fields from
/// `options`; counts and checksums are the writer's). Errors: a --cards id that is not in the
/// project, a malformed architecture, no compile function, or an error from `sanitize`.
Result<ExportResult> buildCastExport(const Project& project, const std::map<std::string, SearchTree>& trees,
                                     const ExportOptions& options);

} // namespace kforge::core
