#pragma once
// The source of new candidates for a search run (built-in transformations, an LLM, ...). SearchRun
// depends only on this interface.

#include "model/SearchNode.h"
#include "model/SearchTree.h"
#include "util/Result.h"

#include <atomic>
#include <cstddef>
#include <string>
#include <unordered_set>
#include <vector>

namespace kforge::core {

/// What a proposer produced. A non-empty `failureReason` means the proposer tried and failed for
/// this candidate (e.g. an LLM reply without code): the run records a FailedProposal node with the
/// reason and the provenance (prompt/response for audit) and does not evaluate it.
struct Proposal {
    Candidate candidate;
    Provenance provenance;
    std::string failureReason;
};

/// Thread: called only on the thread that runs SearchRun::run(), one call at a time. `stop` may be
/// set from any thread; a proposer that honours it mid-call returns ErrorCode::Cancelled.
/// Errors stop the run: Cancelled ends it as Requested (nothing recorded), any other error ends
/// run() with that error (the tree saved so far is intact). For reproducible runs a proposer must
/// be a deterministic function of the tree and the parent (derive any randomness from
/// tree.seed() and the parent's id / tree.nextIteration()).
class Proposer {
public:
    virtual ~Proposer() = default;
    /// The first candidate of an empty tree (provenance kind Root, typically).
    virtual Result<Proposal> proposeRoot(const SearchTree& tree, const std::atomic<bool>& stop) = 0;
    /// A revision of `parent` (a revisable node of `tree`).
    virtual Result<Proposal> propose(const SearchTree& tree, const SearchNode& parent,
                                     const std::atomic<bool>& stop) = 0;
    /// Up to `limit` candidates this proposer is likely to propose after `current` (about to be
    /// evaluated), for compiling ahead. Must be cheap and must not change what propose() returns;
    /// a proposer that cannot guess (an LLM) returns none.
    virtual std::vector<Candidate> likelyNext(const SearchTree& tree, const Proposal& current, std::size_t limit)
    {
        (void)tree;
        (void)current;
        (void)limit;
        return {};
    }
    /// Ids of the nodes of `tree` that propose() could only fail on because every revision this
    /// proposer can make of them is already in the tree (docs/search.md, "Exhausted nodes"):
    /// selection passes them by, and a run whose every revisable node is here stops with
    /// nothing-to-revise instead of spending its iterations on failed proposals. Must be cheap;
    /// a proposer that cannot tell (an LLM) returns none.
    virtual std::unordered_set<std::string> exhaustedNodes(const SearchTree& tree)
    {
        (void)tree;
        return {};
    }
};

} // namespace kforge::core
