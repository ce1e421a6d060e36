// LatencyChartsPane offscreen: the progress chart after setTree (staircase points, eager baseline,
// failure marks, log latency axis), two runs overlaid as two lines, the x-axis toggle (combo and
// setXAxis) plotting against cumulative tokens/USD, the selected node's box (and its parent's),
// the per-card speedup bars, live re-feeding keeping the node shown, 5,000-node runs timed.

#include "views/charts/LatencyChartsPane.h"
#include "SearchTreeTestSupport.h"
#include "model/NodeRanking.h"
#include "models/SearchTreeModel.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QBoxPlotSeries>
#include <QBoxSet>
#include <QChart>
#include <QComboBox>
#include <QElapsedTimer>
#include <QHorizontalStackedBarSeries>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPixmap>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTest>
#include <QValueAxis>

using kforge::app::LatencyXAxis;
using kforge::app::NamedRun;
using kforge::views::LatencyChartsPane;
namespace core = kforge::core;
namespace test = kforge::test;
using core::NodeStatus;

namespace {

core::Provenance llm(qint64 in, qint64 out, double usd)
{
    core::Provenance p;
    p.kind = core::ProvenanceKind::Llm;
    p.provider = "anthropic";
    p.model = "claude-test";
    p.details = {{"input_tokens", in}, {"output_tokens", out}, {"cost_usd", usd}, {"cost_known", true}};
    return p;
}

std::string addLlmChild(core::SearchTree& tree, const std::string& parent, qint64 in, qint64 out, double usd,
                        const core::Evaluation& evaluation)
{
    const std::string id =
        test::must(tree.addChild(parent, test::candidate(parent + ".llm"), llm(in, out, usd), 1700000000000));
    test::must(tree.recordEvaluation(id, evaluation));
    return id;
}

// n0 root passed 40 | n1 llm 1000 tok $0.01 passed 30 | n2 llm 1000 tok $0.01 failed | n3 llm 2000 tok $0.02 passed 20
// (eager 50 everywhere)
core::SearchTree llmTree()
{
    core::SearchTree tree("card-x", 3);
    test::addRoot(tree, test::passed(40.0));
    addLlmChild(tree, "n0", 600, 400, 0.01, test::passed(30.0));
    addLlmChild(tree, "n1", 700, 300, 0.01, test::failed(NodeStatus::FailedValidation, "wrong"));
    addLlmChild(tree, "n1", 1500, 500, 0.02, test::passed(20.0));
    return tree;
}

// n0 passed 40 | n1 passed 35 | n2 failed compile | n3 passed 36 (all built-in, eager 50)
core::SearchTree builtinTree()
{
    core::SearchTree tree("card-x", 4);
    test::addRoot(tree, test::passed(40.0));
    test::addChild(tree, "n0", "unroll-2", test::passed(35.0));
    test::addChild(tree, "n1", "smem-tile", test::failed(NodeStatus::FailedCompile, "error"));
    test::addChild(tree, "n1", "block-256", test::passed(36.0));
    return tree;
}

template <typename T>
QList<T*> seriesOf(QChart* chart)
{
    QList<T*> out;
    const QList<QAbstractSeries*> all = chart->series();
    for (QAbstractSeries* s : all) {
        // QScatterSeries derives from QXYSeries, not QLineSeries: the casts do not overlap.
        if (auto* typed = qobject_cast<T*>(s))
            out.append(typed);
    }
    return out;
}

QLineSeries* lineNamed(QChart* chart, const QString& prefix)
{
    for (QLineSeries* s : seriesOf<QLineSeries>(chart)) {
        if (s->name().startsWith(prefix))
            return s;
    }
    return nullptr;
}

template <typename T>
T* axisOf(QChart* chart, Qt::Orientation orientation)
{
    const QList<QAbstractAxis*> axes = chart->axes(orientation);
    return axes.isEmpty() ? nullptr : qobject_cast<T*>(axes.first());
}

} // namespace

class LatencyChartsPaneTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void progressChartAfterSetTree()
    {
        LatencyChartsPane pane;
        pane.resize(900, 700);
        pane.show();
        QVERIFY(QTest::qWaitForWindowExposed(&pane));
        QChart* chart = pane.progressChart();
        QVERIFY(chart->series().isEmpty());

        pane.setTree(builtinTree());
        QLineSeries* best = lineNamed(chart, QStringLiteral("best so far"));
        QVERIFY(best);
        // (0,40) (1,40) (1,35) (2,35) (3,35): the failure at 2 and the slower n3 change nothing.
        QCOMPARE(best->points(), (QList<QPointF>{{0, 40}, {1, 40}, {1, 35}, {2, 35}, {3, 35}}));
        QLineSeries* eager = lineNamed(chart, QStringLiteral("eager"));
        QVERIFY(eager);
        QCOMPARE(eager->points(), (QList<QPointF>{{0, 50}, {3, 50}}));
        QCOMPARE(eager->pen().style(), Qt::DashLine);
        const QList<QScatterSeries*> failures = seriesOf<QScatterSeries>(chart);
        QCOMPARE(failures.size(), 1);
        QCOMPARE(failures.first()->points(), (QList<QPointF>{{2, 35}}));

        auto* y = axisOf<QLogValueAxis>(chart, Qt::Vertical);
        QVERIFY(y);
        QVERIFY(y->min() < 35 && y->max() > 50);
        auto* x = axisOf<QValueAxis>(chart, Qt::Horizontal);
        QVERIFY(x);
        QCOMPARE(x->min(), 0.0);
        QCOMPARE(x->max(), 3.0);
        QVERIFY(chart->title().contains(QStringLiteral("card-x")));

        // The card's eager value replaces the nodes' median.
        pane.setEagerBaselineUs(45.0);
        QCOMPARE(lineNamed(chart, QStringLiteral("eager"))->points(), (QList<QPointF>{{0, 45}, {3, 45}}));

        pane.clear();
        QVERIFY(chart->series().isEmpty());
        QCOMPARE(chart->axes().size(), 2); // the axes stay; only the series go
    }

    void overlayOfTwoRunsGivesTwoLines()
    {
        LatencyChartsPane pane;
        pane.setRuns({NamedRun{QStringLiteral("built-in"), builtinTree()},
                      NamedRun{QStringLiteral("anthropic/claude-test"), llmTree()}});
        QChart* chart = pane.progressChart();
        QLineSeries* builtin = lineNamed(chart, QStringLiteral("built-in"));
        QLineSeries* llmLine = lineNamed(chart, QStringLiteral("anthropic/claude-test"));
        QVERIFY(builtin && llmLine);
        QVERIFY(builtin != llmLine);
        QCOMPARE(seriesOf<QLineSeries>(chart).size(), 3); // two runs + eager
        QCOMPARE(seriesOf<QScatterSeries>(chart).size(), 2);
        QCOMPARE(llmLine->points(), (QList<QPointF>{{0, 40}, {1, 40}, {1, 30}, {2, 30}, {3, 30}, {3, 20}}));
        QCOMPARE(builtin->points().last(), QPointF(3, 35));
        QCOMPARE(pane.seriesModel()->runCount(), 2);
    }

    void costAxisToggle()
    {
        LatencyChartsPane pane;
        pane.setRuns({NamedRun{QStringLiteral("built-in"), builtinTree()},
                      NamedRun{QStringLiteral("anthropic/claude-test"), llmTree()}});
        QChart* chart = pane.progressChart();
        QSignalSpy spy(&pane, &LatencyChartsPane::xAxisChanged);
        auto* combo = pane.findChild<QComboBox*>(QStringLiteral("latencyXAxisCombo"));
        QVERIFY(combo);
        QCOMPARE(pane.xAxis(), LatencyXAxis::Iteration);

        // The user picks tokens in the combo.
        combo->setCurrentIndex(combo->findData(static_cast<int>(LatencyXAxis::Tokens)));
        QCOMPARE(pane.xAxis(), LatencyXAxis::Tokens);
        QCOMPARE(spy.size(), 1);
        QLineSeries* llmLine = lineNamed(chart, QStringLiteral("anthropic/claude-test"));
        QVERIFY(llmLine);
        QCOMPARE(llmLine->points(),
                 (QList<QPointF>{{0, 40}, {1000, 40}, {1000, 30}, {2000, 30}, {4000, 30}, {4000, 20}}));
        QCOMPARE(seriesOf<QScatterSeries>(chart)[1]->points(), (QList<QPointF>{{2000, 30}}));
        // The built-in run made no LLM calls: all its points sit at 0, and the note says so.
        for (const QPointF& p : lineNamed(chart, QStringLiteral("built-in"))->points())
            QCOMPARE(p.x(), 0.0);
        auto* note = pane.findChild<QLabel*>(QStringLiteral("latencyChartsNote"));
        QVERIFY(note && note->text().contains(QStringLiteral("built-in made no LLM calls")));
        auto* x = axisOf<QValueAxis>(chart, Qt::Horizontal);
        QVERIFY(x && x->titleText().contains(QStringLiteral("tokens")));
        QVERIFY(x->max() >= 4000.0 && x->max() < 5000.0);
        QCOMPARE(x->min(), 0.0);
        // The baseline spans the whole axis.
        QCOMPARE(lineNamed(chart, QStringLiteral("eager"))->points().last().x(), x->max());

        // USD through the API: the combo follows.
        pane.setXAxis(LatencyXAxis::CostUsd);
        QCOMPARE(spy.size(), 2);
        QCOMPARE(spy.last().first().value<LatencyXAxis>(), LatencyXAxis::CostUsd);
        QCOMPARE(combo->currentData().toInt(), static_cast<int>(LatencyXAxis::CostUsd));
        const QList<QPointF> usd = lineNamed(chart, QStringLiteral("anthropic/claude-test"))->points();
        QCOMPARE(usd.size(), 6);
        QVERIFY(qFuzzyCompare(usd.last().x(), 0.04));
        QCOMPARE(usd.last().y(), 20.0);
        QVERIFY(axisOf<QValueAxis>(chart, Qt::Horizontal)->titleText().contains(QStringLiteral("USD")));

        pane.setXAxis(LatencyXAxis::CostUsd); // no change, no signal
        QCOMPARE(spy.size(), 2);
        pane.setXAxis(LatencyXAxis::Iteration);
        QCOMPARE(lineNamed(chart, QStringLiteral("anthropic/claude-test"))->points().last(), QPointF(3, 20));
    }

    void nodeSpread()
    {
        LatencyChartsPane pane;
        QChart* chart = pane.nodeChart();
        pane.setTree(builtinTree());
        pane.showNode(QStringLiteral("n3"));
        QCOMPARE(pane.shownNodeId(), QStringLiteral("n3"));
        QList<QBoxPlotSeries*> boxes = seriesOf<QBoxPlotSeries>(chart);
        QCOMPARE(boxes.size(), 1);
        // The parent n1 (35 us) beside the node n3 (36 us); test::passed puts q1 at 0.97 and q3 at
        // 1.04 of the median.
        QCOMPARE(boxes.first()->count(), 2);
        QBoxSet* parent = boxes.first()->boxSets()[0];
        QBoxSet* node = boxes.first()->boxSets()[1];
        QCOMPARE(parent->label(), QStringLiteral("n1 (parent)"));
        QCOMPARE(node->label(), QStringLiteral("n3"));
        QCOMPARE(node->at(QBoxSet::Median), 36.0);
        QCOMPARE(node->at(QBoxSet::LowerQuartile), 36.0 * 0.97);
        QCOMPARE(node->at(QBoxSet::UpperQuartile), 36.0 * 1.04);
        QCOMPARE(parent->at(QBoxSet::Median), 35.0);
        QVERIFY(chart->title().contains(QStringLiteral("n3")));

        // The root has no parent: one box.
        pane.showNode(QStringLiteral("n0"));
        boxes = seriesOf<QBoxPlotSeries>(chart);
        QCOMPARE(boxes.size(), 1);
        QCOMPARE(boxes.first()->count(), 1);
        QCOMPARE(boxes.first()->boxSets()[0]->at(QBoxSet::Median), 40.0);

        // A failed node has nothing to show, and says why.
        pane.showNode(QStringLiteral("n2"));
        QVERIFY(seriesOf<QBoxPlotSeries>(chart).isEmpty());
        QVERIFY(chart->title().contains(QStringLiteral("compile failed")));

        // Re-feeding a newer snapshot (a live run) keeps the node shown.
        pane.showNode(QStringLiteral("n1"));
        core::SearchTree grown = builtinTree();
        test::addChild(grown, "n3", "fast-math", test::passed(30.0));
        pane.setTree(grown);
        QCOMPARE(pane.shownNodeId(), QStringLiteral("n1"));
        QCOMPARE(seriesOf<QBoxPlotSeries>(chart).first()->boxSets().last()->at(QBoxSet::Median), 35.0);
        QCOMPARE(lineNamed(pane.progressChart(), QStringLiteral("best so far"))->points().last(), QPointF(4, 30));

        pane.showNode(QStringLiteral("n99"));
        QVERIFY(seriesOf<QBoxPlotSeries>(chart).isEmpty());
        pane.showNode(QString());
        QVERIFY(seriesOf<QBoxPlotSeries>(chart).isEmpty());
    }

    void anyNodeAsTheBaseline()
    {
        LatencyChartsPane pane;
        QChart* chart = pane.nodeChart();
        pane.setTree(builtinTree());
        pane.showNode(QStringLiteral("n3")); // 36 us; its parent n1 35 us, the root n0 40 us
        pane.setBaselineNode(QStringLiteral("n0"));
        QList<QBoxSet*> boxes = seriesOf<QBoxPlotSeries>(chart).first()->boxSets();
        QCOMPARE(boxes.size(), 2);
        QCOMPARE(boxes[0]->label(), QStringLiteral("n0 (baseline)"));
        QCOMPARE(boxes[0]->at(QBoxSet::Median), 40.0);
        QCOMPARE(boxes[1]->label(), QStringLiteral("n3"));
        // 40 / 36 = 1.11x, as the cards table writes a speedup.
        const QString ratio = kforge::app::SearchTreeModel::speedupText(40.0 / 36.0);
        QVERIFY2(chart->title().contains(ratio + QStringLiteral(" vs n0 (medians)")), qPrintable(chart->title()));
        QCOMPARE(core::medianSpeedupOver(*builtinTree().find("n3"), *builtinTree().find("n0")).value(), 40.0 / 36.0);

        // The baseline stays while other nodes are shown; the baseline itself shows its parent.
        pane.showNode(QStringLiteral("n1"));
        QCOMPARE(seriesOf<QBoxPlotSeries>(chart).first()->boxSets()[0]->label(), QStringLiteral("n0 (baseline)"));
        pane.showNode(QStringLiteral("n0"));
        QCOMPARE(seriesOf<QBoxPlotSeries>(chart).first()->count(), 1);
        // An unmeasured baseline (a failed node) or none: the parent again.
        pane.showNode(QStringLiteral("n3"));
        pane.setBaselineNode(QStringLiteral("n2"));
        QCOMPARE(seriesOf<QBoxPlotSeries>(chart).first()->boxSets()[0]->label(), QStringLiteral("n1 (parent)"));
        pane.setBaselineNode(QString());
        QCOMPARE(seriesOf<QBoxPlotSeries>(chart).first()->boxSets()[0]->label(), QStringLiteral("n1 (parent)"));
        QVERIFY(!chart->title().contains(QStringLiteral("medians")));
    }

    void speedupBars()
    {
        LatencyChartsPane pane;
        pane.resize(900, 700);
        pane.show();
        QVERIFY(QTest::qWaitForWindowExposed(&pane));
        QChart* chart = pane.speedupChart();
        QVERIFY(chart->series().isEmpty());
        pane.setCardSpeedups({{QStringLiteral("aten::add"), 1.5},
                              {QStringLiteral("aten::softmax"), 0.8},
                              {QStringLiteral("aten::add"), 2.5}});
        const QList<QHorizontalStackedBarSeries*> bars = seriesOf<QHorizontalStackedBarSeries>(chart);
        QCOMPARE(bars.size(), 1);
        QCOMPARE(bars.first()->count(), 2);
        QBarSet* faster = bars.first()->barSets()[0];
        QBarSet* slower = bars.first()->barSets()[1];
        // Bottom-up: the last card first. Duplicate labels are made unique.
        auto* categories = axisOf<QBarCategoryAxis>(chart, Qt::Vertical);
        QVERIFY(categories);
        QCOMPARE(categories->categories(),
                 (QStringList{QStringLiteral("aten::add"), QStringLiteral("aten::softmax"),
                              QStringLiteral("aten::add (2)")}));
        QCOMPARE(faster->count(), 3);
        QCOMPARE(faster->at(0), 2.5);
        QCOMPARE(faster->at(1), 0.0);
        QCOMPARE(faster->at(2), 1.5);
        QCOMPARE(slower->at(0), 0.0);
        QCOMPARE(slower->at(1), 0.8);
        QCOMPARE(slower->at(2), 0.0);
        auto* x = axisOf<QValueAxis>(chart, Qt::Horizontal);
        QVERIFY(x && x->max() >= 2.5);

        // Speedups are per model: clearing the card's charts keeps them.
        pane.clear();
        QCOMPARE(seriesOf<QHorizontalStackedBarSeries>(chart).size(), 1);
        pane.setCardSpeedups({});
        QVERIFY(chart->series().isEmpty());
    }

    void largeTreesStayFast()
    {
        // Two 5,000-node runs: feeding and drawing take tens of milliseconds; showing a node (what a
        // click in the tree does) stays far below the 100 ms the app allows for a selection.
        LatencyChartsPane pane;
        pane.resize(1000, 800);
        pane.show();
        QVERIFY(QTest::qWaitForWindowExposed(&pane));
        const core::SearchTree a = test::randomTree("card-big", 5000, 11);
        const core::SearchTree b = test::randomTree("card-big", 5000, 12);
        QElapsedTimer timer;
        timer.start();
        pane.setRuns({NamedRun{QStringLiteral("a"), a}, NamedRun{QStringLiteral("b"), b}});
        pane.setCardSpeedups({{QStringLiteral("aten::add"), 1.5}, {QStringLiteral("aten::mm"), 0.9}});
        QCoreApplication::processEvents(); // the charts lay out their items from the event loop
        const QPixmap first = pane.grab();
        const qint64 feedMs = timer.restart();
        QString measured;
        for (std::size_t k = 4000; k < a.size() && measured.isEmpty(); ++k) {
            const core::SearchNode& n = a.nodes()[k];
            if (n.latency && a.find(*n.parentId)->latency)
                measured = QString::fromStdString(n.id);
        }
        QVERIFY(!measured.isEmpty());
        pane.showNode(measured);
        QCoreApplication::processEvents();
        const QPixmap second = pane.grab();
        const qint64 nodeMs = timer.elapsed();
        qInfo("5,000-node runs x2: feed + draw %lld ms; showNode + draw %lld ms", feedMs, nodeMs);
        QVERIFY(!first.isNull() && !second.isNull());
        QCOMPARE(seriesOf<QBoxPlotSeries>(pane.nodeChart()).first()->count(), 2);
        QVERIFY2(nodeMs < 100, qPrintable(QString::number(nodeMs)));
        if (const QByteArray out = qgetenv("KFORGE_CHARTS_PNG"); !out.isEmpty())
            second.save(QString::fromLocal8Bit(out));
    }
};

QTEST_MAIN(LatencyChartsPaneTest)
#include "LatencyChartsPaneTest.moc"
