#pragma once
// Benchmarking an edit into a card's search tree (docs/gui.md, "Kernel editor"): the edited source
// and plan are compiled, validated and timed against the card (eval/CandidateBench: NVRTC here, the
// GPU worker for the rest; a machine without a GPU gets a compile-only result), then recorded as a
// child of the node they were edited from, with provenance "manual-edit", and the tree is saved.
// The desktop app's Benchmark Edit and Re-benchmark Node run it.
//
// Contracts:
// - Blocks for one bench; call it off any GUI thread.
// - Holds the project's writer lock (project/ProjectLock.h) from reading the tree to saving it:
//   while another writer holds it, it fails at once naming the holder.
// - Compiles through the user's on-disk compile cache, as `kforge bench` does.

#include "model/OperatorCard.h"
#include "model/SearchTree.h"
#include "util/Result.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace kforge::core {

struct EditBenchRequest {
    std::filesystem::path projectDir;
    OperatorCard card;
    std::string parentNodeId;
    std::string source;
    std::optional<nlohmann::json> plan; // nullopt: the plan embedded in the source (/*kforge-plan ... */)
    std::string workerExecutable;       // empty: workerPath(nullopt)
    /// The new node's provenance: "manual edit", or "re-benchmark" (a node's own source measured
    /// again, as a child of it); `tool` names the front end in its details.
    std::string transformation = "manual edit";
    std::string tool = "kernelforge editor";
};

struct EditBenchResult {
    SearchTree tree;       // as saved, with the new node
    std::string nodeId;    // the new node
    nlohmann::json report; // the bench report (status, compile diagnostics, evaluation)
};

/// Errors (one line): the writer lock is held, the tree cannot be read or saved, the parent node is
/// not in it, the worker cannot start, the bench failed before producing a report.
Result<EditBenchResult> benchEditIntoTree(const EditBenchRequest& request);

} // namespace kforge::core
