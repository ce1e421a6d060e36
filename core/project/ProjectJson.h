#pragma once
// JSON encoding of project value types. Decoding validates every field and reports the first bad
// one by its JSON path, so a damaged project file gives one clear line.

#include "model/Project.h"
#include "util/Result.h"

#include <nlohmann/json.hpp>

namespace kforge::core {

nlohmann::json toJson(const TensorSpec& spec);
nlohmann::json toJson(const ArgSpec& spec);
nlohmann::json toJson(const RegionChain& chain);
nlohmann::json toJson(const OperatorCard& card);
nlohmann::json toJson(const CaptureInfo& info);
/// graph.json's document: {"format": "kforge-graph", "format_version": 1, "calls": [...], ...}.
nlohmann::json toJson(const CallGraph& graph);

Result<OperatorCard> cardFromJson(const nlohmann::json& json, const std::string& where);
Result<CaptureInfo> captureInfoFromJson(const nlohmann::json& json, const std::string& where);
/// Reads graph.json's document and checks it against the project's `cards` (CallGraph::problem).
Result<CallGraph> callGraphFromJson(const nlohmann::json& json, const std::vector<OperatorCard>& cards,
                                    const std::string& where);

} // namespace kforge::core
