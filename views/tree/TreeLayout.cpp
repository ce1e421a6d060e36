#include "views/tree/TreeLayout.h"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace kforge::views {
namespace {

// Buchheim et al.'s firstWalk/apportion/executeShifts/secondWalk, with the recursion replaced by
// index order: every child has a larger index than its parent, so a descending loop visits a
// subtree before its root and an ascending loop visits a root before its subtree. Node 0 is the
// super-root; input node k is node k + 1.
class Walker {
public:
    explicit Walker(const std::vector<int>& parents)
    {
        const std::size_t n = parents.size() + 1;
        m_parent.assign(n, -1);
        m_number.assign(n, 0);
        m_prelim.assign(n, 0.0);
        m_mod.assign(n, 0.0);
        m_shift.assign(n, 0.0);
        m_change.assign(n, 0.0);
        m_midpoint.assign(n, 0.0);
        m_thread.assign(n, -1);
        m_ancestor.resize(n);
        m_childStart.assign(n + 1, 0);
        for (std::size_t v = 0; v < n; ++v)
            m_ancestor[v] = static_cast<int>(v);
        for (std::size_t k = 0; k < parents.size(); ++k) {
            const int p = parents[k];
            m_parent[k + 1] = (p >= 0 && static_cast<std::size_t>(p) < k) ? p + 1 : 0;
        }
        // Children in index order, stored contiguously (counting sort by parent).
        for (std::size_t v = 1; v < n; ++v)
            ++m_childStart[static_cast<std::size_t>(m_parent[v]) + 1];
        for (std::size_t v = 0; v < n; ++v)
            m_childStart[v + 1] += m_childStart[v];
        m_children.assign(n > 0 ? n - 1 : 0, 0);
        std::vector<int> fill(m_childStart.begin(), m_childStart.end() - 1);
        for (std::size_t v = 1; v < n; ++v) {
            const auto p = static_cast<std::size_t>(m_parent[v]);
            m_number[v] = fill[p] - m_childStart[p] + 1;
            m_children[static_cast<std::size_t>(fill[p]++)] = static_cast<int>(v);
        }
    }

    TreeLayout run()
    {
        const int n = static_cast<int>(m_parent.size());
        for (int v = n - 1; v >= 0; --v) {
            if (isLeaf(v))
                continue;
            int defaultAncestor = firstChild(v);
            for (int i = m_childStart[static_cast<std::size_t>(v)]; i < m_childStart[static_cast<std::size_t>(v) + 1];
                 ++i) {
                const int w = m_children[static_cast<std::size_t>(i)];
                placeAmongSiblings(w);
                defaultAncestor = apportion(w, defaultAncestor);
            }
            executeShifts(v);
            m_midpoint[static_cast<std::size_t>(v)] = (prelim(firstChild(v)) + prelim(lastChild(v))) / 2.0;
        }
        placeAmongSiblings(0);

        TreeLayout layout;
        const std::size_t count = m_parent.size() - 1;
        layout.x.resize(count);
        layout.depth.resize(count);
        std::vector<double> modSum(m_parent.size(), 0.0);
        std::vector<int> depth(m_parent.size(), -1);
        double minX = std::numeric_limits<double>::infinity();
        for (std::size_t v = 1; v < m_parent.size(); ++v) {
            const auto p = static_cast<std::size_t>(m_parent[v]);
            modSum[v] = modSum[p] + m_mod[p];
            depth[v] = depth[p] + 1;
            layout.x[v - 1] = m_prelim[v] + modSum[v];
            layout.depth[v - 1] = depth[v];
            minX = std::min(minX, layout.x[v - 1]);
        }
        for (double& x : layout.x)
            x -= minX;
        return layout;
    }

private:
    bool isLeaf(int v) const
    {
        return m_childStart[static_cast<std::size_t>(v)] == m_childStart[static_cast<std::size_t>(v) + 1];
    }
    int firstChild(int v) const
    {
        return m_children[static_cast<std::size_t>(m_childStart[static_cast<std::size_t>(v)])];
    }
    int lastChild(int v) const
    {
        return m_children[static_cast<std::size_t>(m_childStart[static_cast<std::size_t>(v) + 1] - 1)];
    }
    int leftSibling(int v) const
    {
        if (v == 0 || m_number[static_cast<std::size_t>(v)] <= 1)
            return -1;
        const auto p = static_cast<std::size_t>(m_parent[static_cast<std::size_t>(v)]);
        return m_children[static_cast<std::size_t>(m_childStart[p] + m_number[static_cast<std::size_t>(v)] - 2)];
    }
    int leftmostSibling(int v) const { return v == 0 ? v : firstChild(m_parent[static_cast<std::size_t>(v)]); }
    int nextLeft(int v) const { return isLeaf(v) ? m_thread[static_cast<std::size_t>(v)] : firstChild(v); }
    int nextRight(int v) const { return isLeaf(v) ? m_thread[static_cast<std::size_t>(v)] : lastChild(v); }
    double& prelim(int v) { return m_prelim[static_cast<std::size_t>(v)]; }
    double& mod(int v) { return m_mod[static_cast<std::size_t>(v)]; }

    // The tail of firstWalk(v): v's own preliminary x, once its subtree is done and its left
    // sibling is final.
    void placeAmongSiblings(int v)
    {
        const int left = leftSibling(v);
        if (isLeaf(v)) {
            prelim(v) = left >= 0 ? prelim(left) + kDistance : 0.0;
        } else if (left >= 0) {
            prelim(v) = prelim(left) + kDistance;
            mod(v) = prelim(v) - m_midpoint[static_cast<std::size_t>(v)];
        } else {
            prelim(v) = m_midpoint[static_cast<std::size_t>(v)];
        }
    }

