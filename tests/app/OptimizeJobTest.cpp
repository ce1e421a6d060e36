// OptimizeJob (docs/gui.md, docs/search.md "A failed root"): a card whose root fails makes the job
// end with failed(), naming the card and why, without stopping the other cards; the next run
// retries that root and finishes. The search's snapshots reach the GUI thread coalesced: however
// many nodes are saved, at most one snapshot waits per card and deliveries come at most about ten
// times a second, the last one being the tree as saved. A synthetic proposer and evaluator stand in
// for the real ones (tests/core/search).

#include "app/OptimizeJob.h"

#include "FixtureProject.h"
#include "SearchTestSupport.h"

#include "model/SearchTreeJson.h"
#include "search/TreeStore.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <memory>
#include <vector>

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

using Snapshots = std::vector<std::shared_ptr<const kforge::core::SearchTree>>;

// An OptimizeJob over one fixture card in a fresh project folder, keeping every snapshot treeSaved()
// delivers and the time it came (ms of `clock`, started by the test).
struct WatchedJob {
    QTemporaryDir dir;
    kforge::core::OperatorCard card;
    QString cardId;
    Snapshots snapshots;
    QList<qint64> times;
    QElapsedTimer clock;
    OptimizeJob job; // last: joined before what its signals fill, and the folder, go

    explicit WatchedJob(std::size_t cardIndex)
        : card(kforge::app::test::makeFixtureProject().cards.at(cardIndex)), cardId(QString::fromStdString(card.id))
    {
        QObject::connect(&job, &OptimizeJob::treeSaved, &job,
                         [this](const QString& id, std::shared_ptr<const kforge::core::SearchTree> tree) {
                             QCOMPARE(id, cardId);
                             QVERIFY(tree);
                             snapshots.push_back(std::move(tree));
                             times << clock.elapsed();
                         });
    }

    // `iterations` nodes of a synthetic search, every candidate passing after `sleepMs`.
    bool start(int iterations, int sleepMs)
    {
        OptimizeJobRequest request;
        request.projectDir = dir.path();
        request.cards = {card};
        request.budget.maxIterations = iterations;
        request.makeProposer = [](const kforge::core::OperatorCard&) {
            return std::make_unique<kforge::core::test::SyntheticProposer>();
        };
        request.makeEvaluator =
            [sleepMs](const kforge::core::OperatorCard&) -> std::unique_ptr<kforge::core::Evaluator> {
            auto good = std::make_unique<kforge::core::test::SyntheticEvaluator>();
            good->neverFail = true;
            if (sleepMs > 0)
                good->sideEffect = [sleepMs](int) { QThread::msleep(static_cast<unsigned long>(sleepMs)); };
            return good;
        };
        return job.start(std::move(request));
    }

