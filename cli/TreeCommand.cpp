#include "Commands.h"
#include "ProjectCard.h"
#include "util/ArgParser.h"

#include "model/LaunchPlan.h"
#include "model/NodeRanking.h"
#include "model/SearchTreeJson.h"
#include "model/TextBounds.h"
#include "search/ProvenanceTexts.h"
#include "search/TreeStore.h"
#include "util/AtomicFile.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

namespace kforge::cli {
namespace {

std::string producedBy(const core::SearchNode& node)
{
    switch (node.provenance.kind) {
    case core::ProvenanceKind::Root:
        return "root";
    case core::ProvenanceKind::BuiltinTransformation:
        return node.provenance.transformation;
    case core::ProvenanceKind::Llm:
        return node.provenance.provider + "/" + node.provenance.model;
    case core::ProvenanceKind::ManualEdit:
        return "manual edit";
    }
    return "?";
}

// Text from a tree or an LLM, made safe for a terminal: bytes that are not UTF-8 and control
// characters other than newline and tab (escape sequences) become '?'.
std::string printable(const std::string& text)
{
    std::string out;
    out.reserve(text.size());
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::string_view rest = std::string_view(text).substr(pos);
        const std::size_t good = core::firstInvalidUtf8(rest).value_or(rest.size());
        for (std::size_t i = 0; i < good; ++i) {
            const unsigned char c = static_cast<unsigned char>(rest[i]);
            out += (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f ? '?' : rest[i];
        }
        pos += good;
        if (pos < text.size()) {
            out += '?';
            ++pos;
        }
    }
    return out;
}

std::string integerOr(const nlohmann::json& object, const std::string& key, const std::string& otherwise)
{
    if (object.is_object() && object.contains(key) && object[key].is_number_integer())
        return std::to_string(object[key].get<long long>());
    return otherwise;
}

std::string stringOr(const nlohmann::json& object, const std::string& key)
{
    if (object.is_object() && object.contains(key) && object[key].is_string())
        return object[key].get<std::string>();
    return {};
}

// One text of an LLM record under a header line, resolved from the blob store when stored there.
void printText(const nlohmann::json& holder, const std::string& name, const std::string& header,
               const core::TextBlobStore& blobs)
{
    if (!core::hasProvenanceText(holder, name))
        return;
    auto text = core::provenanceText(holder, name, blobs);
    const std::string bytes = integerOr(holder, name + "_bytes", text ? std::to_string(text->size()) : "?");
    std::cout << "--- " << header << " (" << bytes << " bytes";
    if (holder.contains(name + "_truncated") && holder[name + "_truncated"] == true)
        std::cout << "; the stored copy keeps the first " << core::kMaxStoredTextBytes;
    std::cout << ") ---\n";
    if (!text)
        std::cout << "(unavailable: " << printable(text.error().toString()) << ")\n";
    else
        std::cout << printable(text.value()) << (text->ends_with("\n") ? "" : "\n");
}

// `kforge tree --node ID`: one node in full, its LLM prompts and replies included.
int printNode(const core::SearchNode& node, const core::TextBlobStore& blobs)
{
    std::cout << "node " << node.id << " (parent " << node.parentId.value_or("-") << ", depth " << node.depth
              << "): " << core::nodeStatusName(node.status);
    if (node.latency) {
        char text[64];
        std::snprintf(text, sizeof text, ", %.2f us", node.latency->medianUs);
        std::cout << text;
    }
    if (const std::optional<double> speedup = core::nodeSpeedup(node)) {
        char text[64];
        std::snprintf(text, sizeof text, ", %.3fx eager", *speedup);
        std::cout << text;
    }
    std::cout << "\nproduced by: " << printable(producedBy(node)) << " ("
              << core::provenanceKindName(node.provenance.kind) << ")\n";
    if (!node.failureReason.empty())
        std::cout << "reason: " << printable(node.failureReason) << "\n";
    if (!node.evaluation.reason.detail.empty())
        std::cout << "--- reason detail ---\n" << printable(node.evaluation.reason.detail) << "\n";
    std::cout << "--- source ---\n"
              << printable(node.candidate.source) << (node.candidate.source.ends_with("\n") ? "" : "\n");
    std::cout << "--- launch plan ---\n" << core::dumpSearchTreeJson(node.candidate.launchPlan, 1) << "\n";
    const nlohmann::json& details = node.provenance.details;
    printText(details, "system_prompt", "system prompt", blobs);
    if (details.is_object() && details.contains("calls") && details["calls"].is_array()) {
        int index = 0;
        for (const nlohmann::json& call : details["calls"]) {
            ++index;
            const std::string kind = stringOr(call, "kind");
            const std::string label =
                "call " + std::to_string(index) + (kind.empty() ? "" : " (" + printable(kind) + ")");
            printText(call, "prompt", label + " prompt", blobs);
            printText(call, "response", label + " response", blobs);
            if (const std::string error = stringOr(call, "error"); !error.empty())
                std::cout << "--- " << label << " error ---\n" << printable(error) << "\n";
        }
    }
    return 0;
}

// A node's kernel as one file `kforge bench --kernel` takes: its source, with its launch plan
// embedded ahead of it unless the source carries one already. Never overwrites a file.
int saveKernel(const core::SearchNode& node, const std::filesystem::path& file)
{
    std::error_code ec;
    if (std::filesystem::exists(file, ec))
        return fail("--save-kernel " + file.string() +
                    ": the file exists; not overwritten (remove it or name another)");
    std::string text = node.candidate.source;
    if (!core::embeddedPlanText(text)) {
        const std::string plan = node.candidate.launchPlan.dump(2);
        if (plan.find("*/") != std::string::npos)
            return fail("--save-kernel: node " + node.id + "'s launch plan holds \"*/\" and cannot be embedded");
        text = "/*kforge-plan\n" + plan + "\n*/\n" + text;
    }
    if (auto written = core::writeFileAtomically(file, text); !written)
        return fail(written.error().toString());
    std::cout << "wrote " << file.string() << ": node " << node.id << "'s source with its launch plan (" << text.size()
              << " bytes); kforge bench PROJECT_DIR --card ID --kernel " << file.string() << " runs it\n";
    return 0;
}

} // namespace

int runTreeCommand(const std::vector<std::string>& args)
{
    core::ArgParser parser;
    parser.option("--card").option("--node").option("--save-kernel").flag("--json");
    if (auto error = parser.parse(args))
        return fail("tree: " + *error + " (see 'kforge tree --help')", 2);
    if (parser.positionals().size() != 1 || !parser.has("--card"))
        return fail("tree: expected PROJECT_DIR --card ID (see 'kforge tree --help')", 2);
    if (parser.has("--node") && parser.has("--json"))
        return fail("tree: --node prints one node as text, --json the whole tree: choose one", 2);
    if (parser.has("--save-kernel") && !parser.has("--node"))
        return fail("tree: --save-kernel FILE saves one node's kernel: name it with --node ID", 2);
    const std::string projectDir = parser.positionals().front();
    auto card = openProjectCard(projectDir, *parser.value("--card"));
    if (!card)
        return fail(card.error().toString());
    const core::TreeStore store(core::TreeStore::defaultPath(projectDir, card->id));
    if (!store.exists())
        return fail(store.file().string() + ": no search tree for card " + card->id +
                    (card->vendorBacked ? ": vendor-backed (cuBLAS/cuDNN), which a search leaves out unless it names "
                                          "the card (kforge optimize --cards)"
                                        : " yet (kforge optimize PROJECT_DIR --cards " + card->id.substr(0, 8) + ")"));
    auto tree = store.load();
    if (!tree)
        return fail(tree.error().toString());
    if (auto id = parser.value("--node")) {
        const core::SearchNode* node = tree->find(*id);
        if (!node)
            return fail("--node " + printable(*id) + ": no such node in " + store.file().string() + " (" +
                        std::to_string(tree->size()) + " nodes)");
        if (auto file = parser.value("--save-kernel"))
            return saveKernel(*node, *file);
        return printNode(*node, store.blobs());
    }
    const std::map<std::string, const core::SearchNode*> bestByGpu = core::bestNodeByGpu(tree.value());
    if (parser.has("--json")) {
        nlohmann::json out = core::toJson(tree.value());
        nlohmann::json best = nlohmann::json::object();
        for (const auto& [gpu, node] : bestByGpu)
            best[gpu] = node->id;
        out["best_by_gpu"] = best;
        std::cout << core::dumpSearchTreeJson(out, 2) << "\n";
        return 0;
    }
    std::cout << "card " << card->id << " " << card->displayName() << ": " << tree->nodes().size() << " nodes\n";
    for (const core::SearchNode& attempt : tree->rootAttempts())
        std::cout << "earlier root attempt: " << core::nodeStatusName(attempt.status) << " | "
                  << printable(attempt.failureReason) << "\n";
    char line[512];
    std::snprintf(line, sizeof line, "%-6s %-6s %-18s %10s %8s  %s\n", "node", "parent", "status", "median us",
                  "speedup", "produced by / reason");
    std::cout << line;
    for (const core::SearchNode& node : tree->nodes()) {
        char median[32] = "-";
        char speedup[32] = "-";
        if (node.latency)
            std::snprintf(median, sizeof median, "%.2f", node.latency->medianUs);
        if (const std::optional<double> value = core::nodeSpeedup(node))
            std::snprintf(speedup, sizeof speedup, "%.3fx", *value);
        std::string what = producedBy(node);
        if (!node.failureReason.empty())
            what += " | " + node.failureReason;
        std::snprintf(line, sizeof line, "%-6s %-6s %-18s %10s %8s  ", node.id.c_str(),
                      node.parentId.value_or("-").c_str(), core::nodeStatusName(node.status), median, speedup);
        std::cout << line << printable(what) << "\n";
    }
    // Timings are compared within one GPU model only: the best node of each.
    for (const auto& [gpu, node] : bestByGpu) {
        char speedup[32] = "no speedup";
        if (const std::optional<double> value = core::nodeSpeedup(*node))
            std::snprintf(speedup, sizeof speedup, "%.3fx", *value);
        std::cout << "best on " << (gpu.empty() ? std::string("an unnamed device") : printable(gpu)) << ": " << node->id
                  << " " << speedup << "\n";
    }
    return 0;
}

} // namespace kforge::cli
