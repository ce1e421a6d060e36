#include "builtin_proposer/BuiltinProposer.h"

#include "builtin_proposer/BatchNormFamily.h"
#include "builtin_proposer/BinaryFamily.h"
#include "builtin_proposer/CatFamily.h"
#include "builtin_proposer/ChannelsLastPoolFamily.h"
#include "builtin_proposer/EmbeddingFamily.h"
#include "builtin_proposer/GroupNormFamily.h"
#include "builtin_proposer/MaxPool2dFamily.h"
#include "builtin_proposer/NormFamily.h"
#include "builtin_proposer/PointwiseRegionFamily.h"
#include "builtin_proposer/PoolFamily.h"
#include "builtin_proposer/ReduceFamily.h"
#include "builtin_proposer/RowRegionFamily.h"
#include "builtin_proposer/ScanFamily.h"
#include "builtin_proposer/SoftmaxFamily.h"
#include "builtin_proposer/UnaryFamily.h"
#include "pointwise/PointwiseExpression.h"
#include "pointwise/PointwiseOpTable.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kforge::core {

namespace {

// The reason for an op no family takes.
constexpr std::string_view kNotCovered = "op not covered by the built-in proposer yet";

// Ops that always return a view of their input, whatever the layout: their time in a profile is
// host work (a new tensor header), and no kernel of any proposer could replace them. (reshape,
// contiguous, flatten and to may copy, and are not here.)
bool isViewOp(const std::string& op)
{
    static const char* const kViews[] = {
        "aten::view",       "aten::view_as", "aten::_unsafe_view", "aten::expand",           "aten::expand_as",
        "aten::slice",      "aten::select",  "aten::narrow",       "aten::unsqueeze",        "aten::squeeze",
        "aten::transpose",  "aten::t",       "aten::permute",      "aten::movedim",          "aten::swapaxes",
        "aten::unflatten",  "aten::unbind",  "aten::split",        "aten::split_with_sizes", "aten::chunk",
        "aten::as_strided", "aten::alias",   "aten::detach",       "aten::diagonal"};
    return std::find(std::begin(kViews), std::end(kViews), op) != std::end(kViews);
}

// Whether a tensor argument or output of `card` with dims is an integer or bool tensor (a 0-dim one,
// such as a wrapped Python number, stays the binary family's to take or refuse).
bool hasIntegerOrBoolTensor(const OperatorCard& card)
{
    const auto integral = [](const TensorSpec& t) {
        return (t.dtype == "bool" || isBuiltinIntegerDtype(t.dtype)) && !t.sizes.empty();
    };
    for (const ArgSpec& arg : card.args)
        if (std::any_of(arg.tensors.begin(), arg.tensors.end(), integral))
            return true;
    return std::any_of(card.outputs.begin(), card.outputs.end(), integral);
}

// Cards of an op a tuned family covers in a form it refuses and the pointwise table holds: div with a
// rounding mode (BinaryFamily: None only), pow with an exponent other than 2 (UnaryFamily: 2 only),
// any table op on an integer or bool tensor (an int64 add, a cast into int32: the binary and unary
// families compute float32, float16 and bfloat16 only; the pointwise generator carries integers
// exactly).
bool pointwiseTakesOver(const OperatorCard& card)
{
    if (hasIntegerOrBoolTensor(card) && findPointwiseOp(card.op, card.overload, card.args))
        return true;
    const std::string op = card.qualifiedName();
    if (op == "aten::div.Tensor_mode") {
        const ArgSpec* mode = card.findArg("rounding_mode");
        return mode && mode->kind == ArgKind::Value;
    }
    if (op == "aten::pow.Tensor_Scalar") {
        const ArgSpec* exponent = card.findArg("exponent");
        return exponent && exponent->kind == ArgKind::Value && exponent->value != 2;
    }
    return false;
}

std::uint64_t fnv1a(const std::string& text)
{
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

template <class F>
Result<std::unique_ptr<KernelFamily>> wrap(Result<std::unique_ptr<F>> family)
{
    if (!family)
        return family.error();
    return std::unique_ptr<KernelFamily>(std::move(family.value()));
}

std::uint64_t splitmix(std::uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

} // namespace

std::optional<nlohmann::json> BuiltinProposer::familyParams(const SearchNode& node) const
{
    const nlohmann::json& d = node.provenance.details;
    if (!d.is_object() || d.value("family", std::string()) != m_family->name() || !d.contains("params"))
        return std::nullopt;
    return m_family->withDefaults(d["params"]);
}

std::unordered_set<std::string> BuiltinProposer::paramSets(const SearchTree& tree) const
{
    std::unordered_set<std::string> present;
    for (const SearchNode& node : tree.nodes())
        if (const auto params = familyParams(node))
            present.insert(params->dump());
    return present;
}

std::vector<Transformation> BuiltinProposer::untriedNeighbours(const nlohmann::json& from,
                                                               const std::unordered_set<std::string>& present) const
{
    std::vector<Transformation> untried;
    for (Transformation& t : m_family->transformations(from))
        if (!present.contains(t.params.dump()))
            untried.push_back(std::move(t));
    return untried;
}

Result<std::unique_ptr<KernelFamily>> BuiltinProposer::makeFamily(const OperatorCard& card)
{
    // A region card: its chain as one kernel, a row kernel where a member reduces rows (softmax,
    // norms, sum / mean / amax over the last dim), else one pass over the elements.
    if (card.isRegion()) {
        const auto& members = card.region->members;
        if (std::any_of(members.begin(), members.end(), [](const ChainMember& m) { return isRowReductionOp(m.op); }))
            return wrap(RowRegionFamily::create(card));
        return wrap(PointwiseRegionFamily::create(card));
    }
    // A row reduction (softmax, a norm, sum / mean / amax / amin over trailing dims) of few long rows,
    // which the tuned families below run one block or warp per row and so leave most SMs idle, or
    // one they refuse (a strided input, amax): the row-region generator, which splits rows.
    // (group_norm's own family splits its groups already; the generator takes only what it refuses.)
    std::unique_ptr<RowRegionFamily> rows;
    std::optional<Error> rowsRefusal;
    if (isRowReductionOp(card.op)) {
        if (auto f = RowRegionFamily::createForOp(card)) {
            if (f.value()->splitsAtRoot() && card.op != "aten::group_norm")
                return std::unique_ptr<KernelFamily>(std::move(f.value()));
            rows = std::move(f.value());
        } else {
            rowsRefusal = f.error();
        }
    }
    auto tuned = makeTunedFamily(card);
    if (!tuned && rows)
        return std::unique_ptr<KernelFamily>(std::move(rows));
    // An op only the generator covers (var, logsumexp, argmax, ...): its reason, not "not covered".
    if (!tuned && rowsRefusal && tuned.error().message == kNotCovered)
        return *rowsRefusal;
    return tuned;
}

Result<std::unique_ptr<KernelFamily>> BuiltinProposer::makeTunedFamily(const OperatorCard& card)
{
    const std::string op = card.qualifiedName();
    if (SoftmaxFamily::coversOp(op)) {
        auto family = SoftmaxFamily::create(card);
        if (!family)
            return family.error();
        return std::unique_ptr<KernelFamily>(std::move(family.value()));
    }
    if (NormFamily::coversOp(op))
        return wrap(NormFamily::create(card));
    if (GroupNormFamily::coversOp(op))
        return wrap(GroupNormFamily::create(card));
    if (ChannelsLastPoolFamily::claims(card))
        return wrap(ChannelsLastPoolFamily::create(card));
    if (ReduceFamily::coversOp(op))
        return wrap(ReduceFamily::create(card));
    if (PoolFamily::coversOp(op))
        return wrap(PoolFamily::create(card));
    if (ScanFamily::coversOp(op))
        return wrap(ScanFamily::create(card));
    if (MaxPool2dFamily::coversOp(op))
        return wrap(MaxPool2dFamily::create(card));
    if (BatchNormFamily::coversOp(op))
        return wrap(BatchNormFamily::create(card));
    if (pointwiseTakesOver(card))
        return wrap(PointwiseRegionFamily::createForOp(card));
    if (BinaryFamily::coversOp(op))
        return wrap(BinaryFamily::create(card));
    if (EmbeddingFamily::coversOp(op))
        return wrap(EmbeddingFamily::create(card));
    if (CatFamily::coversOp(op))
        return wrap(CatFamily::create(card));
    if (UnaryFamily::coversOp(op))
        return wrap(UnaryFamily::create(card));
    // Any other op of the pointwise table: its one-member chain's kernel.
    if (findPointwiseOp(card.op, card.overload, card.args))
        return wrap(PointwiseRegionFamily::createForOp(card));
    if (isViewOp(card.op))
        return makeError(ErrorCode::Unsupported, "returns a view of its input (no kernel to run)",
                         "built-in proposer, " + op);
    if (card.op == "aten::dropout" || card.op == "aten::feature_dropout") {
        const ArgSpec* train = card.findArg("train");
        if (train && train->kind == ArgKind::Value && train->value == false)
            return makeError(ErrorCode::Unsupported, "not training: returns its input (no kernel to run)",
                             "built-in proposer, " + op);
    }
    return makeError(ErrorCode::Unsupported, std::string(kNotCovered), "built-in proposer, " + op);
}

BuiltinProposer::BuiltinProposer(OperatorCard card) : m_card(std::move(card))
{
    auto family = makeFamily(m_card);
    if (family)
        m_family = std::move(family.value());
    else
        m_unsupported = family.error();
}

Result<void> BuiltinProposer::supports(const OperatorCard& card)
{
    auto family = makeFamily(card);
    if (!family)
        return family.error();
    return {};
}

Result<Proposal> BuiltinProposer::build(const nlohmann::json& params, Provenance provenance) const
{
    auto candidate = m_family->generate(params);
    if (!candidate)
        return candidate.error();
    provenance.details["family"] = m_family->name();
    provenance.details["params"] = params;
    Proposal proposal;
    proposal.candidate = std::move(candidate.value());
    proposal.provenance = std::move(provenance);
    return proposal;
}

Result<Proposal> BuiltinProposer::proposeRoot(const SearchTree&, const std::atomic<bool>&)
{
    if (!m_family)
        return m_unsupported;
    Provenance provenance;
    provenance.kind = ProvenanceKind::Root;
    provenance.transformation = "root";
    return build(m_family->rootParams(), std::move(provenance));
}

Result<Proposal> BuiltinProposer::propose(const SearchTree& tree, const SearchNode& parent, const std::atomic<bool>&)
{
    if (!m_family)
        return m_unsupported;
    const std::optional<nlohmann::json> parentParams = familyParams(parent);
    if (!parentParams) {
        Proposal failed;
        failed.provenance.kind = ProvenanceKind::BuiltinTransformation;
        failed.failureReason = "parent " + parent.id + " has no " + m_family->name() +
            " template parameters (not written by the built-in proposer)";
        return failed;
    }
    const nlohmann::json& from = *parentParams;
    std::vector<Transformation> untried = untriedNeighbours(from, paramSets(tree));

    Provenance provenance;
    provenance.kind = ProvenanceKind::BuiltinTransformation;
    if (untried.empty()) {
        Proposal failed;
        failed.provenance = provenance;
        failed.provenance.details["family"] = m_family->name();
        failed.provenance.details["from"] = from;
        failed.failureReason = "no untried transformation";
        return failed;
    }
    const std::uint64_t h =
        splitmix(tree.seed() ^ splitmix(fnv1a(parent.id) ^ static_cast<std::uint64_t>(tree.nextIteration())));
    Transformation& chosen = untried[h % untried.size()];
    provenance.transformation = chosen.name;
    provenance.details["from"] = from;
    return build(chosen.params, std::move(provenance));
}

std::unordered_set<std::string> BuiltinProposer::exhaustedNodes(const SearchTree& tree)
{
    std::unordered_set<std::string> exhausted;
    if (!m_family)
        return exhausted;
    const std::unordered_set<std::string> present = paramSets(tree);
    for (const SearchNode& node : tree.nodes()) {
        const std::optional<nlohmann::json> params = familyParams(node);
        if (!params || untriedNeighbours(*params, present).empty())
            exhausted.insert(node.id);
    }
    return exhausted;
}

std::vector<Candidate> BuiltinProposer::likelyNext(const SearchTree& tree, const Proposal& current, std::size_t limit)
{
    std::vector<Candidate> out;
    if (!m_family || limit == 0)
        return out;
    // MCTS mostly revises the best nodes, and the current candidate may become the best: their
    // untried neighbours, best node first.
    std::vector<const SearchNode*> passed;
    for (const SearchNode& node : tree.nodes())
        if (node.status == NodeStatus::Passed && node.latency && familyParams(node))
            passed.push_back(&node);
    std::sort(passed.begin(), passed.end(),
              [](const SearchNode* a, const SearchNode* b) { return a->latency->medianUs < b->latency->medianUs; });
    std::vector<nlohmann::json> sources;
    if (!passed.empty())
        sources.push_back(*familyParams(*passed[0]));
    if (current.provenance.details.contains("params"))
        sources.push_back(m_family->withDefaults(current.provenance.details["params"]));
    if (passed.size() > 1)
        sources.push_back(*familyParams(*passed[1]));
    const std::unordered_set<std::string> present = paramSets(tree);
    std::vector<nlohmann::json> chosen;
    for (const nlohmann::json& from : sources) {
        for (const Transformation& t : m_family->transformations(from)) {
            if (out.size() >= limit)
                return out;
            if (present.contains(t.params.dump()) ||
                t.params == current.provenance.details.value("params", nlohmann::json()) ||
                std::find(chosen.begin(), chosen.end(), t.params) != chosen.end())
                continue;
            auto candidate = m_family->generate(t.params);
            if (!candidate)
                continue;
            chosen.push_back(t.params);
            out.push_back(std::move(candidate.value()));
        }
    }
    return out;
}

} // namespace kforge::core
