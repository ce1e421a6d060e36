// SearchTreeModel: hierarchy and columns under QAbstractItemModelTester; incremental growth
// (rowsInserted, persistent indexes survive), status changes (dataChanged), resets for another card
// or a tree that did not just grow; the empty tree.

#include "models/SearchTreeModel.h"
#include "SearchTreeTestSupport.h"
#include "model/NodeRanking.h"

#include <QAbstractItemModelTester>
#include <QItemSelectionModel>
#include <QPersistentModelIndex>
#include <QSignalSpy>
#include <QTest>

using kforge::app::SearchTreeModel;
namespace core = kforge::core;
namespace test = kforge::test;
using core::NodeStatus;

namespace {

// n0 (passed 40 us)
// +- n1 vector-width-4 (passed 20 us)
// |  +- n3 unroll-2 (pending)
// +- n2 block-256 (failed-compile)
core::SearchTree smallTree()
{
    core::SearchTree tree("card-a", 1);
    test::addRoot(tree, test::passed(40.0));
    test::addChild(tree, "n0", "vector-width-4", test::passed(20.0, 37.0));
    test::addChild(tree, "n0", "block-256",
                   test::failed(NodeStatus::FailedCompile, "error: identifier \"x\" is undefined\nfull log"));
    test::addChild(tree, "n1", "unroll-2");
    return tree;
}

QString text(const QModelIndex& index, int role = Qt::DisplayRole)
{
    return index.data(role).toString();
}

/// The model shows exactly the tree: every node under its parent, in childIds order.
void compareWithTree(const SearchTreeModel& model, const core::SearchTree& tree)
{
    std::size_t seen = 0;
    std::vector<QModelIndex> pending;
    if (tree.empty()) {
        QCOMPARE(model.rowCount(), 0);
        return;
    }
    QCOMPARE(model.rowCount(), 1);
    pending.push_back(model.index(0, 0));
    while (!pending.empty()) {
        const QModelIndex index = pending.back();
        pending.pop_back();
        ++seen;
        const core::SearchNode* node = tree.find(text(index, SearchTreeModel::NodeIdRole).toStdString());
        QVERIFY(node);
        QCOMPARE(model.nodeAt(index)->id, node->id);
        QCOMPARE(index.data(SearchTreeModel::StatusRole).toInt(), static_cast<int>(node->status));
        QCOMPARE(model.rowCount(index), static_cast<int>(node->childIds.size()));
        for (int row = 0; row < model.rowCount(index); ++row) {
            const QModelIndex child = model.index(row, 0, index);
            QCOMPARE(text(child, SearchTreeModel::NodeIdRole).toStdString(),
                     node->childIds[static_cast<std::size_t>(row)]);
            QCOMPARE(child.parent(), index);
            pending.push_back(child);
        }
    }
    QCOMPARE(seen, tree.size());
}

} // namespace

class SearchTreeModelTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void emptyModelAndEmptyTree()
    {
        SearchTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.columnCount(), int(SearchTreeModel::ColumnCount));
        QVERIFY(model.cardId().isEmpty());
        QVERIFY(model.tree().empty());
        QCOMPARE(model.headerData(SearchTreeModel::MedianColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Median \u00b5s"));
        QCOMPARE(model.headerData(SearchTreeModel::DetailColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Transformation / reason"));

        model.setTree(core::SearchTree("card-a", 1));
        QCOMPARE(model.cardId(), QStringLiteral("card-a"));
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(!model.indexOfNode(QStringLiteral("n0")).isValid());
        QVERIFY(!model.nodeAt(QModelIndex()));

        // The first node of a run arrives as a growth of the empty tree: an insertion, not a reset.
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserts(&model, &QAbstractItemModel::rowsInserted);
        core::SearchTree grown("card-a", 1);
        test::addRoot(grown, test::passed(40.0));
        model.updateTree(grown);
        QCOMPARE(resets.count(), 0);
        QCOMPARE(inserts.count(), 1);
        QCOMPARE(inserts[0][0].value<QModelIndex>(), QModelIndex());
        QCOMPARE(model.rowCount(), 1);

        model.clear();
        QCOMPARE(resets.count(), 1);
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(model.cardId().isEmpty());
    }

    void showsHierarchyColumnsAndRoles()
    {
        SearchTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        const core::SearchTree tree = smallTree();
        model.setTree(tree);
        QCOMPARE(resets.count(), 1);
        compareWithTree(model, tree);

        const QModelIndex root = model.index(0, 0);
        QCOMPARE(text(root), QStringLiteral("n0"));
        QVERIFY(!root.parent().isValid());
        QCOMPARE(model.rowCount(root), 2);
        QCOMPARE(text(model.index(0, SearchTreeModel::DetailColumn)), QStringLiteral("root"));

        const QModelIndex n1 = model.indexOfNode(QStringLiteral("n1"));
        QCOMPARE(n1, model.index(0, 0, root));
        QCOMPARE(text(n1.siblingAtColumn(SearchTreeModel::StatusColumn)), QStringLiteral("passed"));
        QCOMPARE(text(n1.siblingAtColumn(SearchTreeModel::MedianColumn)), QStringLiteral("20.00"));
        QCOMPARE(text(n1.siblingAtColumn(SearchTreeModel::SpeedupColumn)), QStringLiteral("1.85x"));
        QCOMPARE(text(n1.siblingAtColumn(SearchTreeModel::DetailColumn)), QStringLiteral("vector-width-4"));
        QCOMPARE(n1.siblingAtColumn(SearchTreeModel::SpeedupColumn).data(SearchTreeModel::SortRole).toDouble(), 1.85);
        QVERIFY(n1.data(SearchTreeModel::IsBestRole).toBool());
        QVERIFY(!root.data(SearchTreeModel::IsBestRole).toBool());
        QCOMPARE(text(n1.siblingAtColumn(SearchTreeModel::DetailColumn), SearchTreeModel::NodeIdRole),
                 QStringLiteral("n1"));

        // A failure shows its kind and its one-line reason.
        const QModelIndex n2 = model.indexOfNode(QStringLiteral("n2"), SearchTreeModel::StatusColumn);
        QCOMPARE(n2.column(), int(SearchTreeModel::StatusColumn));
        QCOMPARE(text(n2), QStringLiteral("compile failed"));
        QCOMPARE(text(n2, SearchTreeModel::StatusNameRole), QStringLiteral("failed-compile"));
        QCOMPARE(n2.data(SearchTreeModel::StatusRole).toInt(), static_cast<int>(NodeStatus::FailedCompile));
        QCOMPARE(text(n2.siblingAtColumn(SearchTreeModel::DetailColumn)),
                 QStringLiteral("error: identifier \"x\" is undefined"));
        QCOMPARE(text(n2.siblingAtColumn(SearchTreeModel::MedianColumn)), QStringLiteral("-"));
        QCOMPARE(n2.siblingAtColumn(SearchTreeModel::MedianColumn).data(SearchTreeModel::SortRole).toDouble(), -1.0);

        // By node number: the same indexes as by id; out of range or a bad column is invalid.
        QCOMPARE(model.indexOfNodeAt(2, SearchTreeModel::StatusColumn), n2);
        QCOMPARE(model.indexOfNodeAt(1), n1.siblingAtColumn(0));
        QVERIFY(!model.indexOfNodeAt(4).isValid());
        QVERIFY(!model.indexOfNodeAt(-1).isValid());
        QVERIFY(!model.indexOfNodeAt(0, SearchTreeModel::ColumnCount).isValid());

        const QModelIndex n3 = model.indexOfNode(QStringLiteral("n3"));
        QCOMPARE(n3.parent(), n1.siblingAtColumn(0));
        QCOMPARE(text(n3.siblingAtColumn(SearchTreeModel::StatusColumn)), QStringLiteral("pending"));
        QCOMPARE(model.rowCount(n3), 0);
        QVERIFY(!model.hasChildren(n3));
        // Only column 0 has children.
        QCOMPARE(model.rowCount(n1.siblingAtColumn(SearchTreeModel::StatusColumn)), 0);

        const QString tip = text(n1, Qt::ToolTipRole);
        QVERIFY2(tip.contains(QStringLiteral("n1: passed (best)")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("median 20.0 \u00b5s (quartiles 19.4 \u00b5s .. 20.8 \u00b5s)")),
                 qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("speedup 1.85x")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("provenance: builtin-transformation")), qPrintable(tip));
        QVERIFY2(text(n2, Qt::ToolTipRole).contains(QStringLiteral("reason: error: identifier")), "reason in tooltip");
    }

    void textHelpers()
    {
        QCOMPARE(SearchTreeModel::latencyText(12.34), QStringLiteral("12.3 \u00b5s"));
        QCOMPARE(SearchTreeModel::latencyText(1.234), QStringLiteral("1.23 \u00b5s"));
        QCOMPARE(SearchTreeModel::latencyText(123.4), QStringLiteral("123 \u00b5s"));
        QCOMPARE(SearchTreeModel::latencyText(1234.0), QStringLiteral("1.23 ms"));
        QCOMPARE(SearchTreeModel::speedupText(1.849), QStringLiteral("1.85x"));
        core::SearchNode llm;
        llm.provenance.kind = core::ProvenanceKind::Llm;
        llm.provenance.provider = "openai";
        llm.provenance.model = "gpt-x";
        QCOMPARE(SearchTreeModel::transformationText(llm), QStringLiteral("llm: openai/gpt-x"));
        llm.provenance.kind = core::ProvenanceKind::ManualEdit;
        QCOMPARE(SearchTreeModel::transformationText(llm), QStringLiteral("manual edit"));
    }

    void growsIncrementally()
    {
        SearchTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        core::SearchTree tree = smallTree();
        model.setTree(tree);
        const QPersistentModelIndex n1 = model.indexOfNode(QStringLiteral("n1"));
        const QPersistentModelIndex n2 = model.indexOfNode(QStringLiteral("n2"), SearchTreeModel::DetailColumn);
        // A view's selection rides on persistent indexes: it must survive the update.
        QItemSelectionModel selection(&model);
        selection.select(n2, QItemSelectionModel::ClearAndSelect);

        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserts(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);

        // Two new children of the root, one of n1, and a grandchild under a new node. None beats
        // n1's 1.85x (50/30 and 50/28 us), so the best stays where it was.
        const std::string n4 = test::addChild(tree, "n0", "smem-tile", test::passed(30.0));
        test::addChild(tree, "n1", "block-256", test::passed(28.0));
        test::addChild(tree, "n0", "fast-math", test::failed(NodeStatus::Crashed, "worker died"));
        test::addChild(tree, n4, "unroll-2");
        model.updateTree(tree);

        QCOMPARE(resets.count(), 0);
        // One insertion per parent, parents before their children.
        QCOMPARE(inserts.count(), 3);
        QCOMPARE(text(inserts[0][0].value<QModelIndex>()), QStringLiteral("n0"));
        QCOMPARE(inserts[0][1].toInt(), 2);
        QCOMPARE(inserts[0][2].toInt(), 3);
        QCOMPARE(text(inserts[1][0].value<QModelIndex>()), QStringLiteral("n1"));
        QCOMPARE(inserts[1][1].toInt(), 1);
        QCOMPARE(inserts[1][2].toInt(), 1);
        QCOMPARE(text(inserts[2][0].value<QModelIndex>()), QStringLiteral("n4"));
        QCOMPARE(changes.count(), 0); // nothing shown about the old nodes changed
        compareWithTree(model, tree);

        QVERIFY(n1.isValid());
        QCOMPARE(text(n1), QStringLiteral("n1"));
        QCOMPARE(text(n2), QStringLiteral("error: identifier \"x\" is undefined"));
        QVERIFY(selection.isSelected(n2));
        QCOMPARE(selection.selectedIndexes().size(), 1);
    }

    void statusChangesEmitDataChanged()
    {
        SearchTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        core::SearchTree tree = smallTree();
        model.setTree(tree);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserts(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);

        // n3 finishes faster than n1: it becomes the best node, so n1 changes too.
        test::must(tree.recordEvaluation("n3", test::passed(10.0)));
        model.updateTree(tree);
        QCOMPARE(resets.count(), 0);
        QCOMPARE(inserts.count(), 0);
        QStringList changed;
        for (const auto& args : changes) {
            const QModelIndex topLeft = args[0].value<QModelIndex>();
            const QModelIndex bottomRight = args[1].value<QModelIndex>();
            QCOMPARE(topLeft.column(), 0);
            QCOMPARE(bottomRight.column(), int(SearchTreeModel::ColumnCount) - 1);
            QCOMPARE(topLeft.row(), bottomRight.row());
            changed << text(topLeft);
        }
        changed.sort();
        QCOMPARE(changed, (QStringList{QStringLiteral("n1"), QStringLiteral("n3")}));
        const QModelIndex n3 = model.indexOfNode(QStringLiteral("n3"));
        QCOMPARE(text(n3.siblingAtColumn(SearchTreeModel::StatusColumn)), QStringLiteral("passed"));
        QVERIFY(n3.data(SearchTreeModel::IsBestRole).toBool());
        QVERIFY(!model.indexOfNode(QStringLiteral("n1")).data(SearchTreeModel::IsBestRole).toBool());

        // The same snapshot again changes nothing.
        changes.clear();
        model.updateTree(tree);
        QCOMPARE(changes.count(), 0);
        QCOMPARE(resets.count(), 0);
    }

    void anotherCardOrAShrunkenTreeResets()
    {
        SearchTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTree(smallTree());
        const QPersistentModelIndex n1 = model.indexOfNode(QStringLiteral("n1"));
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserts(&model, &QAbstractItemModel::rowsInserted);

        core::SearchTree other("card-b", 1);
        test::addRoot(other, test::passed(8.0));
        model.updateTree(other);
        QCOMPARE(resets.count(), 1);
        QCOMPARE(inserts.count(), 0);
        QVERIFY(!n1.isValid());
        QCOMPARE(model.cardId(), QStringLiteral("card-b"));
        compareWithTree(model, other);

        // Same card, but fewer nodes (e.g. a search restarted from scratch): a reset too.
        model.setTree(smallTree());
        core::SearchTree restarted("card-a", 2);
        test::addRoot(restarted, test::passed(40.0));
        test::addChild(restarted, "n0", "unroll-2");
        model.updateTree(restarted);
        QCOMPARE(resets.count(), 3);
        QCOMPARE(inserts.count(), 0);
        compareWithTree(model, restarted);

        // Same card and size, but n1 now hangs under another parent: not a growth.
        core::SearchTree reshaped("card-a", 2);
        test::addRoot(reshaped, test::passed(40.0));
        test::addChild(reshaped, "n0", "unroll-2", test::passed(30.0));
        test::addChild(reshaped, "n1", "unroll-2");
        core::SearchTree before("card-a", 2);
        test::addRoot(before, test::passed(40.0));
        test::addChild(before, "n0", "unroll-2", test::passed(30.0));
        test::addChild(before, "n0", "unroll-2");
        model.setTree(before);
        resets.clear();
        model.updateTree(reshaped);
        QCOMPARE(resets.count(), 1);
        compareWithTree(model, reshaped);
    }

    void followsARandomRun()
    {
        SearchTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        std::mt19937 rng(11);
        core::SearchTree tree("card-r", 11);
        model.setTree(tree);
        test::addRoot(tree, test::passed(60.0));
        model.updateTree(tree);
        for (int step = 0; step < 25; ++step) {
            test::growRandomly(tree, 1 + static_cast<int>(rng() % 12), rng);
            // Finish some nodes that were left pending.
            for (const core::SearchNode& node : std::vector<core::SearchNode>(tree.nodes())) {
                if (node.status == NodeStatus::Pending && rng() % 3 == 0)
                    test::must(tree.recordEvaluation(node.id, test::passed(3.0 + static_cast<double>(rng() % 100))));
            }
            model.updateTree(tree);
            compareWithTree(model, tree);
        }
        QCOMPARE(resets.count(), 1); // only the setTree
        QVERIFY(tree.size() > 100);
        const core::SearchNode* best = core::bestNode(tree);
        QVERIFY(best);
        QVERIFY(model.indexOfNode(QString::fromStdString(best->id)).data(SearchTreeModel::IsBestRole).toBool());
    }
};

QTEST_GUILESS_MAIN(SearchTreeModelTest)
#include "SearchTreeModelTest.moc"
