#include "cast_export/CastExport.h"

#include "cast/RuntimeOps.h"
#include "model/LaunchPlan.h"
#include "model/NodeRanking.h"
#include "project/ProjectJson.h"
#include "search/TreeStore.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <optional>
#include <set>

namespace kforge::core {
namespace {

using nlohmann::json;

std::string formatSpeedup(double speedup)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3fx", speedup);
    return text;
}

std::string formatNumber(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

// The architecture the node was compiled for when it was evaluated, or "".
std::string measuredArchitecture(const SearchNode& node)
{
    const std::optional<CompileResult>& compile = node.evaluation.compile;
    return compile && isArchName(compile->architecture) ? compile->architecture : std::string();
}

// The validation part of a node's evaluation report (docs/cast-format.md): the worker's status,
// every check, the input sets, the failure if any and the device, plus the node it belongs to.
// Timing lives in the manifest's speedup/timing fields.
json validationRecord(const SearchNode& node)
{
    json record = json::object();
    record["node"] = node.id;
    if (const std::optional<ValidationResult>& validation = node.evaluation.validation) {
        if (!validation->status.empty())
            record["status"] = validation->status;
        json checks = json::array();
        for (const ValidationCheck& check : validation->checks)
            checks.push_back({{"name", check.name}, {"passed", check.passed}, {"detail", check.detail}});
        record["checks"] = checks;
        if (validation->inputSets)
            record["validated_input_sets"] = *validation->inputSets;
        if (validation->failure)
            record["failure"] = {{"check", validation->failure->check}, {"message", validation->failure->message}};
        if (!validation->device.is_null())
            record["device"] = validation->device;
    }
    if (node.evaluation.timing && !node.evaluation.timing->method.empty())
        record["timing_method"] = node.evaluation.timing->method;
    return record;
}

// "5 nodes: 3 compiled-only, 2 failed-compile".
std::string statusSummary(const SearchTree& tree)
{
    std::map<std::string, int> counts;
    for (const SearchNode& node : tree.nodes())
        ++counts[nodeStatusName(node.status)];
    std::string text = std::to_string(tree.size()) + (tree.size() == 1 ? " node" : " nodes");
    const char* separator = ": ";
    for (const auto& [status, count] : counts) {
        text += separator + std::to_string(count) + " " + status;
        separator = ", ";
    }
    return text;
}

// The plan the node was evaluated with: its candidate's plan, or the one embedded in its source;
// parsed, checked against the card and normalized.
Result<json> effectivePlan(const SearchNode& node, const OperatorCard& card)
{
    json planJson = node.candidate.launchPlan;
    if (!planJson.is_object() || planJson.empty()) {
        const auto text = embeddedPlanText(node.candidate.source);
        if (!text)
            return makeError(ErrorCode::InvalidArgument, "the node has no launch plan", "launch plan");
        try {
            planJson = json::parse(*text);
        } catch (const json::parse_error& e) {
            return makeError(ErrorCode::InvalidArgument, std::string("embedded plan is not valid JSON: ") + e.what(),
                             "launch plan");
        }
    }
    auto plan = parseLaunchPlan(planJson, card);
    if (!plan)
        return makeError(plan.error().code, plan.error().toString(), "launch plan");
    if (auto valid = validateLaunchPlan(plan.value(), card); !valid)
        return makeError(valid.error().code, valid.error().toString(), "launch plan");
    return toJson(plan.value());
}

// The oldest plain architecture of the list (arch-specific sm_90a PTX runs nowhere else): the one
// whose PTX a newer GPU can JIT. "" when there is none.
std::string ptxSourceArch(const std::vector<std::string>& archs)
{
    std::string best;
    for (const std::string& arch : archs) {
        const bool plain = arch.size() > 3 && std::isdigit(static_cast<unsigned char>(arch.back()));
        if (plain && (best.empty() || archNumber(arch) < archNumber(best)))
            best = arch;
    }
    return best;
}

void makeFallback(CastKernel& kernel, ExportDecision& decision, std::string reason)
{
    kernel.kind = KernelKind::Fallback;
    kernel.cubins.clear();
    kernel.ptx.reset();
    kernel.ptxArch.clear();
    kernel.source.clear();
    kernel.fallbackReason = reason;
    decision.custom = false;
    decision.architectures.clear();
    decision.reason = std::move(reason);
}

} // namespace

Result<std::map<std::string, SearchTree>> loadProjectTrees(const std::filesystem::path& projectDir,
                                                           const Project& project)
{
    std::map<std::string, SearchTree> trees;
    for (const OperatorCard& card : project.cards) {
        const TreeStore store(TreeStore::defaultPath(projectDir, card.id));
        if (!store.exists())
            continue;
        auto tree = store.load();
        if (!tree)
            return tree.error();
        if (tree->cardId() != card.id)
            return makeError(ErrorCode::InvalidArgument, "the tree belongs to card " + tree->cardId(),
                             store.file().string());
        trees.emplace(card.id, std::move(tree.value()));
    }
    return trees;
}

namespace {

// Exportable nodes (passed with a speedup) per GPU model.
std::map<std::string, int> exportableByGpu(const SearchTree& tree)
{
    std::map<std::string, int> counts;
    for (const SearchNode& node : tree.nodes())
        if (nodeSpeedup(node))
            ++counts[node.evaluation.gpuModel];
    return counts;
}

} // namespace

const SearchNode* bestExportableNode(const SearchTree& tree)
{
    const SearchNode* best = bestNode(tree);
    return best && nodeSpeedup(*best) ? best : nullptr;
}

KernelGuard guardForCard(const OperatorCard& card, const std::string& arch, std::int64_t alignmentBytes)
{
    KernelGuard guard;
    for (const ArgSpec& arg : card.args) {
        if (arg.kind == ArgKind::Tensor && !arg.tensors.empty()) {
            const TensorSpec& t = arg.tensors.front();
            guard.tensors.push_back(TensorGuard{arg.name, t.dtype, t.sizes, t.strides, alignmentBytes});
        } else if (arg.kind == ArgKind::TensorList) {
            for (std::size_t i = 0; i < arg.tensors.size(); ++i) {
                const TensorSpec& t = arg.tensors[i];
                guard.tensors.push_back(
                    TensorGuard{arg.name + "[" + std::to_string(i) + "]", t.dtype, t.sizes, t.strides, alignmentBytes});
            }
        }
    }
    const int number = archNumber(arch);
    guard.capabilityMajor = number / 10;
    guard.capabilityMinor = number % 10;
    return guard;
}

json inModelCheckToJson(const InModelCheck& check)
{
    json dropped = json::array();
    for (const DroppedKernel& d : check.dropped)
        dropped.push_back({{"kernel", d.kernelId}, {"reason", d.reason}});
    return {{"run", check.run}, {"passed", check.passed}, {"reason", check.reason}, {"dropped", dropped}};
}

Result<InModelCheck> inModelCheckFromJson(const json& j)
{
    try {
        InModelCheck check{j.at("run").get<bool>(), j.at("passed").get<bool>(), j.at("reason").get<std::string>(), {}};
        for (const json& d : j.at("dropped"))
            check.dropped.push_back({d.at("kernel").get<std::string>(), d.at("reason").get<std::string>()});
        return check;
    } catch (const json::exception& e) {
        return makeError(ErrorCode::InvalidArgument, std::string("not an in-model check verdict: ") + e.what());
    }
}

void applyInModelCheck(ExportResult& result, InModelCheck check)
{
    CastPackage& package = result.package;
    for (const DroppedKernel& dropped : check.dropped) {
        for (std::size_t i = 0; i < package.kernels.size(); ++i) {
            CastKernel& kernel = package.kernels[i];
            if (kernel.id != dropped.kernelId || kernel.kind != KernelKind::Custom)
                continue;
            for (ExportDecision& decision : result.decisions)
                if (decision.kernelId == kernel.id) {
                    makeFallback(kernel, decision, decision.reason + "; dropped: " + dropped.reason);
                    for (AuditEntry& entry : package.audit)
                        if (entry.cardId == decision.cardId) {
                            entry.decision = "fallback";
                            entry.reason = decision.reason;
                        }
                }
        }
    }
    std::set<std::string> archs;
    for (const CastKernel& kernel : package.kernels)
        for (const auto& [arch, cubin] : kernel.cubins)
            archs.insert(arch);
    if (!check.dropped.empty())
        package.header.architectures.assign(archs.begin(), archs.end());
    package.auditNotes.push_back(std::string("in-model check: ") +
                                 (check.run ? (check.passed ? "passed" : "failed") : "not run") + " (" + check.reason +
                                 ")");
    result.inModelCheck = std::move(check);
}

namespace {

// A kernel that reached the sanitizer gate: what completing it needs once the verdict is in.
struct PendingKernel {
    const OperatorCard* card = nullptr;
    const SearchNode* node = nullptr;
    double speedup = 0;
    std::string best;      // "best 1.623x (n3)" (+ " on GPU"), for a sanitizer fallback's reason
    std::string gpu;       // " on NVIDIA H200" where the tree holds nodes of several GPUs, else ""
    std::string guardArch; // the architecture the guard names
    std::vector<std::string> archs;
    json plan;
    std::shared_future<Result<SanitizerVerdict>> verdict;
};

// One card's kernel and decision while the export runs.
struct CardSlot {
    CastKernel kernel;
    ExportDecision decision;
    std::optional<PendingKernel> pending; // set when the card waits for its sanitizer verdict
};

// Starts each kernel's sanitizer gate: at once, to its end, when options.sanitizeConcurrency is 1
// (or there is no gate); else on its own thread, at most that many at a time (a new gate first
// waits for a running one to finish). The futures of std::async wait for their thread when the
// last copy goes, so an export that returns early (an error, a cancel) never leaves a gate running.
class SanitizerGates {
public:
    explicit SanitizerGates(const ExportOptions& options) : m_options(options) {}

