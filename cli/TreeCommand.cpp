#include "ArgParser.h"
#include "Commands.h"
#include "ProjectCard.h"

#include "search/SearchTreeJson.h"
#include "search/TreeStore.h"

#include <cstdio>
#include <iostream>
#include <map>

namespace kforge::cli {
namespace {

std::string producedBy(const core::SearchNode& node)
{
    switch (node.provenance.kind) {
    case core::ProvenanceKind::Root: return "root";
    case core::ProvenanceKind::BuiltinTransformation: return node.provenance.transformation;
    case core::ProvenanceKind::Llm: return node.provenance.provider + "/" + node.provenance.model;
    case core::ProvenanceKind::ManualEdit: return "manual edit";
    }
    return "?";
}

} // namespace

int runTreeCommand(const std::vector<std::string>& args)
{
    ArgParser parser;
    parser.option("--card").flag("--json");
    if (auto error = parser.parse(args))
        return fail("tree: " + *error + " (see 'kforge tree --help')", 2);
    if (parser.positionals().size() != 1 || !parser.has("--card"))
        return fail("tree: expected PROJECT_DIR --card ID (see 'kforge tree --help')", 2);
    const std::string projectDir = parser.positionals().front();
    auto card = openProjectCard(projectDir, *parser.value("--card"));
    if (!card)
        return fail(card.error().toString());
    const core::TreeStore store(core::TreeStore::defaultPath(projectDir, card->id));
    if (!store.exists())
        return fail(store.file().string() + ": no search tree for card " + card->id + " yet");
    auto tree = store.load();
    if (!tree)
        return fail(tree.error().toString());
    const std::map<std::string, const core::SearchNode*> bestByGpu = tree->bestPassedByGpu();
    if (parser.has("--json")) {
        nlohmann::json out = core::toJson(tree.value());
        nlohmann::json best = nlohmann::json::object();
        for (const auto& [gpu, node] : bestByGpu)
            best[gpu] = node->id;
        out["best_by_gpu"] = best;
        std::cout << out.dump(2) << "\n";
        return 0;
    }
    std::cout << "card " << card->id << " " << card->qualifiedName() << ": " << tree->nodes().size() << " nodes\n";
    char line[512];
    std::snprintf(line, sizeof line, "%-6s %-6s %-18s %10s %8s  %s\n", "node", "parent", "status", "median us",
                  "speedup", "produced by / reason");
    std::cout << line;
    for (const core::SearchNode& node : tree->nodes()) {
        char median[32] = "-";
        char speedup[32] = "-";
        if (node.latency)
            std::snprintf(median, sizeof median, "%.2f", node.latency->medianUs);
        if (node.speedup)
            std::snprintf(speedup, sizeof speedup, "%.3fx", *node.speedup);
        std::string what = producedBy(node);
        if (!node.failureReason.empty())
            what += " | " + node.failureReason;
        std::snprintf(line, sizeof line, "%-6s %-6s %-18s %10s %8s  %s\n", node.id.c_str(),
                      node.parentId.value_or("-").c_str(), core::nodeStatusName(node.status), median, speedup,
                      what.c_str());
        std::cout << line;
    }
    // Timings are compared within one GPU model only: the best node of each.
    for (const auto& [gpu, node] : bestByGpu) {
        char speedup[32] = "no speedup";
        if (node->speedup)
            std::snprintf(speedup, sizeof speedup, "%.3fx", *node->speedup);
        std::cout << "best on " << (gpu.empty() ? std::string("an unnamed device") : gpu) << ": " << node->id << " "
                  << speedup << "\n";
    }
    return 0;
}

} // namespace kforge::cli
