#pragma once
// The template family behind the built-in proposer (docs/builtin-proposer.md): for one card, a family
// turns a set of template parameters (JSON, kept in each node's provenance) into a candidate, and
// lists the named transformations that lead from one parameter set to its neighbours. Internal to
// kforge_builtin_proposer; BuiltinProposer is the public face.
//
// Thread: immutable after construction; every method may be called from any thread.

#include "capture/OperatorCard.h"
#include "search/SearchNode.h"
#include "util/Result.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kforge::core {

/// One step from a parameter set: its name (recorded as provenance.transformation) and the result.
struct Transformation {
    std::string name;
    nlohmann::json params;
};

class KernelFamily {
public:
    virtual ~KernelFamily() = default;
    /// Stable family name stored in provenance ("softmax", "unary").
    virtual std::string name() const = 0;
    /// The parameters of the first candidate: a good default for the card's shapes and dtypes.
    virtual nlohmann::json rootParams() const = 0;
    /// Source + plan for `params`. InvalidArgument when `params` is not a valid set for this card
    /// (e.g. hand-edited provenance); the message names the offending parameter.
    virtual Result<Candidate> generate(const nlohmann::json& params) const = 0;
    /// Every valid neighbour of `params`, in a fixed order, none equal to `params`.
    virtual std::vector<Transformation> transformations(const nlohmann::json& params) const = 0;
};

/// Dtype helpers shared by the families. Only "float32", "float16" and "bfloat16" are claimed.
bool isBuiltinFloatDtype(const std::string& dtype);
int dtypeBytes(const std::string& dtype);     // 4 or 2
const char* dtypeCType(const std::string& dtype); // "float", "__half", "__nv_bfloat16"
/// The #include lines and the load/store conversions (float <-> dtype) for one input and one output
/// dtype: defines `in_t`, `out_t`, `kfLoad(in_t) -> float`, `kfStore(float) -> out_t`.
std::string dtypePrelude(const std::string& inDtype, const std::string& outDtype);

} // namespace kforge::core