    std::shared_future<Result<SanitizerVerdict>> start(const OperatorCard& card, const SearchNode& node)
    {
        if (!m_options.sanitize)
            return ready(SanitizerVerdict{json{{"checked", false}, {"reason", m_options.sanitizerSkipReason}}, {}});
        if (m_options.sanitizeConcurrency <= 1)
            return ready(m_options.sanitize(card, node));
        const auto finished = [](const std::shared_future<Result<SanitizerVerdict>>& f) {
            return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
        };
        std::erase_if(m_running, finished);
        while (m_running.size() >= static_cast<std::size_t>(m_options.sanitizeConcurrency)) {
            m_running.front().wait();
            std::erase_if(m_running, finished);
        }
        // The caller's options outlive the thread (the export waits for every verdict's future);
        // this object may not (an early return drops it before the slots that hold the futures).
        const ExportSanitizeFn& sanitize = m_options.sanitize;
        auto verdict =
            std::async(std::launch::async, [&sanitize, &card, &node] { return sanitize(card, node); }).share();
        m_running.push_back(verdict);
        return verdict;
    }

private:
    static std::shared_future<Result<SanitizerVerdict>> ready(Result<SanitizerVerdict> verdict)
    {
        std::promise<Result<SanitizerVerdict>> promise;
        promise.set_value(std::move(verdict));
        return promise.get_future().share();
    }

