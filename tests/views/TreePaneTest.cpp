// TreePane: the legend, the graph and the node list over one SearchTreeModel; a node chosen in the
// graph (click, Enter) or the list goes through Session, and the other follows; the list sorts by
// core's speedup and filters.

#include "views/tree/TreePane.h"
#include "SearchTreeTestSupport.h"
#include "model/NodeRanking.h"
#include "models/SearchTreeModel.h"
#include "models/Session.h"
#include "views/tree/SpeedupLegend.h"
#include "views/tree/TreeGraphView.h"
#include "views/tree/TreeNodeList.h"

#include <QAbstractItemModelTester>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTest>

using kforge::app::SearchTreeModel;
using kforge::app::Session;
using kforge::views::TreePane;
namespace core = kforge::core;
namespace test = kforge::test;

namespace {

QString qs(const std::string& text)
{
    return QString::fromStdString(text);
}

} // namespace

class TreePaneTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void graphListAndSessionAgree()
    {
        SearchTreeModel model;
        Session session;
        TreePane pane(&model, &session);
        pane.resize(1200, 600);
        pane.show();
        QVERIFY(QTest::qWaitForWindowExposed(&pane));
        QAbstractItemModelTester tester(pane.nodeList()->proxyModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const core::SearchTree tree = test::randomTree("card-p", 80, 6);
        model.setTree(tree);
        QTRY_COMPARE(pane.graphView()->nodeCount(), 80);
        QCOMPARE(pane.nodeList()->proxyModel()->rowCount(), 80);
        QVERIFY(pane.legend()->isVisible());
        QCOMPARE(pane.splitter()->count(), 2);
        QVERIFY(pane.graphView()->width() > pane.nodeList()->width());

        // Sorted fastest first: the top row is core's best node.
        QTableView* table = pane.nodeList()->tableView();
        QCOMPARE(table->model()->index(0, 0).data(SearchTreeModel::NodeIdRole).toString(),
                 qs(core::bestNode(tree)->id));

        // A row chosen in the list: the session, then the graph.
        QSignalSpy changed(&session, &Session::currentNodeChanged);
        const QModelIndex third = table->model()->index(2, SearchTreeModel::StatusColumn);
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(third).center());
        const QString chosen = third.data(SearchTreeModel::NodeIdRole).toString();
        QCOMPARE(session.currentNodeId(), chosen);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(pane.graphView()->selectedNodeId(), chosen);

        // The list's keys: the arrows move, Enter chooses, as in the graph.
        table->setFocus();
        QTest::keyClick(table, Qt::Key_Down);
        const QString fourth = table->model()->index(3, 0).data(SearchTreeModel::NodeIdRole).toString();
        QCOMPARE(pane.nodeList()->currentNodeId(), fourth);
        QCOMPARE(session.currentNodeId(), chosen); // moving is not choosing
        QTest::keyClick(table, Qt::Key_Return);
        QCOMPARE(session.currentNodeId(), fourth);
        QCOMPARE(changed.count(), 2);
        session.setCurrentNodeId(chosen);
        QCOMPARE(changed.count(), 3);

        // The graph's keys: Home then Enter chooses the root; the list follows.
        pane.graphView()->setFocus();
        QTest::keyClick(pane.graphView(), Qt::Key_Home);
        QCOMPARE(session.currentNodeId(), chosen); // moving is not choosing
        QTest::keyClick(pane.graphView(), Qt::Key_Return);
        QCOMPARE(session.currentNodeId(), QStringLiteral("n0"));
        QCOMPARE(pane.nodeList()->currentNodeId(), QStringLiteral("n0"));
        QCOMPARE(changed.count(), 4); // the list followed without echoing

        // A click in the graph; then the session alone (another pane) moves both.
        const QString clicked = QStringLiteral("n5");
        QVERIFY(pane.graphView()->isNodeShown(clicked));
        pane.graphView()->zoomBy(1.0 / pane.graphView()->zoom());
        pane.graphView()->centerOn(pane.graphView()->nodeRect(clicked).center());
        QTest::mouseClick(pane.graphView()->viewport(), Qt::LeftButton, {},
                          pane.graphView()->mapFromScene(pane.graphView()->nodeRect(clicked).center()));
        QCOMPARE(session.currentNodeId(), clicked);
        QCOMPARE(pane.nodeList()->currentNodeId(), clicked);
        session.setCurrentNodeId(QStringLiteral("n42"));
        QCOMPARE(pane.graphView()->selectedNodeId(), QStringLiteral("n42"));
        QCOMPARE(pane.nodeList()->currentNodeId(), QStringLiteral("n42"));
        session.setCurrentNodeId(QString());
        QVERIFY(pane.graphView()->selectedNodeId().isEmpty());
        QVERIFY(pane.nodeList()->currentNodeId().isEmpty());

        // The filter narrows the list and says so.
        pane.nodeList()->filterEdit()->setText(QStringLiteral("compile failed"));
        const int failed = pane.nodeList()->proxyModel()->rowCount();
        int expected = 0;
        for (const core::SearchNode& node : tree.nodes())
            expected += node.status == core::NodeStatus::FailedCompile ? 1 : 0;
        QCOMPARE(failed, expected);
        QVERIFY(failed < 80);
    }
};

QTEST_MAIN(TreePaneTest)
#include "TreePaneTest.moc"
