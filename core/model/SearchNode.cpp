#include "model/SearchNode.h"

#include <array>
#include <utility>

namespace kforge::core {
namespace {

constexpr std::array<std::pair<NodeStatus, const char*>, 13> kStatusNames{{
    {NodeStatus::Pending, "pending"},
    {NodeStatus::Compiling, "compiling"},
    {NodeStatus::Evaluating, "evaluating"},
    {NodeStatus::Passed, "passed"},
    {NodeStatus::CompiledOnly, "compiled-only"},
    {NodeStatus::FailedProposal, "failed-proposal"},
    {NodeStatus::FailedCompile, "failed-compile"},
    {NodeStatus::FailedValidation, "failed-validation"},
    {NodeStatus::Crashed, "crashed"},
    {NodeStatus::TimedOut, "timed-out"},
    {NodeStatus::Abandoned, "abandoned"},
    {NodeStatus::NoSample, "no-sample"},
    {NodeStatus::ValidatedOnly, "validated-only"},
}};

constexpr std::array<std::pair<ProvenanceKind, const char*>, 4> kProvenanceNames{{
    {ProvenanceKind::Root, "root"},
    {ProvenanceKind::BuiltinTransformation, "builtin-transformation"},
    {ProvenanceKind::Llm, "llm"},
    {ProvenanceKind::ManualEdit, "manual-edit"},
}};

} // namespace

const char* nodeStatusName(NodeStatus status)
{
    for (const auto& [value, name] : kStatusNames)
        if (value == status)
            return name;
    return "unknown";
}

bool nodeStatusFromName(const std::string& name, NodeStatus& out)
{
    for (const auto& [value, text] : kStatusNames) {
        if (name == text) {
            out = value;
            return true;
        }
    }
    return false;
}

bool isInFlight(NodeStatus status)
{
    return status == NodeStatus::Pending || status == NodeStatus::Compiling || status == NodeStatus::Evaluating;
}

bool isRevisable(NodeStatus status)
{
    return status == NodeStatus::Passed || status == NodeStatus::CompiledOnly || status == NodeStatus::ValidatedOnly;
}

bool isFailure(NodeStatus status)
{
    return !isInFlight(status) && !isRevisable(status);
}

const char* provenanceKindName(ProvenanceKind kind)
{
    for (const auto& [value, name] : kProvenanceNames)
        if (value == kind)
            return name;
    return "unknown";
}

bool provenanceKindFromName(const std::string& name, ProvenanceKind& out)
{
    for (const auto& [value, text] : kProvenanceNames) {
        if (name == text) {
            out = value;
            return true;
        }
    }
    return false;
}

} // namespace kforge::core