    kforge::core::TreeStore store() const
    {
        return kforge::core::TreeStore(kforge::core::TreeStore::defaultPath(dir.path().toStdString(), card.id));
    }
};

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

    void manyNodesSavedWhileTheGuiThreadIsBusyComeAsOneSnapshot()
    {
        // The GUI thread runs no event loop while the search saves 200 nodes: what waits for it is
        // one snapshot (each newer one replaced the older), not 200 copies of the tree.
        WatchedJob watched(0);
        QVERIFY(watched.dir.isValid());
        constexpr std::size_t kNodes = 200;
        int progressSignals = 0;
        connect(&watched.job, &OptimizeJob::progressChanged, this,
                [&](const OptimizeJob::Progress&) { ++progressSignals; });
        watched.clock.start();
        QVERIFY(watched.start(static_cast<int>(kNodes), 0));

        const kforge::core::TreeStore store = watched.store();
        for (;;) {
            QThread::msleep(20); // busy: no event is processed
            auto saved = store.load();
            if (saved.ok() && saved->size() == kNodes)
                break;
            QVERIFY2(watched.clock.elapsed() < 60000, "the search did not save its nodes within a minute");
        }
        const OptimizeJob& job = watched.job;
        const Snapshots& snapshots = watched.snapshots;
        QCOMPARE(snapshots.size(), std::size_t(0)); // queued to the GUI thread, never called on the search's
        QCOMPARE(progressSignals, 0);

        QTRY_VERIFY_WITH_TIMEOUT(!job.isRunning(), 20000);
        // One batch waited; the last node's snapshot may have been posted just after the file was
        // read above, and so come in a second one.
        QVERIFY2(snapshots.size() <= 2, qPrintable(QString::number(snapshots.size())));
        QVERIFY2(job.updateDeliveries() <= 3, qPrintable(QString::number(job.updateDeliveries())));
        QVERIFY(progressSignals >= 1 && progressSignals <= 3);
        // The last one is always delivered, before finished(), and it is the tree as saved.
        auto saved = store.load();
        QVERIFY(saved.ok());
        QCOMPARE(snapshots.back()->size(), kNodes);
        QVERIFY(kforge::core::toJson(*snapshots.back()) == kforge::core::toJson(saved.value()));
        QVERIFY(job.progress().cardId.isEmpty()); // the card's end came last
    }

    void snapshotsComeAtMostTenTimesASecondAndTheLastIsTheSavedTree()
    {
        // The event loop runs while 120 nodes are saved, 5 ms or more apart: each delivery carries
        // the newest snapshot, at least about 100 ms after the previous one.
        WatchedJob watched(1);
        QVERIFY(watched.dir.isValid());
        constexpr std::size_t kNodes = 120;
        OptimizeJob& job = watched.job;
        const Snapshots& snapshots = watched.snapshots;
        const QList<qint64>& times = watched.times;
        const QString& cardId = watched.cardId;
        QList<OptimizeJob::Progress> progress;
        connect(&job, &OptimizeJob::progressChanged, this, [&](const OptimizeJob::Progress& p) { progress << p; });
        QSignalSpy finished(&job, &OptimizeJob::finished);
        connect(&job, &OptimizeJob::finished, this, [&]() {
            // Everything was delivered before the end.
            QVERIFY(!snapshots.empty());
            QCOMPARE(snapshots.back()->size(), kNodes);
        });
        watched.clock.start();
        QVERIFY(watched.start(static_cast<int>(kNodes), 5));
        QTRY_VERIFY_WITH_TIMEOUT(!job.isRunning(), 60000);
        const qint64 elapsedMs = watched.clock.elapsed();
        QCOMPARE(finished.count(), 1);

        qInfo("%d nodes in %lld ms: %d snapshots, %d deliveries", static_cast<int>(kNodes),
              static_cast<long long>(elapsedMs), static_cast<int>(snapshots.size()), job.updateDeliveries());
        QVERIFY(snapshots.size() >= 2); // live: not only the last one
        QVERIFY2(snapshots.size() < kNodes / 2, qPrintable(QString::number(snapshots.size())));
        QVERIFY2(job.updateDeliveries() <= elapsedMs / 100 + 2, qPrintable(QString::number(job.updateDeliveries())));
        // About 100 ms apart (a coarse timer may fire up to 5 % early); only the final flush at the
        // job's end may come sooner.
        for (int i = 1; i + 1 < times.size(); ++i)
            QVERIFY2(times[i] - times[i - 1] >= 90,
                     qPrintable(QStringLiteral("%1 ms between deliveries %2 and %3")
                                    .arg(times[i] - times[i - 1])
                                    .arg(i - 1)
                                    .arg(i)));
        // The tree only grows from one snapshot to the next, and the last one is the file's tree.
        for (std::size_t i = 1; i < snapshots.size(); ++i)
            QVERIFY(snapshots[i]->size() > snapshots[i - 1]->size());
        auto saved = watched.store().load();
        QVERIFY(saved.ok());
        QCOMPARE(saved->size(), kNodes);
        QVERIFY(kforge::core::toJson(*snapshots.back()) == kforge::core::toJson(saved.value()));

        // Progress came the same way: the card with its growing iteration and best speedup, then
        // its end (no card).
        QVERIFY(progress.size() >= 2);
        QCOMPARE(progress.front().cardId, cardId);
        QCOMPARE(progress.front().cardCount, 1);
        const OptimizeJob::Progress& lastOfCard = progress.at(progress.size() - 2);
        QCOMPARE(lastOfCard.cardId, cardId);
        QVERIFY(lastOfCard.iteration > 0 && lastOfCard.iteration <= static_cast<int>(kNodes));
        QVERIFY(lastOfCard.bestSpeedup > 0);
        QVERIFY(progress.back().cardId.isEmpty());
    }
};

QTEST_GUILESS_MAIN(OptimizeJobTest)
#include "OptimizeJobTest.moc"
