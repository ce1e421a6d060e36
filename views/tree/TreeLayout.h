#pragma once
// Tidy top-down layout of a forest (Reingold-Tilford, in the O(n) form of Buchheim, Juenger and
// Leipert, "Improving Walker's algorithm to run in linear time", 2002): a parent is centred over
// its children, subtrees are packed as close as their contours allow, adjacent nodes of one level
// are at least one unit apart, and a subtree's shape does not depend on where it sits. Several
// roots are laid out side by side as children of an invisible super-root.
//
// Input in creation order: parents[k] is the parent of node k (an index < k) or -1 for a root;
// children are ordered by index. Both walks are loops over the indices (no recursion), so any
// depth is fine. Deterministic: the same input gives the same output.
//
// Collapsed nodes: the descendants of a collapsed node are hidden and take no room; the layout is
// the one of the forest without them, and a hidden node reports the place of the collapsed node
// that hides it.
//
// Thread: reentrant (a pure function).

#include <cstddef>
#include <vector>

namespace kforge::views {

struct TreeLayout {
    /// Horizontal position of each node in units of the minimum sibling distance; the leftmost
    /// node is at 0.
    std::vector<double> x;
    /// Depth of each node (a root is 0).
    std::vector<int> depth;
    /// False for a node inside a collapsed subtree (its x and depth are those of the collapsed
    /// node that hides it).
    std::vector<bool> shown;
    /// For a shown collapsed node, how many descendants it hides; 0 for every other node.
    std::vector<int> hiddenBelow;

    /// Lays out the forest given by `parents` (see the file comment). A parent index that is not
    /// smaller than its child's makes that child a root.
    static TreeLayout compute(const std::vector<int>& parents);
    /// As above, with the subtrees below the nodes k with collapsed[k] hidden (a `collapsed`
    /// shorter than `parents` collapses none of the nodes past its end).
    static TreeLayout compute(const std::vector<int>& parents, const std::vector<bool>& collapsed);
};

} // namespace kforge::views
