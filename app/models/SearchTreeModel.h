#pragma once
// The search tree of one operator card as a hierarchical item model: the root node is the one
// top-level row, every node's children sit under it in creation order (docs/search.md). Columns:
// node id, status, median latency, speedup, transformation (or the failure reason of a failed node).
//
// setTree() replaces the content (model reset). updateTree() takes a newer snapshot of the same
// tree, as a run streams it in, and applies the difference: rowsInserted for new nodes (grouped by
// parent) and dataChanged for nodes whose shown values changed, so views keep their selection and
// expansion. A snapshot for another card, or one that is not a growth of the current tree (nodes
// removed or re-parented), resets the model instead.
//
// The static helpers (status text, labels, details) are shared with the tree graph view so both
// panes describe a node in the same words.
//
// Thread: GUI thread only (asserted). The tree is held as an immutable shared value.

#include "model/SearchTree.h"

#include <QAbstractItemModel>
#include <QString>

#include <memory>
#include <vector>

namespace kforge::app {

class SearchTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { IdColumn, StatusColumn, MedianColumn, SpeedupColumn, DetailColumn, ColumnCount };
    enum Role {
        /// The node id ("n12", QString), in every column.
        NodeIdRole = Qt::UserRole + 1,
        /// The node's status as int (the value of core::NodeStatus), in every column.
        StatusRole,
        /// The node's status as its file name ("passed", "failed-compile", ...), in every column.
        StatusNameRole,
        /// True for the best node (see bestNodeId), in every column.
        IsBestRole,
        /// Numbers for the numeric columns (median us, speedup: double; -1 when not measured; the id
        /// column: the creation index), the display text otherwise.
        SortRole,
    };

    explicit SearchTreeModel(QObject* parent = nullptr);

    /// Replaces the content with `tree` (model reset).
    void setTree(core::SearchTree tree);
    void setTree(std::shared_ptr<const core::SearchTree> tree);
    /// Applies a newer snapshot of the current tree incrementally (see the file comment); resets
    /// when `tree` belongs to another card or is not a growth of the current tree.
    void updateTree(core::SearchTree tree);
    void updateTree(std::shared_ptr<const core::SearchTree> tree);
    /// Empties the model (model reset).
    void clear();

    /// The tree shown (an empty tree when none).
    const core::SearchTree& tree() const;
    std::shared_ptr<const core::SearchTree> treePtr() const { return m_tree; }
    /// The card of the tree shown (empty when none).
    QString cardId() const;

    /// The node behind an index of this model, or null.
    const core::SearchNode* nodeAt(const QModelIndex& index) const;
    /// The index (in `column`) of the node with this id, or an invalid index.
    QModelIndex indexOfNode(const QString& id, int column = 0) const;
    /// The index (in `column`) of the tree's node number `node` (its place in tree().nodes()), or
    /// an invalid index.
    QModelIndex indexOfNodeAt(int node, int column = 0) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    bool hasChildren(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// Short words for a status: "pending", "passed", "compiled only", "compile failed", ...
    static QString statusText(core::NodeStatus status);
    /// What produced a node: the built-in transformation's name, "llm: provider/model",
    /// "manual edit" or "root".
    static QString transformationText(const core::SearchNode& node);
    /// A latency in microseconds, 3 significant digits ("12.3 µs", "1.23 ms").
    static QString latencyText(double us);
    /// "1.85x".
    static QString speedupText(double speedup);
    /// The one-line label of a node: "12.3 µs · 1.85x" when measured, else the status text.
    static QString nodeLabel(const core::SearchNode& node);
    /// Multi-line details of a node (tooltips): id, status, reason, latency quartiles, eager
    /// latency, speedup, transformation, provenance kind, visits.
    static QString nodeDetails(const core::SearchNode& node, bool best);

private:
    void resetTo(std::shared_ptr<const core::SearchTree> tree);
    /// Fills m_parent/m_row/m_children/m_topLevel from m_tree.
    void rebuildStructure();
    /// Applies `tree` as a growth of m_tree; false (nothing changed) when it is not one.
    bool applyGrowth(const std::shared_ptr<const core::SearchTree>& tree);
    int nodeIndexOf(const std::string& id) const;
    QModelIndex indexForNode(int node, int column) const;
    const std::vector<int>& childrenOf(int node) const;
    QVariant displayData(const core::SearchNode& node, int column) const;
    QVariant sortData(int node, int column) const;

    std::shared_ptr<const core::SearchTree> m_tree;
    // Structure as the views know it (may lag m_tree inside updateTree, between begin/end signals).
    std::vector<int> m_parent;                // node -> parent node, -1 for a top-level node
    std::vector<int> m_row;                   // node -> row under its parent
    std::vector<std::vector<int>> m_children; // node -> child nodes in row order
    std::vector<int> m_topLevel;              // the parentless nodes (the root) in row order
    int m_best = -1;
};

} // namespace kforge::app
