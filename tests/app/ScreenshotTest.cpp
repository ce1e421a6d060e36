// Renders the main window over a real capture (the transformer test model, captured on this
// machine's CPU) and a real search of its softmax card, as `kernelforge --screenshot` does
// (prepareScreenshot), checks that what was rendered is the real window, and saves it into the
// build tree. No numbers in it are made up. (docs/screenshots/*.png are refreshed on request only,
// by tools/refresh_screenshots.sh; no test writes into the source tree.)
//
// Then the MCTS tree pane at 1400x860 and 1920x1080 over search trees of 50 and 500 nodes (built
// from core's SearchTree with plausible outcomes and speedups, saved where a search keeps them):
// the node list holds every node, labels never overlap, the keys move the selection through the
// Session, a collapsed subtree hides its nodes, the overview shows and pans. Those pictures go to
// the build tree only.

#include "FixtureProject.h"
#include "SearchTreeTestSupport.h"
#include "app/MainWindow.h"
#include "app/OptimizeJob.h"
#include "app/ScreenshotCommand.h"
#include "capture/CaptureJob.h"
#include "model/NodeRanking.h"
#include "models/SearchSettings.h"
#include "models/SearchTreeModel.h"
#include "models/Session.h"
#include "search/TreeStore.h"
#include "views/cards/CardDetailsPane.h"
#include "views/cards/CardsPane.h"
#include "views/editor/KernelEditorPane.h"
#include "views/tree/SpeedupLegend.h"
#include "views/tree/TreeGraphView.h"
#include "views/tree/TreeMinimap.h"
#include "views/tree/TreeNodeList.h"
#include "views/tree/TreePane.h"

#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QMenuBar>
#include <QSet>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <map>

using kforge::app::MainWindow;

namespace {

int distinctColors(const QImage& image, const QRect& area)
{
    QSet<QRgb> colors;
    for (int y = area.top(); y <= area.bottom(); y += 2) {
        for (int x = area.left(); x <= area.right(); x += 2)
            colors.insert(image.pixel(x, y));
    }
    return static_cast<int>(colors.size());
}

namespace core = kforge::core;
namespace test = kforge::test;

/// The scene rectangles of every label drawn at the view's zoom; false when two intersect or a
/// node's label leaves its box.
bool labelsApart(const kforge::views::TreeGraphView& view, const core::SearchTree& tree, int* drawn)
{
    std::vector<QRectF> rects;
    *drawn = 0;
    for (const core::SearchNode& node : tree.nodes()) {
        const QString id = QString::fromStdString(node.id);
        const QRectF label = view.labelRect(id);
        if (!label.isEmpty()) {
            ++*drawn;
            if (!view.nodeRect(id).contains(label))
                return false;
            rects.push_back(label);
        }
        const QRectF edge = view.edgeLabelRect(id);
        if (!edge.isEmpty())
            rects.push_back(edge);
    }
    for (std::size_t i = 0; i < rects.size(); ++i)
        for (std::size_t j = i + 1; j < rects.size(); ++j)
            if (rects[i].intersects(rects[j]))
                return false;
    return true;
}

} // namespace

class ScreenshotTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rendersTheMainWindowOverARealSearch()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString project = dir.filePath(QStringLiteral("transformer_block"));
        kforge::core::CaptureOptions options;
        options.modelPath = KFORGE_TEST_MODELS_DIR "/transformer_block.pt";
        options.inputs = {"4x64x32"};
        options.outputDir = project.toStdString();
        options.device = "cpu";
        auto captured = kforge::core::runCapture(options);
        QVERIFY2(captured.ok(), captured.ok() ? "" : captured.error().toString().c_str());
        const int cardCount = static_cast<int>(captured->project.cards.size());

        qputenv("KFORGE_WORKER", QByteArray(KFORGE_WORKER_PATH)); // before the window probes the GPU
        MainWindow search(MainWindow::SettingsMode::Ephemeral);
        QVERIFY(search.openProject(project));
        // A real search on the softmax card: the built-in proposer, NVRTC, and the worker, which
        // on a machine without a GPU makes every node compile-only.
        QString softmax;
        for (const kforge::core::OperatorCard& card : captured->project.cards)
            if (card.qualifiedName() == "aten::softmax.int")
                softmax = QString::fromStdString(card.id);
        QVERIFY(!softmax.isEmpty());
        kforge::app::SearchSettings settings;
        settings.iterations = 12;
        search.setSearchSettings(settings);
        search.session()->setCurrentCardId(softmax);
        QVERIFY(search.startOptimize({softmax}));
        QTRY_VERIFY_WITH_TIMEOUT(!search.optimizeJob()->isRunning(), 240000);

        // What `kernelforge PROJECT --screenshot FILE --card <softmax prefix> --node n3` renders.
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        kforge::app::ScreenshotRequest request;
        request.projectDir = project;
        request.cardId = softmax.left(8);
        request.nodeId = QStringLiteral("n3");
        const kforge::app::ScreenshotOutcome outcome = kforge::app::prepareScreenshot(window, request);
        QVERIFY2(outcome.status == kforge::app::ScreenshotOutcome::Status::Ready, qPrintable(outcome.error));
        QCOMPARE(window.treeView()->nodeCount(), 12);
        QCOMPARE(window.kernelEditor()->nodeId(), QStringLiteral("n3"));
        const QImage image = kforge::app::grabScreenshot(window);
        QCOMPARE(image.size(), QSize(kforge::app::kScreenshotWidth, kforge::app::kScreenshotHeight));

        // What was grabbed: the menu bar, a filled cards table with the top card current, its details.
        QVERIFY(window.menuBar()->isVisible());
        QTableView* table = window.cardsPane()->tableView();
        QCOMPARE(table->model()->rowCount(), cardCount);
        QVERIFY(table->isVisible());
        QCOMPARE(window.session()->currentCardId(), softmax);
        QVERIFY(window.treeView()->isVisible());
        QVERIFY(window.cardDetailsPane()->plainText().contains(QStringLiteral("Schema")));
        QVERIFY(window.cardDetailsPane()->plainText().contains(QStringLiteral("cpu wall clock")));
        auto* details = window.findChild<QDockWidget*>(QStringLiteral("cardDetailsDock"));
        QVERIFY(details->isVisible());
        QVERIFY(details->width() > 300);
        QVERIFY(table->viewport()->height() > 250);

        // The pixels are not blank: text in the table and the details pane.
        const QRect tableArea(table->viewport()->mapTo(&window, QPoint(0, 0)), table->viewport()->size());
        QVERIFY2(distinctColors(image, tableArea) > 20, "the cards table area is blank");
        const QRect detailsArea(details->mapTo(&window, QPoint(0, 0)), details->size());
        QVERIFY2(distinctColors(image, detailsArea) > 20, "the details area is blank");

        // Into the build tree only: a test run never touches a tracked file.
        const QString png = QStringLiteral(KFORGE_BINARY_DIR "/screenshots/main-window.png");
        QVERIFY(QDir().mkpath(QFileInfo(png).absolutePath()));
        QVERIFY(image.save(png, "PNG"));
        QImage reloaded(png);
        QCOMPARE(reloaded.size(), image.size());
        QCOMPARE(reloaded.convertToFormat(QImage::Format_RGB32), image.convertToFormat(QImage::Format_RGB32));
    }

    void treePane_data()
    {
        QTest::addColumn<QSize>("windowSize");
        QTest::addColumn<int>("nodes");
        for (const QSize size : {QSize(1400, 860), QSize(1920, 1080)})
            for (const int nodes : {50, 500})
                QTest::addRow("%dx%d, %d nodes", size.width(), size.height(), nodes) << size << nodes;
    }

    void treePane()
    {
        QFETCH(QSize, windowSize);
        QFETCH(int, nodes);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const core::Project project = kforge::app::test::makeFixtureProject();
        QVERIFY(kforge::app::test::writeProject(dir.path(), project));
        const std::string cardId = project.cards.front().id;
        const core::SearchTree tree = test::plausibleTree(cardId, nodes, static_cast<std::uint32_t>(nodes));
        QVERIFY(core::TreeStore(core::TreeStore::defaultPath(dir.path().toStdString(), cardId)).save(tree).ok());

        qputenv("KFORGE_WORKER", QByteArray(KFORGE_WORKER_PATH));
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        window.resize(windowSize);
        window.resetLayout();
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openProject(dir.path()));
        window.session()->setCurrentCardId(QString::fromStdString(cardId));
        kforge::views::TreeGraphView* graph = window.treeView();
        QTRY_COMPARE(graph->nodeCount(), nodes);
        kforge::views::TreePane* pane = window.treePane();
        QVERIFY(pane->isVisible());
        QVERIFY(pane->legend()->isVisible());
        QVERIFY(graph->viewport()->width() > 200);
        QVERIFY(graph->viewport()->height() > 150);

        // The node list holds every node, the fastest first (core's best).
        QTableView* list = pane->nodeList()->tableView();
        QVERIFY(list->isVisible());
        QCOMPARE(list->model()->rowCount(), nodes);
        const core::SearchNode* best = core::bestNode(tree);
        QVERIFY(best);
        const QString bestId = QString::fromStdString(best->id);
        QCOMPARE(list->model()->index(0, 0).data(kforge::app::SearchTreeModel::NodeIdRole).toString(), bestId);

        // Fitted, the whole tree is in view and needs no overview; labels never overlap.
        QVERIFY(graph->mapToScene(graph->viewport()->rect())
                    .boundingRect()
                    .contains(graph->sceneRect().adjusted(2, 2, -2, -2)));
        QVERIFY(!graph->minimap()->isVisible());
        int drawn = 0;
        QVERIFY(labelsApart(*graph, tree, &drawn));
        const QImage fitted = window.grab().toImage();

        // The keys walk the tree and Enter chooses through the Session (the list follows).
        const core::SearchNode* root = tree.find("n0");
        QVERIFY(root->childIds.size() >= 2);
        graph->setFocus();
        QTest::keyClick(graph, Qt::Key_Home);
        QCOMPARE(graph->selectedNodeId(), QStringLiteral("n0"));
        QTest::keyClick(graph, Qt::Key_Down);
        QTest::keyClick(graph, Qt::Key_Right);
        const QString second = QString::fromStdString(root->childIds[1]);
        QCOMPARE(graph->selectedNodeId(), second);
        QTest::keyClick(graph, Qt::Key_Return);
        QCOMPARE(window.session()->currentNodeId(), second);
        QCOMPARE(pane->nodeList()->currentNodeId(), second);
        QTest::keyClick(graph, Qt::Key_B);
        QTest::keyClick(graph, Qt::Key_Enter);
        QCOMPARE(window.session()->currentNodeId(), bestId);
        QCOMPARE(pane->nodeList()->currentNodeId(), bestId);
        QCOMPARE(window.kernelEditor()->nodeId(), bestId);

        // Close up: readable labels, still apart; the overview shows and pans.
        graph->zoomBy(1.0 / graph->zoom());
        QVERIFY(labelsApart(*graph, tree, &drawn));
        QVERIFY(drawn > 0);
        const bool wholeTreeFits = graph->mapToScene(graph->viewport()->rect())
                                       .boundingRect()
                                       .contains(graph->sceneRect().adjusted(2, 2, -2, -2));
        QCOMPARE(graph->minimap()->isVisible(), !wholeTreeFits);
        if (!wholeTreeFits) {
            const QPointF target = graph->nodeRect(QStringLiteral("n0")).center();
            QTest::mouseClick(graph->minimap(), Qt::LeftButton, {}, graph->minimap()->fromScene(target).toPoint());
            QVERIFY(graph->mapToScene(graph->viewport()->rect()).boundingRect().contains(target));
        }
        const QImage closeUp = window.grab().toImage();

        // Collapsing the root child with the largest subtree hides all of it.
        std::map<std::string, int> below;
        for (auto it = tree.nodes().rbegin(); it != tree.nodes().rend(); ++it)
            for (const std::string& child : it->childIds)
                below[it->id] += 1 + below[child];
        std::string largest = root->childIds.front();
        for (const std::string& child : root->childIds)
            if (below[child] > below[largest])
                largest = child;
        graph->fitToView();
        graph->setCollapsed(QString::fromStdString(largest), true);
        QCOMPARE(graph->hiddenCount(QString::fromStdString(largest)), below[largest]);
        int shown = 0;
        for (const core::SearchNode& node : tree.nodes())
            shown += graph->isNodeShown(QString::fromStdString(node.id)) ? 1 : 0;
        QCOMPARE(shown, nodes - below[largest]);
        QVERIFY(labelsApart(*graph, tree, &drawn));
        QCOMPARE(list->model()->rowCount(), nodes); // the list still lists every node
        const QImage collapsed = window.grab().toImage();

        // The pictures are real: colours in the graph, the list and the legend.
        for (const QImage& image : {fitted, closeUp, collapsed}) {
            QCOMPARE(image.size(), windowSize);
            const QRect graphArea(graph->viewport()->mapTo(&window, QPoint(0, 0)), graph->viewport()->size());
            QVERIFY2(distinctColors(image, graphArea) > 8, "the graph is blank");
            const QRect listArea(list->viewport()->mapTo(&window, QPoint(0, 0)), list->viewport()->size());
            QVERIFY2(distinctColors(image, listArea) > 8, "the node list is blank");
            const QRect legendArea(pane->legend()->mapTo(&window, QPoint(0, 0)), pane->legend()->size());
            QVERIFY2(distinctColors(image, legendArea) > 8, "the legend is blank");
        }
        // Into the build tree only: a test run never touches a tracked file.
        const QString stem = QStringLiteral(KFORGE_BINARY_DIR "/screenshots/tree-pane-%1x%2-%3-nodes")
                                 .arg(windowSize.width())
                                 .arg(windowSize.height())
                                 .arg(nodes);
        QVERIFY(QDir().mkpath(QFileInfo(stem).absolutePath()));
        QVERIFY(fitted.save(stem + QStringLiteral(".png"), "PNG"));
        QVERIFY(closeUp.save(stem + QStringLiteral("-close-up.png"), "PNG"));
        QVERIFY(collapsed.save(stem + QStringLiteral("-collapsed.png"), "PNG"));
        QVERIFY(pane->grab().save(stem + QStringLiteral("-pane.png"), "PNG"));
    }
};

QTEST_MAIN(ScreenshotTest)
#include "ScreenshotTest.moc"
