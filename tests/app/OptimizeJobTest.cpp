// OptimizeJob's outcome (docs/gui.md, docs/search.md "A failed root"): a card whose root fails
// makes the job end with failed(), naming the card and why, without stopping the other cards; the
// next run retries that root and finishes. A synthetic proposer and evaluator stand in for the real
// ones (tests/core/search).

#include "app/OptimizeJob.h"

#include "FixtureProject.h"
#include "SearchTestSupport.h"

#include "search/TreeStore.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using kforge::app::OptimizeJob;
using kforge::app::OptimizeJobRequest;

namespace {

// An evaluator whose every candidate crashes, as when the worker cannot start.
struct BrokenEvaluator : kforge::core::test::SyntheticEvaluator {
    kforge::core::Result<kforge::core::Evaluation> evaluate(const kforge::core::Candidate&,
                                                            const std::atomic<bool>&) override
    {
        kforge::core::Evaluation e;
        e.status = kforge::core::NodeStatus::Crashed;
        e.failureReason = "cannot start worker '/nonexistent/kforge-worker': no such file";
        return e;
    }
};

std::unique_ptr<kforge::core::Evaluator> brokenEvaluator()
{
    return std::make_unique<BrokenEvaluator>();
}

} // namespace

class OptimizeJobTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void aFailedRootFailsTheJobAndTheNextRunRetriesIt()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const kforge::core::Project project = kforge::app::test::makeFixtureProject();
        const kforge::core::OperatorCard& broken = project.cards.at(0);
        const kforge::core::OperatorCard& fine = project.cards.at(1);
        OptimizeJobRequest request;
        request.projectDir = dir.path();
        request.cards = {broken, fine};
        request.budget.maxIterations = 4;
        request.makeProposer = [](const kforge::core::OperatorCard&) {
            return std::make_unique<kforge::core::test::SyntheticProposer>();
        };
        const std::string brokenId = broken.id;
        request.makeEvaluator =
            [brokenId](const kforge::core::OperatorCard& card) -> std::unique_ptr<kforge::core::Evaluator> {
            if (card.id == brokenId)
                return brokenEvaluator();
            auto good = std::make_unique<kforge::core::test::SyntheticEvaluator>();
            good->neverFail = true;
            return good;
        };

        OptimizeJob job;
        QSignalSpy failed(&job, &OptimizeJob::failed);
        QSignalSpy finished(&job, &OptimizeJob::finished);
        QVERIFY(job.start(request));
        QTRY_VERIFY_WITH_TIMEOUT(!job.isRunning(), 20000);
        QCOMPARE(finished.count(), 0);
        QCOMPARE(failed.count(), 1);
        const QString error = failed.at(0).at(0).toString();
        const QString brokenName = QString::fromStdString(broken.id.substr(0, 8));
        QVERIFY2(error.contains(QStringLiteral("1 of 2 cards failed: ") + brokenName), qPrintable(error));
        QVERIFY2(
            error.contains(QStringLiteral("the root n0 is crashed: cannot start worker '/nonexistent/kforge-worker'")),
            qPrintable(error));
        // The other card was searched regardless.
        auto other =
            kforge::core::TreeStore(kforge::core::TreeStore::defaultPath(dir.path().toStdString(), fine.id)).load();
        QVERIFY(other.ok());
        QCOMPARE(other->size(), std::size_t(4));

        // The next run retries the failed root (with a worker that works now) and finishes.
        request.cards = {broken};
        request.makeEvaluator = [](const kforge::core::OperatorCard&) -> std::unique_ptr<kforge::core::Evaluator> {
            auto good = std::make_unique<kforge::core::test::SyntheticEvaluator>();
            good->neverFail = true;
            return good;
        };
        QVERIFY(job.start(request));
        QTRY_VERIFY_WITH_TIMEOUT(!job.isRunning(), 20000);
        QCOMPARE(failed.count(), 1);
        QCOMPARE(finished.count(), 1);
        const QString summary = finished.at(0).at(0).toString();
        QVERIFY2(summary.contains(QStringLiteral("retrying the root")), qPrintable(summary));
        auto retried =
            kforge::core::TreeStore(kforge::core::TreeStore::defaultPath(dir.path().toStdString(), broken.id)).load();
        QVERIFY(retried.ok());
        QCOMPARE(retried->size(), std::size_t(4));
        QCOMPARE(retried->rootAttempts().size(), std::size_t(1));
    }
};

QTEST_GUILESS_MAIN(OptimizeJobTest)
#include "OptimizeJobTest.moc"
