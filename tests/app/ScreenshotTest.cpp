// Renders the main window over a real capture (the transformer test model, captured on this
// machine's CPU) and a real search of its softmax card, as `kernelforge --screenshot` does
// (prepareScreenshot), checks that what was rendered is the real window, and saves it into the
// build tree. No numbers in it are made up. (docs/screenshots/*.png are refreshed on request only,
// by tools/refresh_screenshots.sh; no test writes into the source tree.)
//
// Then every pane (tree, editor, diff, PTX / SASS, charts, log) in front at 1400x860 and 1920x1080
// over the same real search, each checked legible; those pictures go to the build tree too.
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
#include "models/CardsTableModel.h"
#include "models/SearchSettings.h"
#include "models/SearchTreeModel.h"
#include "models/Session.h"
#include "models/ValidationLogModel.h"
#include "search/TreeStore.h"
#include "views/cards/CardDetailsPane.h"
#include "views/cards/CardsPane.h"
#include "views/charts/LatencyChartsPane.h"
#include "views/editor/AssemblyView.h"
#include "views/editor/KernelEditorPane.h"
#include "views/editor/QsciHeaders.h"
#include "views/editor/SideBySideDiffView.h"
#include "views/log/ValidationLogPane.h"
#include "views/tree/SpeedupLegend.h"
#include "views/tree/TreeGraphView.h"
#include "views/tree/TreeMinimap.h"
#include "views/tree/TreeNodeList.h"
#include "views/tree/TreePane.h"

