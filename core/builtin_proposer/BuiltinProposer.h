#pragma once
// The embedded default proposer (no network, no API key; docs/builtin-proposer.md). For one card it
// writes kernels from templates specialized to the card's exact shapes, dtypes and strides, and
// revises a node by one named transformation of the node's template parameters.
//
// Provenance contract: every node it produces carries details {"family": NAME, "params": {...}};
// a revision regenerates the source from the parent's params with one parameter set changed (never
// by editing source text), names the step in provenance.transformation ("vector-width 4->8") and
// records the parent's params as details.from. A parameter set already present in the tree (any
// node, same family) is never proposed again.
//
// Determinism: the choice among untried transformations is a hash of tree.seed(), the parent id and
// tree.nextIteration(); no global RNG.
//
// Thread: as Proposer (one call at a time on the search thread); the object is immutable after
// construction. `stop` is not polled: a call takes well under a millisecond.

#include "builtin_proposer/KernelFamily.h"
#include "model/OperatorCard.h"
#include "search/Proposer.h"
#include "util/Result.h"

#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace kforge::core {

class BuiltinProposer final : public Proposer {
public:
    explicit BuiltinProposer(OperatorCard card);

    /// Ok when a template family covers `card`; otherwise Unsupported with one line saying why
    /// ("non-contiguous input ...", "op not covered by the built-in proposer yet").
    static Result<void> supports(const OperatorCard& card);

    /// Unsupported (the reason from supports()) when no family covers the card.
    Result<Proposal> proposeRoot(const SearchTree& tree, const std::atomic<bool>& stop) override;
    /// Unsupported as above. A Proposal with failureReason "no untried transformation" when every
    /// neighbour of the parent's params is already in the tree, or a reason when the parent was not
    /// written by this proposer (no template parameters to transform).
    Result<Proposal> propose(const SearchTree& tree, const SearchNode& parent, const std::atomic<bool>& stop) override;
    /// The untried neighbours of the best passed node, of `current` and of the second best, in that
    /// order (what MCTS is likely to revise next), generated but not recorded anywhere.
    std::vector<Candidate> likelyNext(const SearchTree& tree, const Proposal& current, std::size_t limit) override;
    /// The nodes propose() could only fail on: every neighbour of their params is in the tree, or
    /// they have no template parameters of this family (a manual edit). None when no family covers
    /// the card (propose() fails with the reason).
    std::unordered_set<std::string> exhaustedNodes(const SearchTree& tree) override;

    const OperatorCard& card() const { return m_card; }

private:
    static Result<std::unique_ptr<KernelFamily>> makeFamily(const OperatorCard& card);
    /// The family made for one op (softmax, norms, pools, ...), or why none covers it.
    static Result<std::unique_ptr<KernelFamily>> makeTunedFamily(const OperatorCard& card);
    Result<Proposal> build(const nlohmann::json& params, Provenance provenance) const;
    /// This family's template parameters of `node` (KernelFamily::withDefaults of what it stored),
    /// or nullopt (a node an LLM or a user wrote).
    std::optional<nlohmann::json> familyParams(const SearchNode& node) const;
    /// Every parameter set of this family in `tree`, as JSON text (parameters are ints and bools,
    /// so equal text is equal JSON).
    std::unordered_set<std::string> paramSets(const SearchTree& tree) const;
    /// The neighbours of `from` (in the family's fixed order) whose parameter set is not in `present`.
    std::vector<Transformation> untriedNeighbours(const nlohmann::json& from,
                                                  const std::unordered_set<std::string>& present) const;

    OperatorCard m_card;
    std::unique_ptr<KernelFamily> m_family; // null when unsupported
    Error m_unsupported;                    // why, when m_family is null
};

} // namespace kforge::core
