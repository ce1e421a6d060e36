// CaptureJobRunner and the main window's capture flow on a real TorchScript model, on the CPU:
// the capture runs off the GUI thread, reports progress, can be cancelled, and its project opens.

#include "app/CaptureJobRunner.h"
#include "app/MainWindow.h"
#include "models/CardsTableModel.h"
#include "models/Session.h"
#include "project/ProjectStore.h"
#include "views/cards/CardsPane.h"
#include "views/status/JobStatusWidget.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <set>

using kforge::app::CaptureJobRunner;
using kforge::app::MainWindow;
namespace core = kforge::core;

namespace {

constexpr int kCaptureTimeoutMs = 180000;

QString modelPath(const char* name)
{
    return QStringLiteral(KFORGE_TEST_MODELS_DIR "/") + QString::fromLatin1(name);
}

core::CaptureOptions convGnOptions(const QString& outputDir)
{
    core::CaptureOptions options;
    options.modelPath = QFile::encodeName(modelPath("conv_gn_block.pt")).toStdString();
    options.inputs = {"2x3x16x16"};
    options.outputDir = QFile::encodeName(outputDir).toStdString();
    options.device = "cpu";
    options.samplesPerCard = 1;
    return options;
}

} // namespace

class CaptureJobRunnerTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFile::exists(modelPath("conv_gn_block.pt")), "run the make_test_models test first (ctest fixture)");
        QVERIFY(m_dir.isValid());
    }

    void capturesOffTheGuiThread()
    {
        CaptureJobRunner runner;
        QSignalSpy succeeded(&runner, &CaptureJobRunner::succeeded);
        QSignalSpy failed(&runner, &CaptureJobRunner::failed);
        QStringList phases;
        connect(&runner, &CaptureJobRunner::progressChanged, this,
                [&](const QString& phase, int, int) { phases << phase; });
        int ticks = 0;
        QTimer ticker;
        connect(&ticker, &QTimer::timeout, this, [&]() { ++ticks; });
        ticker.start(5);

        const QString out = m_dir.filePath(QStringLiteral("conv_gn"));
        QVERIFY(runner.start(convGnOptions(out)));
        QVERIFY(runner.isRunning());
        QVERIFY(!runner.start(convGnOptions(m_dir.filePath(QStringLiteral("second"))))); // one at a time
        QVERIFY(succeeded.wait(kCaptureTimeoutMs));
        QVERIFY(failed.isEmpty());
        QVERIFY(!runner.isRunning());
        QVERIFY2(ticks > 0, "the GUI event loop did not run during the capture");
        QVERIFY(!phases.isEmpty());
        QCOMPARE(phases.front(), QStringLiteral("starting"));

        const auto report = succeeded.front().at(0).value<std::shared_ptr<const core::CaptureReport>>();
        QVERIFY(report);
        QCOMPARE(succeeded.front().at(1).toString(), out);
        std::set<std::string> ops;
        for (const core::OperatorCard& card : report->project.cards)
            ops.insert(card.op);
        QVERIFY2(ops.count("aten::group_norm") == 1, "group_norm was not carded");
        QVERIFY2(ops.count("aten::relu") == 1, "relu was not carded");
        QCOMPARE(report->project.capture.device, std::string("cpu"));
        auto reopened = core::openProject(QFile::encodeName(out).toStdString());
        QVERIFY(reopened.ok());
        QVERIFY(reopened.value() == report->project);
        QVERIFY(!QDir(m_dir.filePath(QStringLiteral("second"))).exists());
    }

    void cancelLeavesNoProject()
    {
        CaptureJobRunner runner;
        QSignalSpy failed(&runner, &CaptureJobRunner::failed);
        QSignalSpy succeeded(&runner, &CaptureJobRunner::succeeded);
        const QString out = m_dir.filePath(QStringLiteral("cancelled"));
        QVERIFY(runner.start(convGnOptions(out)));
        runner.cancel();
        QVERIFY(runner.isCancelling());
        QVERIFY(failed.wait(kCaptureTimeoutMs));
        QVERIFY(succeeded.isEmpty());
        QCOMPARE(failed.front().at(1).toBool(), true);
        QVERIFY(failed.front().at(0).toString().contains(QStringLiteral("cancelled")));
        QVERIFY(!QDir(out).exists());
    }

    void destroyingARunningJobStopsItAndLeavesNoProject()
    {
        const QString out = m_dir.filePath(QStringLiteral("destroyed"));
        {
            CaptureJobRunner runner;
            QVERIFY(runner.start(convGnOptions(out)));
        }
        QVERIFY(!QDir(out).exists());
        QVERIFY(QDir(m_dir.path()).entryList({QStringLiteral(".*destroyed*")}, QDir::Dirs | QDir::Hidden).isEmpty());
    }

    void aBadModelFailsWithOneLine()
    {
        CaptureJobRunner runner;
        QSignalSpy failed(&runner, &CaptureJobRunner::failed);
        core::CaptureOptions options = convGnOptions(m_dir.filePath(QStringLiteral("garbage")));
        options.modelPath = QFile::encodeName(modelPath("garbage.pt")).toStdString();
        QVERIFY(runner.start(options));
        QVERIFY(failed.wait(kCaptureTimeoutMs));
        QCOMPARE(failed.front().at(1).toBool(), false);
        const QString error = failed.front().at(0).toString();
        QVERIFY2(error.contains(QStringLiteral("garbage.pt")) && !error.contains(QLatin1Char('\n')), qPrintable(error));
    }

    void theMainWindowOpensWhatItCaptured()
    {
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QStringList errors;
        window.setErrorReporter([&](const QString&, const QString& message) { errors << message; });
        QSignalSpy succeeded(window.captureRunner(), &CaptureJobRunner::succeeded);
        const QString out = m_dir.filePath(QStringLiteral("from_window"));
        QAction* openModel = window.findChild<QAction*>(QStringLiteral("actionOpenModel"));

        QVERIFY(window.startCapture(convGnOptions(out)));
        QVERIFY(window.jobStatus()->isJobVisible());
        QVERIFY(window.jobStatus()->labelText().startsWith(QStringLiteral("Capturing conv_gn_block.pt")));
        QVERIFY(!openModel->isEnabled());
        QVERIFY(!window.startCapture(convGnOptions(m_dir.filePath(QStringLiteral("other")))));
        QCOMPARE(errors.size(), 1);

        QVERIFY(succeeded.wait(kCaptureTimeoutMs));
        QVERIFY(!window.jobStatus()->isJobVisible());
        QVERIFY2(window.jobStatus()->labelText().startsWith(QStringLiteral("Captured ")),
                 qPrintable(window.jobStatus()->labelText()));
        QVERIFY(openModel->isEnabled());
        QCOMPARE(window.session()->projectDir(), out);
        const int cards = window.cardsPane()->tableView()->model()->rowCount();
        QVERIFY(cards >= 4);
        QVERIFY(window.jobStatus()->labelText().contains(QString::number(cards)));
        QCOMPARE(window.recentProjects().entries().front(), out);
        QCOMPARE(errors.size(), 1);
    }

    void aCaptureNoteStaysWithItsSummary()
    {
        // A budget too small for every sample: the note that says so stays in the job label (and
        // its tooltip) until the next job, instead of a status message that times out.
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QSignalSpy succeeded(window.captureRunner(), &CaptureJobRunner::succeeded);
        core::CaptureOptions options = convGnOptions(m_dir.filePath(QStringLiteral("small_budget")));
        options.sampleBudgetBytes = 4096;
        QVERIFY(window.startCapture(options));
        QVERIFY(succeeded.wait(kCaptureTimeoutMs));
        const QString label = window.jobStatus()->labelText();
        QVERIFY2(label.startsWith(QStringLiteral("Captured ")), qPrintable(label));
        QVERIFY2(label.contains(QStringLiteral("; note: the sample budget")), qPrintable(label));
        QVERIFY2(label.contains(QStringLiteral("--sample-budget-mb")), qPrintable(label));
        QVERIFY2(label.contains(QStringLiteral("; note: captured on CPU")), qPrintable(label));
    }

    void theStatusBarCancelButtonStopsTheCapture()
    {
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QStringList errors;
        window.setErrorReporter([&](const QString&, const QString& message) { errors << message; });
        QSignalSpy failed(window.captureRunner(), &CaptureJobRunner::failed);
        const QString out = m_dir.filePath(QStringLiteral("cancelled_in_window"));
        QVERIFY(window.startCapture(convGnOptions(out)));
        auto* cancel = window.findChild<QPushButton*>(QStringLiteral("jobCancel"));
        QVERIFY(cancel);
        QTest::mouseClick(cancel, Qt::LeftButton);
        QVERIFY(!cancel->isEnabled());
        QVERIFY(failed.wait(kCaptureTimeoutMs));
        QCOMPARE(window.jobStatus()->labelText(), QStringLiteral("Capture cancelled"));
        QVERIFY(errors.isEmpty()); // the user asked for it: no error dialog
        QVERIFY(!window.session()->hasProject());
        QVERIFY(!QDir(out).exists());
    }

    void aFailedCaptureIsReported()
    {
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QStringList errors;
        window.setErrorReporter([&](const QString&, const QString& message) { errors << message; });
        QSignalSpy failed(window.captureRunner(), &CaptureJobRunner::failed);
        core::CaptureOptions options = convGnOptions(m_dir.filePath(QStringLiteral("bad_inputs")));
        options.inputs = {"2x5x16x16"}; // conv expects 3 channels
        QVERIFY(window.startCapture(options));
        QVERIFY(failed.wait(kCaptureTimeoutMs));
        QCOMPARE(errors.size(), 1);
        QCOMPARE(window.jobStatus()->labelText(), QStringLiteral("Capture failed"));
        QVERIFY(!window.session()->hasProject());
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(CaptureJobRunnerTest)
#include "CaptureJobRunnerTest.moc"
