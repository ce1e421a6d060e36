// SearchNodeListModel: one row per node in creation order under QAbstractItemModelTester, the tree
// model's values in every column, growth as appended rows, changed nodes as dataChanged, resets,
// and sorting through a QSortFilterProxyModel by SearchTreeModel::SortRole.

#include "models/SearchNodeListModel.h"
#include "SearchTreeTestSupport.h"
#include "model/NodeRanking.h"
#include "models/SearchTreeModel.h"

#include <QAbstractItemModelTester>
#include <QPersistentModelIndex>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTest>

using kforge::app::SearchNodeListModel;
using kforge::app::SearchTreeModel;
namespace core = kforge::core;
namespace test = kforge::test;
using core::NodeStatus;

namespace {

QString qs(const std::string& text)
{
    return QString::fromStdString(text);
}

/// Every row is the tree's node of that number, and says what the tree model says of it.
void compareWithTreeModel(const SearchNodeListModel& list, const SearchTreeModel& tree)
{
    const auto& nodes = tree.tree().nodes();
    QCOMPARE(list.rowCount(), static_cast<int>(nodes.size()));
    QCOMPARE(list.columnCount(), static_cast<int>(SearchTreeModel::ColumnCount));
    for (int row = 0; row < list.rowCount(); ++row) {
        const QString id = qs(nodes[static_cast<std::size_t>(row)].id);
        QCOMPARE(list.rowOfNode(id), row);
        for (int column = 0; column < SearchTreeModel::ColumnCount; ++column) {
            const QModelIndex mine = list.index(row, column);
            const QModelIndex theirs = tree.indexOfNode(id, column);
            for (int role : {int(Qt::DisplayRole), int(Qt::ToolTipRole), int(SearchTreeModel::NodeIdRole),
                             int(SearchTreeModel::IsBestRole), int(SearchTreeModel::SortRole)})
                QCOMPARE(mine.data(role), theirs.data(role));
        }
    }
}

} // namespace

class SearchNodeListModelTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void flatRowsFollowTheTreeModel()
    {
        SearchTreeModel tree;
        SearchNodeListModel list(&tree);
        QAbstractItemModelTester tester(&list, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(list.rowCount(), 0);
        QCOMPARE(list.headerData(SearchTreeModel::SpeedupColumn, Qt::Horizontal).toString(), QStringLiteral("Speedup"));

        core::SearchTree grown = test::randomTree("card-l", 40, 7);
        tree.setTree(grown);
        compareWithTreeModel(list, tree);
        QCOMPARE(list.index(0, SearchTreeModel::IdColumn).data().toString(), QStringLiteral("n0"));

        // A run grows the tree and a pending node finishes: rows are appended, the node changes.
        std::string pending;
        for (const core::SearchNode& node : grown.nodes())
            if (node.status == NodeStatus::Pending)
                pending = node.id;
        QVERIFY(!pending.empty());
        const QPersistentModelIndex kept = list.index(3, 1);
        QSignalSpy inserted(&list, &QAbstractItemModel::rowsInserted);
        QSignalSpy changed(&list, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&list, &QAbstractItemModel::modelReset);
        std::mt19937 rng(8);
        test::growRandomly(grown, 25, rng);
        test::must(grown.recordEvaluation(pending, test::passed(3.0)));
        tree.updateTree(grown);
        QCOMPARE(reset.count(), 0);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(inserted[0][1].toInt(), 40);
        QCOMPARE(inserted[0][2].toInt(), 64);
        QVERIFY(kept.isValid());
        QCOMPARE(kept.row(), 3);
        bool pendingChanged = false;
        for (const QList<QVariant>& args : changed)
            pendingChanged |= args[0].toModelIndex().row() == list.rowOfNode(qs(pending));
        QVERIFY(pendingChanged);
        compareWithTreeModel(list, tree);
        QCOMPARE(list.index(list.rowOfNode(qs(pending)), SearchTreeModel::StatusColumn).data().toString(),
                 QStringLiteral("passed"));

        // Another card resets; so does clearing.
        tree.setTree(test::randomTree("card-m", 12, 9));
        QCOMPARE(reset.count(), 1);
        compareWithTreeModel(list, tree);
        tree.clear();
        QCOMPARE(list.rowCount(), 0);
        QCOMPARE(list.rowOfNode(QStringLiteral("n0")), -1);
    }

    void sortsBySpeedupThroughAProxy()
    {
        SearchTreeModel tree;
        const core::SearchTree source = test::randomTree("card-s", 60, 3);
        tree.setTree(source);
        SearchNodeListModel list(&tree);
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&list);
        proxy.setSortRole(SearchTreeModel::SortRole);
        QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        proxy.sort(SearchTreeModel::SpeedupColumn, Qt::DescendingOrder);
        QCOMPARE(proxy.rowCount(), 60);
        // The first row is the best node; speedups (core::nodeSpeedup, -1 when none) never rise.
        QCOMPARE(proxy.index(0, 0).data(SearchTreeModel::NodeIdRole).toString(), qs(core::bestNode(source)->id));
        double previous = 1e300;
        for (int row = 0; row < proxy.rowCount(); ++row) {
            const QString id = proxy.index(row, 0).data(SearchTreeModel::NodeIdRole).toString();
            const double speedup = core::nodeSpeedup(*source.find(id.toStdString())).value_or(-1.0);
            QVERIFY(speedup <= previous);
            previous = speedup;
        }
    }
};

QTEST_MAIN(SearchNodeListModelTest)
#include "SearchNodeListModelTest.moc"