    const ExportOptions& m_options;
    std::vector<std::shared_future<Result<SanitizerVerdict>>> m_running;
};

// Makes the slot's kernel custom, or a fallback when the sanitizer found something.
void completeKernel(CardSlot& slot, SanitizerVerdict verdict,
                    std::map<std::string, std::vector<std::string>>& uncheckedByReason,
                    std::vector<std::string>& reusedVerdicts, std::set<std::string>& headerArchs)
{
    const PendingKernel& pending = *slot.pending;
    CastKernel& kernel = slot.kernel;
    ExportDecision& decision = slot.decision;
    if (!verdict.record.is_object())
        verdict.record = json{{"checked", false}, {"reason", "the sanitizer gate returned no record"}};
    decision.sanitizer = verdict.record;
    if (!verdict.finding.empty()) {
        kernel.validation = validationRecord(*pending.node);
        kernel.validation["sanitizer"] = verdict.record;
        makeFallback(kernel, decision, pending.best + "; sanitizer: " + verdict.finding);
        return;
    }
    kernel.kind = KernelKind::Custom;
    kernel.guard = guardForCard(*pending.card, pending.guardArch, 16);
    kernel.source = pending.node->candidate.source;
    kernel.launchPlan = pending.plan;
    kernel.speedup = pending.speedup;
    kernel.medianUs = decision.medianUs;
    kernel.spreadPercent = decision.spreadPercent;
    kernel.validation = validationRecord(*pending.node);
    kernel.validation["sanitizer"] = verdict.record;
    decision.custom = true;
    decision.architectures = pending.archs;
    decision.reason = formatSpeedup(pending.speedup) + " (" + pending.node->id + ")" + pending.gpu;
    if (!verdict.record.value("checked", false)) {
        decision.reason += ", not sanitizer-checked";
        uncheckedByReason[verdict.record.value("reason", std::string("no reason given"))].push_back(kernel.id);
    } else if (verdict.record.contains("reused")) {
        reusedVerdicts.push_back(kernel.id);
    }
    headerArchs.insert(pending.archs.begin(), pending.archs.end());
}

} // namespace

ExportSelection selectExportNode(const OperatorCard& card, const std::map<std::string, SearchTree>& trees,
                                 const std::set<std::string>& selected, double minSpeedup)
{
    ExportSelection selection;
    const auto refuse = [&](std::string reason) {
        selection.reason = std::move(reason);
        return selection;
    };
    if (!selected.empty() && !selected.count(card.id))
        return refuse("not selected (--cards)");
    const auto treeIt = trees.find(card.id);
    if (treeIt == trees.end() || treeIt->second.empty())
        return refuse(card.vendorBacked ? "vendor-backed (cuBLAS/cuDNN): not searched"
                                        : "no search tree (not optimized)");
    const SearchTree& tree = treeIt->second;
    selection.node = bestExportableNode(tree);
    if (!selection.node)
        return refuse("no passed node with a measured speedup (" + statusSummary(tree) + ")");
    const SearchNode& node = *selection.node;
    selection.speedup = *nodeSpeedup(node);
    selection.gpu = exportableByGpu(tree).size() > 1 ? " on " + node.evaluation.gpuModel : std::string();
    selection.best = "best " + formatSpeedup(selection.speedup) + " (" + node.id + ")" + selection.gpu;
    if (!(selection.speedup >= minSpeedup))
        return refuse("best " + formatSpeedup(selection.speedup) + " below --min-speedup " + formatNumber(minSpeedup) +
                      " (" + node.id + ")");
    std::string why;
    if (!runtimeHookFor(card.qualifiedName(), why))
        return refuse(selection.best + "; " + why);
    auto plan = effectivePlan(node, card);
    if (!plan)
        return refuse(selection.best + "; " + plan.error().toString());
    selection.plan = std::move(plan.value());
    return selection;
}

std::vector<ExportPreviewRow> previewCastExport(const Project& project, const std::map<std::string, SearchTree>& trees,
                                                const std::vector<std::string>& cardIds, double minSpeedup)
{
    const std::set<std::string> selected(cardIds.begin(), cardIds.end());
    std::vector<ExportPreviewRow> rows;
    for (const OperatorCard& card : project.cards) {
        const ExportSelection selection = selectExportNode(card, trees, selected, minSpeedup);
        ExportPreviewRow row;
        row.cardId = card.id;
        row.op = card.displayName();
        row.ships = selection.proceeds();
        if (selection.node) {
            row.nodeId = selection.node->id;
            row.speedup = selection.speedup;
        }
        row.reason = row.ships ? selection.best : selection.reason;
        rows.push_back(std::move(row));
    }
    return rows;
}

Result<ExportResult> buildCastExport(const Project& project, const std::map<std::string, SearchTree>& trees,
                                     const ExportOptions& options)
{
    if (!options.compile)
        return makeError(ErrorCode::Internal, "no compile function", "export");
    for (const std::string& arch : options.architectures) {
        if (!isArchName(arch))
            return makeError(ErrorCode::InvalidArgument, "expected sm_NN (e.g. sm_90), got '" + arch + "'", "--arch");
    }
    std::set<std::string> selected;
    for (const std::string& id : options.cardIds) {
        const bool known = std::any_of(project.cards.begin(), project.cards.end(),
                                       [&](const OperatorCard& card) { return card.id == id; });
        if (!known)
            return makeError(ErrorCode::NotFound, "no card with that id in the project", "--cards " + id);
        selected.insert(id);
    }
    const std::string fallbackArch =
        options.architectures.empty() ? std::string(kDefaultExportArch) : options.architectures.front();

    ExportResult result;
    CastPackage& package = result.package;
    package.header.producer = options.producer;
    package.header.createdUtc = options.createdUtc;
    package.header.minTorchVersion = options.minTorchVersion;
    package.header.minCudaVersion = options.minCudaVersion;
    package.model = options.model;
    std::set<std::string> headerArchs;
    std::map<std::string, std::vector<std::string>> uncheckedByReason; // sanitizer skip reason -> kernels
    std::vector<std::string> reusedVerdicts; // kernels whose passed sanitizer verdict was reused
    std::vector<std::string> regionKernels;  // fused-region kernels that ship as custom

    // One slot per card, moved into the package in card order at the end: a kernel that reached
    // the sanitizer gate is completed there, once its verdict is in (SanitizerGates may run several
    // gates at once).
    std::vector<CardSlot> slots(project.cards.size());
    SanitizerGates gates(options);
    for (std::size_t index = 0; index < project.cards.size(); ++index) {
        if (options.beforeCard && !options.beforeCard(index, project.cards.size()))
            return makeError(ErrorCode::Cancelled, "export cancelled: nothing written",
                             "card " + std::to_string(index + 1) + " of " + std::to_string(project.cards.size()));
        const OperatorCard& card = project.cards[index];
        CardSlot& slot = slots[index];
        ExportDecision& decision = slot.decision;
        decision.cardId = card.id;
        decision.op = card.displayName(); // "region: batch_norm -> relu" for a region card
        decision.kernelId = "k" + std::to_string(index);

        CastKernel& kernel = slot.kernel;
        kernel.id = decision.kernelId;
        kernel.cardId = card.id;
        kernel.op = card.op;
        kernel.overload = card.overload;
        kernel.args = json::array();
        for (const ArgSpec& arg : card.args)
            kernel.args.push_back(toJson(arg));
        if (card.region)
            kernel.region = toJson(*card.region);
        kernel.guard = guardForCard(card, fallbackArch, 1);
        kernel.validation = json::object();

        auto finish = [&](std::string reason) { makeFallback(kernel, decision, std::move(reason)); };

        ExportSelection selection = selectExportNode(card, trees, selected, options.minSpeedup);
        if (selection.node) {
            decision.nodeId = selection.node->id;
            decision.speedup = selection.speedup;
            decision.medianUs = selection.node->latency->medianUs;
            decision.spreadPercent = (selection.node->latency->q3Us - selection.node->latency->q1Us) /
                selection.node->latency->medianUs * 100.0;
        }
        if (!selection.proceeds()) {
            finish(selection.reason);
            continue;
        }
        const SearchNode* node = selection.node;
        const double speedup = selection.speedup;
        const std::string& best = selection.best;
        const std::string& gpu = selection.gpu;
        const json plan = selection.plan;

        // Architectures: as asked, else the one the node was measured on. The guard names the
        // measured one when it is exported (that is where the speedup was proven), else the first.
        const std::string measured = measuredArchitecture(*node);
        std::vector<std::string> archs = options.architectures;
        if (archs.empty())
            archs.push_back(measured.empty() ? std::string(kDefaultExportArch) : measured);
        const std::string guardArch =
            std::find(archs.begin(), archs.end(), measured) != archs.end() ? measured : archs.front();
        const std::string ptxArch = ptxSourceArch(archs);
        std::string compileFailure;
        for (const std::string& arch : archs) {
            auto compiled = options.compile(node->candidate.source, arch);
            if (!compiled) {
                compileFailure = "compile for " + arch + " failed: " + compiled.error().toString();
                break;
            }
            if (compiled->cubin.empty()) {
                compileFailure = "compile for " + arch + " failed: no cubin";
                break;
            }
            kernel.cubins[arch] = std::move(compiled->cubin);
            if (arch == ptxArch && !compiled->ptx.empty()) {
                kernel.ptx = std::move(compiled->ptx);
                kernel.ptxArch = "compute_" + std::to_string(archNumber(arch));
            }
        }
        if (!compileFailure.empty()) {
            finish(best + "; " + compileFailure);
            continue;
        }

        slot.pending = PendingKernel{&card, node, speedup, best, gpu, guardArch, archs, plan, gates.start(card, *node)};
        // A gate that cannot run at all (--sanitize on without compute-sanitizer) stops the export
        // at once when gates run one at a time; run concurrently, its error is met at the end.
        if (auto& verdict = slot.pending->verdict;
            verdict.wait_for(std::chrono::seconds(0)) == std::future_status::ready && !verdict.get())
            return verdict.get().error();
    }

    for (CardSlot& slot : slots) {
        if (slot.pending) {
            const Result<SanitizerVerdict>& gate = slot.pending->verdict.get();
            if (!gate)
                return gate.error();
            completeKernel(slot, gate.value(), uncheckedByReason, reusedVerdicts, headerArchs);
        }
        package.kernels.push_back(std::move(slot.kernel));
        result.decisions.push_back(std::move(slot.decision));
    }

    package.header.architectures.assign(headerArchs.begin(), headerArchs.end());
    for (const ExportDecision& d : result.decisions)
        package.audit.push_back(AuditEntry{d.cardId, d.op, d.custom ? "custom" : "fallback", d.reason});
    for (const auto& [reason, kernels] : uncheckedByReason) {
        std::string list;
        for (const std::string& id : kernels)
            list += (list.empty() ? "" : ", ") + id;
        std::string why = reason;
        if (const std::string suffix = ": not sanitizer-checked";
            why.size() > suffix.size() && why.compare(why.size() - suffix.size(), suffix.size(), suffix) == 0)
            why.resize(why.size() - suffix.size());
        package.auditNotes.push_back("not sanitizer-checked: " + list + " (" + why + ")");
    }
    for (const CastKernel& kernel : package.kernels)
        if (kernel.kind == KernelKind::Custom && !kernel.region.is_null())
            regionKernels.push_back(kernel.id);
    if (!regionKernels.empty()) {
        std::string list;
        for (const std::string& id : regionKernels)
            list += (list.empty() ? "" : ", ") + id;
        package.auditNotes.push_back("fused-region kernels " + list +
                                     ": served where a model's graph runs their chain (kforge run, the C++ API, "
                                     "torch.compile with kforge_backend); elsewhere their ops run, with the op "
                                     "kernels");
    }
    if (!reusedVerdicts.empty()) {
        std::string list;
        for (const std::string& id : reusedVerdicts)
            list += (list.empty() ? "" : ", ") + id;
        package.auditNotes.push_back("sanitizer verdicts reused (the same kernel passed on the same samples before): " +
                                     list);
    }
    return result;
}

} // namespace kforge::core