#include <QChart>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QMenuBar>
#include <QSet>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
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
    // The project every real-search picture is taken over: the transformer test model captured on
    // this machine's CPU and its softmax card searched for 12 iterations.
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        const QString project = m_dir.filePath(QStringLiteral("transformer_block"));
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
        m_project = project;
        m_softmax = softmax;
        m_cardCount = cardCount;
    }

    void rendersTheMainWindowOverARealSearch()
    {
        const QString project = m_project;
        const QString softmax = m_softmax;
        const int cardCount = m_cardCount;
        QVERIFY(!project.isEmpty());

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
        // Each card's status says what happened or why nothing will: the transposes are views
        // (no kernel to run), the linears vendor-backed, the searched softmax compiled only.
        std::map<QString, QSet<QString>> statusesByOp;
        for (int row = 0; row < table->model()->rowCount(); ++row)
            statusesByOp[table->model()->index(row, kforge::app::CardsTableModel::OpColumn).data().toString()].insert(
                table->model()->index(row, kforge::app::CardsTableModel::StatusColumn).data().toString());
        QCOMPARE(statusesByOp[QStringLiteral("aten::transpose.int")],
                 QSet<QString>({QStringLiteral("no kernel to run")}));
        QCOMPARE(statusesByOp[QStringLiteral("aten::linear")], QSet<QString>({QStringLiteral("skipped (vendor)")}));
        QCOMPARE(statusesByOp[QStringLiteral("aten::softmax.int")], QSet<QString>({QStringLiteral("compiled only")}));
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

    void everyPaneAtBothSizes_data()
    {
        QTest::addColumn<QSize>("windowSize");
        QTest::addColumn<QString>("pane");
        for (const QSize size : {QSize(1400, 860), QSize(1920, 1080)})
            for (const QString& pane : kforge::app::screenshotPaneNames())
                QTest::addRow("%dx%d, %s", size.width(), size.height(), qPrintable(pane)) << size << pane;
    }

    // `kernelforge PROJECT --screenshot F --pane NAME --size WxH --node n3` over the real search:
    // the pane in front, large enough to read, drawn (not blank), with what makes it legible in view
    // (the charts' plot areas, the log's message column, the cards table's status column).
    void everyPaneAtBothSizes()
    {
        QFETCH(QSize, windowSize);
        QFETCH(QString, pane);
        QVERIFY(!m_project.isEmpty());
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        kforge::app::ScreenshotRequest request;
        request.projectDir = m_project;
        request.cardId = m_softmax;
        request.nodeId = QStringLiteral("n3");
        request.pane = kforge::app::screenshotPaneFromName(pane);
        request.size = windowSize;
        QVERIFY(request.pane.has_value());
        const kforge::app::ScreenshotOutcome outcome = kforge::app::prepareScreenshot(window, request);
        QVERIFY2(outcome.status == kforge::app::ScreenshotOutcome::Status::Ready, qPrintable(outcome.error));
        const QImage image = kforge::app::grabScreenshot(window);
        QCOMPARE(image.size(), windowSize);
        // Into the build tree (before the checks, so that a failure can be looked at).
        const QString png = QStringLiteral(KFORGE_BINARY_DIR "/screenshots/pane-%1-%2x%3.png")
                                .arg(pane)
                                .arg(windowSize.width())
                                .arg(windowSize.height());
        QVERIFY(QDir().mkpath(QFileInfo(png).absolutePath()));
        QVERIFY(image.save(png, "PNG"));

        QWidget* shown = nullptr;
        switch (*request.pane) {
        case MainWindow::Pane::Tree:
            shown = window.treePane();
            QCOMPARE(window.treeView()->nodeCount(), 12);
            QVERIFY(window.treePane()->nodeList()->isVisible());
            break;
        case MainWindow::Pane::Editor:
            shown = window.kernelEditor();
            QVERIFY(!window.kernelEditor()->source().isEmpty());
            // The source gets the larger share of the editor beside the launch plan.
            QVERIFY(window.kernelEditor()->sourceEditor()->width() > window.kernelEditor()->planEditor()->width());
            break;
        case MainWindow::Pane::Diff:
            shown = window.kernelEditor()->diffView();
            break;
        case MainWindow::Pane::Assembly:
            shown = window.kernelEditor()->assemblyView();
            break;
        case MainWindow::Pane::Charts: {
            shown = window.latencyCharts();
            for (QChart* chart : {window.latencyCharts()->progressChart(), window.latencyCharts()->nodeChart(),
                                  window.latencyCharts()->speedupChart()}) {
                QVERIFY(!chart->axes().isEmpty());
                // Room for the data between the axes, not only their labels.
                QVERIFY2(chart->plotArea().width() > 150 && chart->plotArea().height() > 80,
                         qPrintable(QStringLiteral("%1: plot area %2x%3")
                                        .arg(chart->title())
                                        .arg(chart->plotArea().width())
                                        .arg(chart->plotArea().height())));
            }
            break;
        }
        case MainWindow::Pane::Log: {
            shown = window.validationLog();
            QTableView* log = window.validationLog()->tableView();
            QVERIFY(log->model()->rowCount() > 0);
            const int column = kforge::app::ValidationLogModel::MessageColumn;
            const int visible =
                std::min(log->columnViewportPosition(column) + log->columnWidth(column), log->viewport()->width()) -
                log->columnViewportPosition(column);
            QVERIFY2(!log->isColumnHidden(column) && visible > 200,
                     qPrintable(QStringLiteral("the message column shows %1 px").arg(visible)));
            break;
        }
        }
        QVERIFY(shown->isVisible());
        QVERIFY2(shown->width() >= 400 && shown->height() >= 200,
                 qPrintable(QStringLiteral("%1 is %2x%3").arg(pane).arg(shown->width()).arg(shown->height())));
        const QRect area(shown->mapTo(&window, QPoint(0, 0)), shown->size());
        QVERIFY2(distinctColors(image, area) > 20, qPrintable(pane + QStringLiteral(" is blank")));

        // The cards table's status stays in view beside any pane.
        QTableView* cards = window.cardsPane()->tableView();
        if (cards->isVisible()) {
            const int status = kforge::app::CardsTableModel::StatusColumn;
            QVERIFY2(!cards->isColumnHidden(status) &&
                         cards->columnViewportPosition(status) + 40 < cards->viewport()->width(),
                     "the cards table's status column is out of view");
        }
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

private:
    QTemporaryDir m_dir;
    QString m_project; // the captured and searched project under m_dir
    QString m_softmax; // its softmax card's id
    int m_cardCount = 0;
};

QTEST_MAIN(ScreenshotTest)
#include "ScreenshotTest.moc"
