#pragma once
// The search tree of one operator card: every node is a candidate kernel, every child a revision
// of its parent (docs/search.md). Nodes are never removed: failed candidates stay with their reason.
//
// The tree also carries the run state needed to resume a search exactly: the seed, the state of
// the tie-breaking RNG and the number of values drawn from it so far (see SearchRng).
//
// A root that failed (its worker could not start, the LLM's reply was unusable, ...) can be
// retried: retryRoot() moves it to rootAttempts(), where its reason stays on record, and leaves the
// tree empty for a new root (docs/search.md, "A failed root").
//
// Stored text is bounded (TextBounds.h): a failure reason is one line (oneLineReason: never a
// backtrace) of at most kMaxReasonBytes, and every string in a node's evaluation report at most
// kMaxDetailStringBytes, with a note. Which node is best: model/NodeRanking.h.
//
// Thread: not synchronized. One thread mutates a tree (the search run); others read copies.
// Pointers returned by the query functions stay valid until the next add*.

#include "model/Evaluation.h"
#include "model/SearchNode.h"
#include "util/Result.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace kforge::core {

class SearchTree {
public:
    SearchTree() = default;
    SearchTree(std::string cardId, std::uint64_t seed);

    const std::string& cardId() const { return m_cardId; }
    std::uint64_t seed() const { return m_seed; }
    /// Number of values drawn from the seeded tie-breaking RNG so far.
    std::uint64_t rngDraws() const { return m_rngDraws; }
    void setRngDraws(std::uint64_t draws) { m_rngDraws = draws; }
    /// The RNG's saved state (SearchRng::state()); empty when not recorded (a tree written before
    /// the state was saved: the RNG is then restored by replaying rngDraws() draws).
    const std::string& rngState() const { return m_rngState; }
    void setRngState(std::string state) { m_rngState = std::move(state); }

    /// Earlier roots of this tree that failed and were retried, oldest first (each a failed node
    /// with id "n0", no parent and no children).
    const std::vector<SearchNode>& rootAttempts() const { return m_rootAttempts; }
    /// Whether the tree is only a failed root (nothing else can grow from it).
    bool rootFailed() const;
    /// Moves the failed root to rootAttempts() and empties the tree, so that the next addRoot
    /// starts it again. InvalidArgument unless rootFailed().
    Result<void> retryRoot();

    bool empty() const { return m_nodes.empty(); }
    std::size_t size() const { return m_nodes.size(); }
    /// All nodes in creation order; nodes()[k].id == "n<k>".
    const std::vector<SearchNode>& nodes() const { return m_nodes; }
    const SearchNode* find(const std::string& id) const;
    const SearchNode* root() const { return m_nodes.empty() ? nullptr : &m_nodes.front(); }
    /// The iteration number the next node gets (= number of nodes: one node per iteration).
    int nextIteration() const { return static_cast<int>(m_nodes.size()); }

    /// Adds the root (status Pending). AlreadyExists if the tree has one. Returns its id ("n0").
    Result<std::string> addRoot(Candidate candidate, Provenance provenance, std::int64_t createdUnixMs);
    /// Adds a Pending child of `parentId`. NotFound for an unknown parent; InvalidArgument if the
    /// parent is not revisable (in flight or failed). Returns the new id.
    Result<std::string> addChild(const std::string& parentId, Candidate candidate, Provenance provenance,
                                 std::int64_t createdUnixMs);
    /// Stores an evaluation on a node: status, reason (one line), report, latency, eager, speedup.
    /// InvalidArgument if the evaluation breaks its contract (see Evaluation); the node is unchanged.
    Result<void> recordEvaluation(const std::string& id, const Evaluation& evaluation);
    /// Adds one visit with `reward` to a node (MCTS backpropagation; see Mcts::backpropagate).
    Result<void> addVisit(const std::string& id, double reward);

    /// The path root -> `id` (inclusive); empty for an unknown id.
    std::vector<const SearchNode*> lineage(const std::string& id) const;
    /// The failed children of `id`, in creation order (what a prompt for a new revision of `id`
    /// should learn from).
    std::vector<const SearchNode*> failedChildren(const std::string& id) const;
    /// The failed siblings of `id` (same parent, excluding `id`), in creation order.
    std::vector<const SearchNode*> failedSiblings(const std::string& id) const;

    /// Used by the JSON decoder after it validated the structure: replaces all nodes.
    void setNodesUnchecked(std::vector<SearchNode> nodes);
    /// Used by the JSON decoder: replaces the earlier root attempts.
    void setRootAttemptsUnchecked(std::vector<SearchNode> attempts) { m_rootAttempts = std::move(attempts); }

    bool operator==(const SearchTree& other) const;

private:
    SearchNode* findMutable(const std::string& id);
    std::string appendNode(SearchNode node);

    std::string m_cardId;
    std::uint64_t m_seed = 0;
    std::uint64_t m_rngDraws = 0;
    std::string m_rngState;
    std::vector<SearchNode> m_rootAttempts;
    std::vector<SearchNode> m_nodes;
    std::unordered_map<std::string, std::size_t> m_index;
};

} // namespace kforge::core
