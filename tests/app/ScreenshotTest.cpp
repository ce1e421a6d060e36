// Renders the main window over a real capture (the transformer test model, captured on this
// machine's CPU), checks that what was rendered is the real window, and saves it: into the build
// tree, or with KFORGE_UPDATE_SCREENSHOTS=1 into docs/screenshots/main-window.png of the source tree
// (the picture the docs show). No numbers in it are made up.

#include "app/AppLauncher.h"
#include "app/MainWindow.h"
#include "app/OptimizeJob.h"
#include "capture/CaptureJob.h"
#include "models/SearchSettings.h"
#include "models/Session.h"
#include "views/cards/CardDetailsPane.h"
#include "views/cards/CardsPane.h"
#include "views/editor/KernelEditorPane.h"
#include "views/tree/TreeGraphView.h"

#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QMenuBar>
#include <QSet>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

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

} // namespace

class ScreenshotTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rendersTheMainWindowIntoTheDocs()
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
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QVERIFY(window.openProject(project));
        // A real search on the softmax card: the built-in proposer, NVRTC, and the worker, which
        // on a machine without a GPU makes every node compile-only.
        QString softmax;
        for (const kforge::core::OperatorCard& card : captured->project.cards)
            if (card.qualifiedName() == "aten::softmax.int")
                softmax = QString::fromStdString(card.id);
        QVERIFY(!softmax.isEmpty());
        kforge::app::SearchSettings settings;
        settings.iterations = 12;
        window.setSearchSettings(settings);
        window.session()->setCurrentCardId(softmax);
        QVERIFY(window.startOptimize({softmax}));
        QTRY_VERIFY_WITH_TIMEOUT(!window.optimizeJob()->isRunning(), 240000);
        QTRY_COMPARE_WITH_TIMEOUT(window.treeView()->nodeCount(), 12, 30000);
        window.session()->setCurrentNodeId(QStringLiteral("n3"));
        QCOMPARE(window.kernelEditor()->nodeId(), QStringLiteral("n3"));
        const QImage image = kforge::app::renderScreenshot(window);
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

        // The docs' picture is refreshed on request only (KFORGE_UPDATE_SCREENSHOTS=1); a plain
        // test run writes into the build tree and never touches a tracked file.
        const bool update = qEnvironmentVariable("KFORGE_UPDATE_SCREENSHOTS") == QStringLiteral("1");
        const QString png = update ? QStringLiteral(KFORGE_SOURCE_DIR "/docs/screenshots/main-window.png")
                                   : QStringLiteral(KFORGE_BINARY_DIR "/screenshots/main-window.png");
        QVERIFY(QDir().mkpath(QFileInfo(png).absolutePath()));
        QVERIFY(image.save(png, "PNG"));
        QImage reloaded(png);
        QCOMPARE(reloaded.size(), image.size());
        QCOMPARE(reloaded.convertToFormat(QImage::Format_RGB32), image.convertToFormat(QImage::Format_RGB32));
    }
};

QTEST_MAIN(ScreenshotTest)
#include "ScreenshotTest.moc"
