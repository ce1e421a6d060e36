// LatencySeriesModel: best so far on a known tree against a hand computation, monotone and equal to
// a brute-force minimum on random trees, failures never counted as best (even carrying a latency),
// failures marked per iteration, cumulative LLM tokens and USD (unknown prices flagged), the eager
// baseline (nodes' median vs the card's value), several runs, the table under
// QAbstractItemModelTester.

#include "models/LatencySeriesModel.h"
#include "SearchTreeTestSupport.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

#include <cmath>
#include <limits>

using kforge::app::LatencySeries;
using kforge::app::LatencySeriesModel;
using kforge::app::LatencyXAxis;
using kforge::app::NamedRun;
namespace core = kforge::core;
namespace test = kforge::test;
using core::NodeStatus;

namespace {

core::Provenance llm(qint64 in, qint64 out, double usd, bool priced)
{
    core::Provenance p;
    p.kind = core::ProvenanceKind::Llm;
    p.provider = "openai";
    p.model = "gpt-test";
    p.details = {{"input_tokens", in}, {"output_tokens", out}, {"cost_usd", usd}, {"cost_known", priced}, {"turns", 1}};
    return p;
}

std::string addLlmChild(core::SearchTree& tree, const std::string& parent, const core::Provenance& provenance,
                        const core::Evaluation& evaluation)
{
    const std::string id =
        test::must(tree.addChild(parent, test::candidate(parent + ".llm"), provenance, 1700000000000));
    test::must(tree.recordEvaluation(id, evaluation));
    return id;
}

// iteration  node  made by               result                 best  tokens  USD
//   0        n0    root                  passed 40 (eager 50)    40      0    0
//   1        n1    built-in              passed 45 (eager 50)    40      0    0
//   2        n2    llm 100+50, $0.01     passed 30 (eager 52)    30    150    0.01
//   3        n3    llm 200+100, $0.02    failed compile          30    450    0.03
//   4        n4    llm 300+100, unpriced passed 25 (eager 48)    25    850    0.03 (unknown)
//   5        n5    built-in              compiled only           25    850
//   6        n6    built-in              pending                 25    850
core::SearchTree knownTree()
{
    core::SearchTree tree("card-k", 7);
    test::addRoot(tree, test::passed(40.0));
    test::addChild(tree, "n0", "unroll-2", test::passed(45.0));
    addLlmChild(tree, "n0", llm(100, 50, 0.01, true), test::passed(30.0, 52.0));
    addLlmChild(tree, "n2", llm(200, 100, 0.02, true), test::failed(NodeStatus::FailedCompile, "error"));
    addLlmChild(tree, "n2", llm(300, 100, 0.0, false), test::passed(25.0, 48.0));
    test::addChild(tree, "n4", "fast-math", test::compiledOnly());
    test::addChild(tree, "n4", "block-256");
    return tree;
}

QList<double> bests(const LatencySeries& s)
{
    QList<double> out;
    for (const auto& p : s.points)
        out.append(p.bestUs);
    return out;
}

} // namespace

class LatencySeriesModelTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void runsByProposerSplitsBuiltInFromEachLlm()
    {
        core::SearchTree tree("card", 1);
        const std::string root = kforge::test::addRoot(tree, kforge::test::passed(40.0));
        kforge::test::addChild(tree, root, "vector-width 4->8", kforge::test::passed(30.0));
        core::Provenance llm;
        llm.kind = core::ProvenanceKind::Llm;
        llm.provider = "openai";
        llm.model = "gpt-x";
        std::string parent = root;
        for (double us : {35.0, 20.0}) {
            parent = tree.addChild(parent, kforge::test::candidate("llm" + std::to_string(us)), llm, 1).value();
            QVERIFY(tree.recordEvaluation(parent, kforge::test::passed(us)).ok());
        }
        const std::string failed = tree.addChild(root, kforge::test::candidate("llm-bad"), llm, 1).value();
        QVERIFY(tree.recordEvaluation(failed, kforge::test::failed(NodeStatus::FailedCompile, "x")).ok());

        const QList<NamedRun> runs = LatencySeriesModel::runsByProposer(tree);
        QCOMPARE(runs.size(), 2);
        QCOMPARE(runs[0].name, QStringLiteral("built-in"));
        QCOMPARE(runs[1].name, QStringLiteral("openai gpt-x"));
        // Each run's own best-so-far over its own candidates: the LLM's ends at 20 us after 3,
        // the built-in's at 30 us after 2.
        const LatencySeries builtin = LatencySeriesModel::computeSeries(runs[0].name, runs[0].tree, runs[0].proposer);
        const LatencySeries model = LatencySeriesModel::computeSeries(runs[1].name, runs[1].tree, runs[1].proposer);
        QCOMPARE(builtin.points.size(), 2);
        QCOMPARE(model.points.size(), 3);
        QCOMPARE(model.points.last().iteration, 2);
        QCOMPARE(builtin.points.last().bestUs, 30.0);
        QCOMPARE(model.points.last().bestUs, 20.0);
        QCOMPARE(model.points.last().status, NodeStatus::FailedCompile);

        core::SearchTree single("card", 1);
        kforge::test::addRoot(single, kforge::test::passed(40.0));
        QCOMPARE(LatencySeriesModel::runsByProposer(single).size(), 1);
    }

    void knownTreeMatchesHandComputation()
    {
        const LatencySeries s = LatencySeriesModel::computeSeries(QStringLiteral("llm"), knownTree());
        QCOMPARE(s.name, QStringLiteral("llm"));
        QCOMPARE(s.cardId, QStringLiteral("card-k"));
        QCOMPARE(s.points.size(), 7);
        QCOMPARE(bests(s), (QList<double>{40, 40, 30, 30, 25, 25, 25}));
        const QStringList bestIds{QStringLiteral("n0"), QStringLiteral("n0"), QStringLiteral("n2"),
                                  QStringLiteral("n2"), QStringLiteral("n4"), QStringLiteral("n4"),
                                  QStringLiteral("n4")};
        for (int i = 0; i < 7; ++i) {
            QCOMPARE(s.points[i].iteration, i);
            QCOMPARE(s.points[i].nodeId, QStringLiteral("n%1").arg(i));
            QCOMPARE(s.points[i].bestNodeId, bestIds[i]);
        }
        QVERIFY(std::isnan(s.points[3].medianUs));
        QCOMPARE(s.points[2].medianUs, 30.0);
        QCOMPARE(s.failedIterations, (QVector<int>{3}));
        QCOMPARE(s.eagerUs, 50.0); // median of 50, 50, 52, 48
        QCOMPARE(s.finalBestUs(), 25.0);

        // The staircase: an extra point at the same x where the best drops.
        QCOMPARE(s.bestCurve(LatencyXAxis::Iteration),
                 (QList<QPointF>{{0, 40}, {1, 40}, {2, 40}, {2, 30}, {3, 30}, {4, 30}, {4, 25}, {5, 25}, {6, 25}}));
        QCOMPARE(s.failureMarks(LatencyXAxis::Iteration, 50.0), (QList<QPointF>{{3, 30}}));
        QCOMPARE(s.failureMarks(LatencyXAxis::Tokens, 50.0), (QList<QPointF>{{450, 30}}));
    }

    void costAccumulates()
    {
        const LatencySeries s = LatencySeriesModel::computeSeries(QStringLiteral("llm"), knownTree());
        const QList<qint64> tokens{0, 0, 150, 450, 850, 850, 850};
        const QList<qint64> input{0, 0, 100, 300, 600, 600, 600};
        const QList<double> usd{0, 0, 0.01, 0.03, 0.03, 0.03, 0.03};
        const QList<bool> known{true, true, true, true, false, false, false};
        for (int i = 0; i < 7; ++i) {
            QCOMPARE(s.points[i].cumulativeTokens(), tokens[i]);
            QCOMPARE(s.points[i].cumulativeInputTokens, input[i]);
            QVERIFY2(std::fabs(s.points[i].cumulativeCostUsd - usd[i]) < 1e-12, qPrintable(QString::number(i)));
            QCOMPARE(s.points[i].costKnown, known[i]);
        }
        QCOMPARE(s.totalTokens(), qint64(850));
        QVERIFY(!s.costKnown());
        const QList<QPointF> byUsd = s.bestCurve(LatencyXAxis::CostUsd);
        QCOMPARE(byUsd.size(), 9);
        QCOMPARE(byUsd.first(), QPointF(0, 40));
        QVERIFY(qFuzzyCompare(byUsd.last().x(), 0.03));
        QCOMPARE(byUsd.last().y(), 25.0);
    }

    void failuresNeverCountAsBest()
    {
        // A tree file may carry a latency on a failed node (e.g. timed before validation failed):
        // it must not become the best, however fast.
        core::SearchTree tree = knownTree();
        std::vector<core::SearchNode> nodes = tree.nodes();
        nodes[3].latency = core::LatencyStats{1.0, 0.9, 1.1};
        nodes[5].latency = core::LatencyStats{2.0, 1.9, 2.1}; // compiled only
        tree.setNodesUnchecked(std::move(nodes));
        const LatencySeries s = LatencySeriesModel::computeSeries(QString(), tree);
        QCOMPARE(bests(s), (QList<double>{40, 40, 30, 30, 25, 25, 25}));
    }

    void monotoneAndBruteForceOnRandomTrees()
    {
        for (std::uint32_t seed : {1u, 2u, 3u}) {
            const core::SearchTree tree = test::randomTree("card-r", 400, seed);
            const LatencySeries s = LatencySeriesModel::computeSeries(QStringLiteral("r"), tree);
            QCOMPARE(s.points.size(), 400);
            double previous = std::numeric_limits<double>::infinity();
            int failures = 0;
            for (int i = 0; i < 400; ++i) {
                double expected = std::numeric_limits<double>::infinity();
                for (const core::SearchNode& n : tree.nodes()) {
                    if (n.iteration <= i && n.status == NodeStatus::Passed)
                        expected = std::min(expected, n.latency->medianUs);
                }
                QCOMPARE(s.points[i].bestUs, expected);
                QVERIFY(s.points[i].bestUs <= previous);
                previous = s.points[i].bestUs;
                if (core::isFailure(tree.nodes()[i].status)) {
                    QCOMPARE(s.failedIterations[failures], i);
                    ++failures;
                }
            }
            QCOMPARE(s.failedIterations.size(), failures);
            QVERIFY(failures > 0);
            const QList<QPointF> curve = s.bestCurve(LatencyXAxis::Iteration);
            for (qsizetype k = 1; k < curve.size(); ++k) {
                QVERIFY(curve[k].x() >= curve[k - 1].x());
                QVERIFY(curve[k].y() <= curve[k - 1].y());
            }
        }
    }

    void noPassedNodeGivesNoCurve()
    {
        core::SearchTree tree("card-f", 1);
        test::addRoot(tree, test::failed(NodeStatus::FailedCompile, "bad"));
        const LatencySeries s = LatencySeriesModel::computeSeries(QString(), tree);
        QCOMPARE(s.points.size(), 1);
        QVERIFY(std::isnan(s.finalBestUs()));
        QVERIFY(s.bestCurve(LatencyXAxis::Iteration).isEmpty());
        QVERIFY(std::isnan(s.eagerUs));
        QCOMPARE(s.failureMarks(LatencyXAxis::Iteration, 20.0), (QList<QPointF>{{0, 20}}));
        QVERIFY(s.failureMarks(LatencyXAxis::Iteration, std::numeric_limits<double>::quiet_NaN()).isEmpty());
        QVERIFY(std::isnan(LatencySeriesModel::computeSeries(QString(), core::SearchTree()).finalBestUs()));
    }

    void modelRunsTableAndBaseline()
    {
        LatencySeriesModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy changed(&model, &LatencySeriesModel::seriesChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);

        QVERIFY(std::isnan(model.eagerBaselineUs()));
        model.setTree(knownTree());
        QCOMPARE(changed.size(), 1);
        QCOMPARE(reset.size(), 1);
        QCOMPARE(model.runCount(), 1);
        QCOMPARE(model.series().first().name, QStringLiteral("best so far"));
        QCOMPARE(model.rowCount(), 7);
        QCOMPARE(model.columnCount(), int(LatencySeriesModel::ColumnCount));
        QCOMPARE(model.index(4, LatencySeriesModel::BestColumn).data(LatencySeriesModel::ValueRole).toDouble(), 25.0);
        QCOMPARE(model.index(3, LatencySeriesModel::TokensColumn).data(LatencySeriesModel::ValueRole).toLongLong(),
                 450);
        QVERIFY(!model.index(3, LatencySeriesModel::MedianColumn).data(LatencySeriesModel::ValueRole).isValid());
        QCOMPARE(model.index(4, LatencySeriesModel::BestColumn).data().toString(), QStringLiteral("25.0 µs"));
        QVERIFY(model.index(4, LatencySeriesModel::CostColumn).data().toString().contains(QStringLiteral("unknown")));
        QCOMPARE(model.eagerBaselineUs(), 50.0);

        // Two runs of the same card: rows run after run, each its own series; the baseline is the
        // median over both runs' eager times unless the card's value is given.
        core::SearchTree builtin("card-k", 9);
        test::addRoot(builtin, test::passed(40.0, 60.0));
        test::addChild(builtin, "n0", "unroll-2", test::passed(35.0, 60.0));
        model.setRuns({NamedRun{QStringLiteral("built-in"), builtin}, NamedRun{QStringLiteral("openai"), knownTree()}});
        QCOMPARE(changed.size(), 2);
        QCOMPARE(model.runCount(), 2);
        QCOMPARE(model.series().size(), 2);
        QCOMPARE(model.series()[0].name, QStringLiteral("built-in"));
        QCOMPARE(model.series()[0].finalBestUs(), 35.0);
        QCOMPARE(model.series()[1].finalBestUs(), 25.0);
        QCOMPARE(model.rowCount(), 9);
        QCOMPARE(model.index(1, LatencySeriesModel::RunColumn).data().toString(), QStringLiteral("built-in"));
        QCOMPARE(model.index(2, LatencySeriesModel::RunColumn).data().toString(), QStringLiteral("openai"));
        QCOMPARE(model.index(2, 0).data(LatencySeriesModel::RunIndexRole).toInt(), 1);
        QCOMPARE(model.index(2, LatencySeriesModel::NodeColumn).data().toString(), QStringLiteral("n0"));
        QCOMPARE(model.eagerBaselineUs(), 51.0); // median of 60, 60, 50, 50, 52, 48

        model.setEagerBaselineUs(44.0);
        QCOMPARE(changed.size(), 3);
        QCOMPARE(model.eagerBaselineUs(), 44.0);
        model.setEagerBaselineUs(std::nullopt);
        QCOMPARE(model.eagerBaselineUs(), 51.0);

        model.clear();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.runCount(), 0);
        QVERIFY(std::isnan(model.eagerBaselineUs()));
    }

    void medianHelper()
    {
        QVERIFY(std::isnan(LatencySeriesModel::median({})));
        QCOMPARE(LatencySeriesModel::median({3.0}), 3.0);
        QCOMPARE(LatencySeriesModel::median({5.0, 1.0, 3.0}), 3.0);
        QCOMPARE(LatencySeriesModel::median({4.0, 1.0, 3.0, 2.0}), 2.5);
    }
};

QTEST_GUILESS_MAIN(LatencySeriesModelTest)
#include "LatencySeriesModelTest.moc"