    int apportion(int v, int defaultAncestor)
    {
        const int w = leftSibling(v);
        if (w < 0)
            return defaultAncestor;
        int vip = v;
        int vop = v;
        int vim = w;
        int vom = leftmostSibling(vip);
        double sip = mod(vip);
        double sop = mod(vop);
        double sim = mod(vim);
        double som = mod(vom);
        while (nextRight(vim) >= 0 && nextLeft(vip) >= 0) {
            vim = nextRight(vim);
            vip = nextLeft(vip);
            vom = nextLeft(vom);
            vop = nextRight(vop);
            m_ancestor[static_cast<std::size_t>(vop)] = v;
            const double shift = (prelim(vim) + sim) - (prelim(vip) + sip) + kDistance;
            if (shift > 0) {
                moveSubtree(ancestorOf(vim, v, defaultAncestor), v, shift);
                sip += shift;
                sop += shift;
            }
            sim += mod(vim);
            sip += mod(vip);
            som += mod(vom);
            sop += mod(vop);
        }
        if (nextRight(vim) >= 0 && nextRight(vop) < 0) {
            m_thread[static_cast<std::size_t>(vop)] = nextRight(vim);
            mod(vop) += sim - sop;
        }
        if (nextLeft(vip) >= 0 && nextLeft(vom) < 0) {
            m_thread[static_cast<std::size_t>(vom)] = nextLeft(vip);
            mod(vom) += sip - som;
            defaultAncestor = v;
        }
        return defaultAncestor;
    }

    void moveSubtree(int wm, int wp, double shift)
    {
        const double subtrees = m_number[static_cast<std::size_t>(wp)] - m_number[static_cast<std::size_t>(wm)];
        m_change[static_cast<std::size_t>(wp)] -= shift / subtrees;
        m_shift[static_cast<std::size_t>(wp)] += shift;
        m_change[static_cast<std::size_t>(wm)] += shift / subtrees;
        prelim(wp) += shift;
        mod(wp) += shift;
    }

    void executeShifts(int v)
    {
        double shift = 0;
        double change = 0;
        for (int i = m_childStart[static_cast<std::size_t>(v) + 1] - 1; i >= m_childStart[static_cast<std::size_t>(v)];
             --i) {
            const int w = m_children[static_cast<std::size_t>(i)];
            prelim(w) += shift;
            mod(w) += shift;
            change += m_change[static_cast<std::size_t>(w)];
            shift += m_shift[static_cast<std::size_t>(w)] + change;
        }
    }

    int ancestorOf(int vim, int v, int defaultAncestor) const
    {
        const int a = m_ancestor[static_cast<std::size_t>(vim)];
        return m_parent[static_cast<std::size_t>(a)] == m_parent[static_cast<std::size_t>(v)] ? a : defaultAncestor;
    }

    static constexpr double kDistance = 1.0;

    std::vector<int> m_parent;
    std::vector<int> m_number; // 1-based position among the siblings
    std::vector<double> m_prelim;
    std::vector<double> m_mod;
    std::vector<double> m_shift;
    std::vector<double> m_change;
    std::vector<double> m_midpoint;
    std::vector<int> m_thread;
    std::vector<int> m_ancestor;
    std::vector<int> m_childStart; // CSR: children of v are m_children[m_childStart[v] .. m_childStart[v+1])
    std::vector<int> m_children;
};

} // namespace

TreeLayout TreeLayout::compute(const std::vector<int>& parents)
{
    TreeLayout layout = Walker(parents).run();
    layout.shown.assign(parents.size(), true);
    layout.hiddenBelow.assign(parents.size(), 0);
    return layout;
}

TreeLayout TreeLayout::compute(const std::vector<int>& parents, const std::vector<bool>& collapsed)
{
    const std::size_t n = parents.size();
    // Every node's shown representative: itself when shown, else the collapsed node hiding it.
    // Parents come before their children, so one ascending pass settles it.
    struct Place {
        int representative = 0;
        int compact = -1; // a shown node's index among the shown nodes
    };
    std::vector<Place> places(n);
    std::vector<int> shownParents;
    shownParents.reserve(n);
    for (std::size_t k = 0; k < n; ++k) {
        const int p = parents[k];
        const bool hasParent = p >= 0 && static_cast<std::size_t>(p) < k;
        Place& place = places[k];
        place.representative = static_cast<int>(k);
        if (hasParent) {
            const Place& up = places[static_cast<std::size_t>(p)];
            if (up.representative != p)
                place.representative = up.representative; // inside a hidden subtree
            else if (static_cast<std::size_t>(p) < collapsed.size() && collapsed[static_cast<std::size_t>(p)])
                place.representative = p;
        }
        if (place.representative == static_cast<int>(k)) {
            place.compact = static_cast<int>(shownParents.size());
            shownParents.push_back(hasParent ? places[static_cast<std::size_t>(p)].compact : -1);
        }
    }
    const TreeLayout reduced = Walker(shownParents).run();
    TreeLayout layout;
    layout.x.resize(n);
    layout.depth.resize(n);
    layout.shown.assign(n, false);
    layout.hiddenBelow.assign(n, 0);
    for (std::size_t k = 0; k < n; ++k) {
        const auto r = static_cast<std::size_t>(places[k].representative);
        const auto c = static_cast<std::size_t>(places[r].compact);
        layout.x[k] = reduced.x[c];
        layout.depth[k] = reduced.depth[c];
        if (r == k)
            layout.shown[k] = true;
        else
            ++layout.hiddenBelow[r];
    }
    return layout;
}

} // namespace kforge::views
