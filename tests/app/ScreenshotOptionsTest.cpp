// What `kernelforge --screenshot` chooses and refuses (app/ScreenshotCommand.h), in process so the
// window can be asked: over the fixture project of the screenshot tests with plausible search trees
// on two cards (the top row's slower than the other's), the default card is the one with the best
// speedup and the default node its best node; --card, --node, --pane and --size give what they
// name; every bad input fails with its line. The executable's exit codes: KernelForgeExeTest.

#include "FixtureProject.h"
#include "SearchTreeTestSupport.h"
#include "app/MainWindow.h"
#include "app/ScreenshotCommand.h"
#include "model/NodeRanking.h"
#include "models/CardsTableModel.h"
#include "models/Session.h"
#include "search/TreeStore.h"
#include "views/cards/CardsPane.h"
#include "views/charts/LatencyChartsPane.h"
#include "views/editor/AssemblyView.h"
#include "views/editor/KernelEditorPane.h"
#include "views/log/ValidationLogPane.h"
#include "views/tree/TreeGraphView.h"
#include "views/tree/TreePane.h"

#include <QDir>
#include <QFile>
#include <QSortFilterProxyModel>
#include <QTemporaryDir>
#include <QTest>

#include <utility>

using kforge::app::MainWindow;
using kforge::app::ScreenshotOutcome;
using kforge::app::ScreenshotRequest;
namespace core = kforge::core;

Q_DECLARE_METATYPE(MainWindow::Pane)

namespace {

double bestSpeedup(const core::SearchTree& tree)
{
    const core::SearchNode* best = core::bestNode(tree);
    return best && core::nodeSpeedup(*best) ? *core::nodeSpeedup(*best) : 0.0;
}

bool saveTree(const QString& projectDir, const core::SearchTree& tree)
{
    return core::TreeStore(core::TreeStore::defaultPath(projectDir.toStdString(), tree.cardId())).save(tree).ok();
}

/// The widget of each pane, and that of the pane it is tabbed with (moved out of sight while the
/// other is in front: its visible region is empty).
std::pair<QWidget*, QWidget*> paneAndTabbedWith(const MainWindow& window, MainWindow::Pane pane)
{
    QWidget* tree = window.treePane();
    QWidget* log = window.validationLog();
    QWidget* editor = window.kernelEditor();
    QWidget* charts = window.latencyCharts();
    if (pane == MainWindow::Pane::Tree || pane == MainWindow::Pane::Log)
        return pane == MainWindow::Pane::Tree ? std::pair(tree, log) : std::pair(log, tree);
    return pane == MainWindow::Pane::Charts ? std::pair(charts, editor) : std::pair(editor, charts);
}

} // namespace

class ScreenshotOptionsTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_project = m_dir.filePath(QStringLiteral("project"));
        QVERIFY(kforge::app::test::writeFixtureProject(m_project));
        qputenv("KFORGE_WORKER", QByteArray(KFORGE_WORKER_PATH));

        // The cards in the table's order (largest share first).
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        ScreenshotRequest request;
        request.projectDir = m_project;
        QCOMPARE(kforge::app::prepareScreenshot(window, request).status, ScreenshotOutcome::Status::Ready);
        const QSortFilterProxyModel* table = window.cardsPane()->proxyModel();
        QVERIFY(table->rowCount() >= 4);
        for (int row = 0; row < 4; ++row)
            m_rows << table->index(row, 0).data(kforge::app::CardsTableModel::CardIdRole).toString();

        // The top card gets the tree with the lower best speedup, the third the higher: the default
        // is then not simply the top row.
        core::SearchTree slower = kforge::test::plausibleTree(m_rows[0].toStdString(), 50, 50);
        core::SearchTree faster = kforge::test::plausibleTree(m_rows[2].toStdString(), 60, 7);
        QVERIFY(bestSpeedup(slower) > 1.0);
        if (bestSpeedup(slower) > bestSpeedup(faster)) {
            slower = kforge::test::plausibleTree(m_rows[0].toStdString(), 60, 7);
            faster = kforge::test::plausibleTree(m_rows[2].toStdString(), 50, 50);
        }
        QVERIFY(bestSpeedup(faster) > bestSpeedup(slower));
        QVERIFY(saveTree(m_project, slower));
        QVERIFY(saveTree(m_project, faster));
        m_fasterBest = QString::fromStdString(core::bestNode(faster)->id);
        m_fasterNodes = static_cast<int>(faster.nodes().size());
        m_slowerNodes = static_cast<int>(slower.nodes().size());
        // The second card has no tree; the fourth's tree file is damaged.
        const QString damaged =
            QString::fromStdString(core::TreeStore::defaultPath(m_project.toStdString(), m_rows[3].toStdString()));
        QVERIFY(QDir().mkpath(QFileInfo(damaged).absolutePath()));
        QFile file(damaged);
        QVERIFY(file.open(QIODevice::WriteOnly));
        QVERIFY(file.write("{\"not\": \"a tree\"") > 0);
    }

    void defaultsAreTheBestSpeedupsCardAndItsBestNode()
    {
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        ScreenshotRequest request;
        request.projectDir = m_project;
        const ScreenshotOutcome outcome = kforge::app::prepareScreenshot(window, request);
        QVERIFY2(outcome.status == ScreenshotOutcome::Status::Ready, qPrintable(outcome.error));
        QVERIFY(!window.isLoading());
        QCOMPARE(window.session()->currentCardId(), m_rows[2]);
        QCOMPARE(kforge::app::defaultScreenshotCard(window), m_rows[2]);
        QCOMPARE(window.treeView()->nodeCount(), m_fasterNodes);
        QCOMPARE(window.session()->currentNodeId(), m_fasterBest);
        QCOMPARE(window.kernelEditor()->nodeId(), m_fasterBest);
        QCOMPARE(window.gpuStatusText().contains(QStringLiteral("checking")), false);
        QCOMPARE(kforge::app::grabScreenshot(window).size(),
                 QSize(kforge::app::kScreenshotWidth, kforge::app::kScreenshotHeight));
        // As drawn, the default layout: the tree and the editor in front.
        QVERIFY(!window.treePane()->visibleRegion().isEmpty());
        QVERIFY(window.validationLog()->visibleRegion().isEmpty());
        QVERIFY(!window.kernelEditor()->visibleRegion().isEmpty());
        QVERIFY(window.latencyCharts()->visibleRegion().isEmpty());
        QCOMPARE(window.kernelEditor()->currentTab(), kforge::views::KernelEditorPane::Tab::Editor);
    }

    void cardNodePaneAndSize_data()
    {
        QTest::addColumn<QString>("paneName");
        QTest::addColumn<MainWindow::Pane>("pane");
        const MainWindow::Pane panes[] = {MainWindow::Pane::Tree,     MainWindow::Pane::Editor, MainWindow::Pane::Diff,
                                          MainWindow::Pane::Assembly, MainWindow::Pane::Charts, MainWindow::Pane::Log};
        const QStringList names = kforge::app::screenshotPaneNames();
        QCOMPARE(names.size(), 6);
        for (int i = 0; i < 6; ++i)
            QTest::newRow(qPrintable(names[i])) << names[i] << panes[i];
    }

    void cardNodePaneAndSize()
    {
        QFETCH(QString, paneName);
        QFETCH(MainWindow::Pane, pane);
        QCOMPARE(kforge::app::screenshotPaneFromName(paneName), std::optional<MainWindow::Pane>(pane));
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        ScreenshotRequest request;
        request.projectDir = m_project;
        request.cardId = m_rows[0].left(8); // a unique prefix names the card
        request.nodeId = QStringLiteral("n3");
        request.pane = pane;
        request.size = QSize(1200, 760);
        const ScreenshotOutcome outcome = kforge::app::prepareScreenshot(window, request);
        QVERIFY2(outcome.status == ScreenshotOutcome::Status::Ready, qPrintable(outcome.error));
        QCOMPARE(window.session()->currentCardId(), m_rows[0]);
        QCOMPARE(window.treeView()->nodeCount(), m_slowerNodes);
        QCOMPARE(window.session()->currentNodeId(), QStringLiteral("n3"));
        QCOMPARE(window.kernelEditor()->nodeId(), QStringLiteral("n3"));
        QCOMPARE(window.treeView()->selectedNodeId(), QStringLiteral("n3"));

        // As drawn: the grab lays the docks out first.
        QCOMPARE(kforge::app::grabScreenshot(window).size(), QSize(1200, 760));
        const auto [shown, behind] = paneAndTabbedWith(window, pane);
        QVERIFY(!shown->visibleRegion().isEmpty());
        QVERIFY(behind->visibleRegion().isEmpty());
        QVERIFY(window.focusWidget());
        QVERIFY2(shown == window.focusWidget() || shown->isAncestorOf(window.focusWidget()),
                 window.focusWidget()->metaObject()->className());
        if (pane == MainWindow::Pane::Editor || pane == MainWindow::Pane::Diff)
            QCOMPARE(window.kernelEditor()->currentTab(),
                     pane == MainWindow::Pane::Diff ? kforge::views::KernelEditorPane::Tab::Diff
                                                    : kforge::views::KernelEditorPane::Tab::Editor);
        if (pane == MainWindow::Pane::Assembly) {
            // The listing of n3 arrived before the window counted as loaded.
            QCOMPARE(window.kernelEditor()->currentTab(), kforge::views::KernelEditorPane::Tab::Assembly);
            QVERIFY(!window.isLoading());
            const QString listed = window.kernelEditor()->assemblyView()->message();
            QVERIFY2(listed.startsWith(QStringLiteral("Node n3")), qPrintable(listed)); // not "Compiling..."
        }
    }

    void withoutSpeedupsTheTopRowAndTheRoot()
    {
        // As the CPU-only pipeline leaves a project: compile-only trees, no speedup anywhere.
        const QString project = m_dir.filePath(QStringLiteral("compile-only"));
        QVERIFY(kforge::app::test::writeFixtureProject(project));
        core::SearchTree tree(m_rows[1].toStdString(), 1);
        kforge::test::addRoot(tree, kforge::test::compiledOnly());
        kforge::test::addChild(tree, "n0", "unroll 2", kforge::test::compiledOnly());
        QVERIFY(saveTree(project, tree));

        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        ScreenshotRequest request;
        request.projectDir = project;
        QCOMPARE(kforge::app::prepareScreenshot(window, request).status, ScreenshotOutcome::Status::Ready);
        QCOMPARE(window.session()->currentCardId(), m_rows[0]);
        QCOMPARE(window.session()->currentNodeId(), QString()); // no tree, no node

        MainWindow second(MainWindow::SettingsMode::Ephemeral);
        request.cardId = m_rows[1];
        QCOMPARE(kforge::app::prepareScreenshot(second, request).status, ScreenshotOutcome::Status::Ready);
        QCOMPARE(second.session()->currentCardId(), m_rows[1]);
        QCOMPARE(second.session()->currentNodeId(), QStringLiteral("n0"));
    }

    void badInputs_data()
    {
        QTest::addColumn<QString>("project"); // relative to the test's folder; "" for none
        QTest::addColumn<QString>("card");
        QTest::addColumn<QString>("node");
        QTest::addColumn<QSize>("size");
        QTest::addColumn<QString>("error"); // %1: the project folder, %2..%5: the rows' card ids

        const QSize size(kforge::app::kScreenshotWidth, kforge::app::kScreenshotHeight);
        const QString project = QStringLiteral("project");
        QTest::newRow("unknown card")
            << project << QStringLiteral("feedbeef") << QString() << size
            << QStringLiteral("--card feedbeef: no card with that id (or the prefix is ambiguous) in %1");
        QTest::newRow("unknown node") << project << QStringLiteral("%2") << QStringLiteral("n999") << size
                                      << QStringLiteral(
                                             "--node n999: no node with that id in the search tree of card %2");
        QTest::newRow("node without a tree") << project << QStringLiteral("%3") << QStringLiteral("n0") << size
                                             << QStringLiteral("--node n0: card %3 has no search tree");
        QTest::newRow("damaged tree") << project << QStringLiteral("%5") << QString() << size
                                      << QStringLiteral("%1/search/%5/tree.json");
        QTest::newRow("not a project") << QStringLiteral(".") << QString() << QString() << size
                                       << QStringLiteral("%1: not a Kernel Forge project (no project.json)");
        QTest::newRow("card without a project") << QString() << QStringLiteral("%2") << QString() << size
                                                << QStringLiteral("--card and --node need a PROJECT_DIR");
        QTest::newRow("too small") << project << QString() << QString() << QSize(40, 30)
                                   << QStringLiteral("--size 40x30: the window cannot be that small");
    }

    void badInputs()
    {
        QFETCH(QString, project);
        QFETCH(QString, card);
        QFETCH(QString, node);
        QFETCH(QSize, size);
        QFETCH(QString, error);
        const auto fill = [&](QString text) {
            const QString dir = project.isEmpty() ? QString() : QDir::cleanPath(m_dir.filePath(project));
            return text.replace(QStringLiteral("%1"), dir)
                .replace(QStringLiteral("%2"), m_rows[0])
                .replace(QStringLiteral("%3"), m_rows[1])
                .replace(QStringLiteral("%5"), m_rows[3]);
        };
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        ScreenshotRequest request;
        request.projectDir = project.isEmpty() ? QString() : QDir::cleanPath(m_dir.filePath(project));
        request.cardId = fill(card);
        request.nodeId = node;
        request.size = size;
        const ScreenshotOutcome outcome = kforge::app::prepareScreenshot(window, request);
        QCOMPARE(outcome.status, ScreenshotOutcome::Status::Failed);
        QVERIFY2(outcome.error.startsWith(fill(error)), qPrintable(outcome.error));
        QVERIFY(!outcome.error.contains(QLatin1Char('\n')));
    }

    void parsesSizes()
    {
        QCOMPARE(kforge::app::screenshotSizeFromText(QStringLiteral("1920x1080")),
                 std::optional<QSize>(QSize(1920, 1080)));
        for (const char* bad : {"1920", "1920x", "x1080", "0x100", "100x0", "-5x10", "20000x100", "1920X1080", ""})
            QVERIFY2(!kforge::app::screenshotSizeFromText(QString::fromLatin1(bad)), bad);
        QVERIFY(!kforge::app::screenshotPaneFromName(QStringLiteral("Tree")));
        QVERIFY(!kforge::app::screenshotPaneFromName(QStringLiteral("cards")));
    }

private:
    QTemporaryDir m_dir;
    QString m_project;
    QStringList m_rows; // card ids in the cards table's order
    QString m_fasterBest;
    int m_fasterNodes = 0;
    int m_slowerNodes = 0;
};

QTEST_MAIN(ScreenshotOptionsTest)
#include "ScreenshotOptionsTest.moc"
