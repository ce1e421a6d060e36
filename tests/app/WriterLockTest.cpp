// The app's writing jobs and the project's writer lock: an Optimize run holds it while it runs, and
// an Optimize run or a benchmarked edit that finds it held fails with one line naming the holder
// (shown in an error dialog by the main window), writing nothing.

#include "FixtureProject.h"
#include "SearchTestSupport.h"
#include "app/MainWindow.h"
#include "app/ManualEditJob.h"
#include "app/OptimizeJob.h"

#include "project/ProjectLock.h"
#include "search/TreeStore.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <filesystem>

using kforge::app::MainWindow;
using kforge::app::OptimizeJob;
using kforge::app::OptimizeJobRequest;
using kforge::core::ProjectLock;

namespace {

// A synthetic search (tests/core/search): no worker, no GPU; each candidate takes `msPerCandidate`.
void useSyntheticSearch(OptimizeJobRequest& request, int iterations, int msPerCandidate = 0)
{
    request.budget.maxIterations = iterations;
    request.makeProposer = [](const kforge::core::OperatorCard&) {
        return std::make_unique<kforge::core::test::SyntheticProposer>();
    };
    request.makeEvaluator = [msPerCandidate](const kforge::core::OperatorCard&) {
        auto evaluator = std::make_unique<kforge::core::test::SyntheticEvaluator>();
        if (msPerCandidate > 0)
            evaluator->sideEffect = [msPerCandidate](int) {
                QThread::msleep(static_cast<unsigned long>(msPerCandidate));
            };
        return evaluator;
    };
}

} // namespace

class WriterLockTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init()
    {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
        m_project = m_dir->filePath(QStringLiteral("project"));
        QVERIFY(kforge::app::test::writeFixtureProject(m_project));
        m_card = kforge::app::test::makeFixtureProject().cards.front();
        m_treeFile = kforge::core::TreeStore::defaultPath(m_project.toStdString(), m_card.id);
    }

    void optimizeFailsNamingTheHolderAndWritesNothing()
    {
        auto other = ProjectLock::acquire(m_project.toStdString(), "optimize"); // another writer
        QVERIFY(other.ok());
        OptimizeJob job;
        QSignalSpy failed(&job, &OptimizeJob::failed);
        QSignalSpy finished(&job, &OptimizeJob::finished);
        OptimizeJobRequest request;
        request.projectDir = m_project;
        request.cards = {m_card};
        useSyntheticSearch(request, 3);
        QVERIFY(job.start(request));
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
        QCOMPARE(finished.count(), 0);
        const QString error = failed.at(0).at(0).toString();
        QVERIFY2(error.startsWith(m_project + QStringLiteral(": is being changed by another job of this program (")),
                 qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral(" optimize, since ")), qPrintable(error));
        QVERIFY(!std::filesystem::exists(m_treeFile));

        other->release();
        QVERIFY(job.start(request));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
        auto saved = kforge::core::TreeStore(m_treeFile).load();
        QVERIFY(saved.ok());
        QCOMPARE(saved->size(), std::size_t(3));
    }

    void optimizeHoldsTheLockWhileItRuns()
    {
        OptimizeJob job;
        QSignalSpy finished(&job, &OptimizeJob::finished);
        OptimizeJobRequest request;
        request.projectDir = m_project;
        request.cards = {m_card};
        useSyntheticSearch(request, 10000, 20);
        QVERIFY(job.start(request));
        QTRY_VERIFY_WITH_TIMEOUT(std::filesystem::exists(m_treeFile), 10000);
        auto refused = ProjectLock::acquire(m_project.toStdString(), "optimize");
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("is being changed by") == 0, refused.error().message.c_str());
        job.stop();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
        QVERIFY(ProjectLock::acquire(m_project.toStdString(), "optimize").ok());
    }

    void benchmarkedEditFailsNamingTheHolder()
    {
        auto other = ProjectLock::acquire(m_project.toStdString(), "optimize");
        QVERIFY(other.ok());
        kforge::app::ManualEditJob job;
        QSignalSpy failed(&job, &kforge::app::ManualEditJob::failed);
        kforge::app::ManualEditRequest request;
        request.projectDir = m_project;
        request.card = m_card;
        request.parentNodeId = QStringLiteral("0");
        request.source = QStringLiteral("extern \"C\" __global__ void k() {}\n");
        QVERIFY(job.start(request));
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
        const QString error = failed.at(0).at(0).toString();
        QVERIFY2(error.contains(QStringLiteral("is being changed by another job of this program")), qPrintable(error));
        QVERIFY(!std::filesystem::exists(m_treeFile));
    }

    void mainWindowReportsTheHolderInAnErrorDialog()
    {
        auto other = ProjectLock::acquire(m_project.toStdString(), "optimize");
        QVERIFY(other.ok());
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QStringList titles;
        QStringList messages;
        window.setErrorReporter([&](const QString& title, const QString& message) {
            titles << title;
            messages << message;
        });
        window.setOptimizeCustomizer([](OptimizeJobRequest& request) { useSyntheticSearch(request, 3); });
        QVERIFY(window.openProject(m_project));
        QVERIFY(window.startOptimize({QString::fromStdString(m_card.id)}));
        QTRY_VERIFY_WITH_TIMEOUT(!window.optimizeJob()->isRunning(), 10000);
        QTRY_COMPARE(messages.size(), 1);
        QCOMPARE(titles.at(0), QStringLiteral("Optimize"));
        QVERIFY2(messages.at(0).contains(QStringLiteral("is being changed by another job of this program")),
                 qPrintable(messages.at(0)));
        QVERIFY(!std::filesystem::exists(m_treeFile));
    }

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_project;
    kforge::core::OperatorCard m_card;
    std::filesystem::path m_treeFile;
};

QTEST_MAIN(WriterLockTest)
#include "WriterLockTest.moc"
