// One "best" and one speedup in every front end (model/NodeRanking.h): on a card whose fastest
// node is slower than its eager (0.98x) while a slower node beats its own eager (1.021x), the cards
// table, the tree model's best badge, the tree view, the latency charts and `kforge tree` (the real
// executable) all name the same node with the same speedup, and the table's eager column shows the
// eager time that speedup was measured against, not the capture's.

#include "FixtureProject.h"
#include "models/CardSearchSummary.h"
#include "models/CardsTableModel.h"
#include "models/LatencySeriesModel.h"
#include "models/SearchTreeModel.h"
#include "search/TreeStore.h"
#include "views/tree/TreeGraphView.h"

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <memory>
#include <tuple>
#include <vector>

namespace core = kforge::core;
using kforge::app::CardsTableModel;
using kforge::app::LatencySeriesModel;
using kforge::app::SearchTreeModel;

namespace {

// A passed evaluation as the bench reports it on an H200: both medians of one interleaved timing
// and the paired speedup (the median of the per-repetition ratios).
core::Evaluation timed(double candidateUs, double eagerUs, double paired)
{
    const nlohmann::json document = {
        {"status", "passed"},
        {"worker", {{"gpu", {{"gpu", "NVIDIA H200"}, {"architecture", "sm_90"}}}}},
        {"evaluation",
         {{"status", "passed"},
          {"timing",
           {{"method", "cupti kernel activity, L2 flushed"},
            {"candidate", {{"median_us", candidateUs}, {"q1_us", candidateUs}, {"q3_us", candidateUs}}},
            {"eager", {{"median_us", eagerUs}, {"q1_us", eagerUs}, {"q3_us", eagerUs}}},
            {"speedup", paired}}}}}};
    core::Evaluation e;
    e.latency = core::LatencyStats{candidateUs, candidateUs, candidateUs};
    e.eagerUs = eagerUs;
    e.report = core::EvaluationReport::fromJson(document);
    return e;
}

// n0 20.00 us (0.93x), n1 15.98 us against an eager of 15.70 (0.98x: the lowest median, slower
// than eager), n2 16.40 us against 16.80 (1.021x: the best).
core::SearchTree contradictingTree(const std::string& cardId)
{
    core::SearchTree tree(cardId, 1);
    const std::string root = tree.addRoot({"k", nlohmann::json::object()}, {}, 1700000000000).value();
    if (!tree.recordEvaluation(root, timed(20.00, 18.60, 0.93)))
        qFatal("cannot record n0");
    for (const auto& [us, eager, paired] :
         std::vector<std::tuple<double, double, double>>{{15.98, 15.70, 0.98}, {16.40, 16.80, 1.021}}) {
        core::Provenance made;
        made.kind = core::ProvenanceKind::BuiltinTransformation;
        made.transformation = "vector-width-4";
        const std::string id =
            tree.addChild(root, {"k." + std::to_string(us), nlohmann::json::object()}, made, 1700000000000).value();
        if (!tree.recordEvaluation(id, timed(us, eager, paired)))
            qFatal("cannot record a child");
    }
    return tree;
}

} // namespace

class BestNodeAgreementTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyFrontEndNamesTheSameBestAndSpeedup()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(kforge::app::test::writeFixtureProject(dir.path()));
        const auto project = std::make_shared<const core::Project>(kforge::app::test::makeFixtureProject());
        const core::OperatorCard& card = project->cards.front();
        QVERIFY(card.eager.has_value()); // the capture's eager, which the table must not pair with the speedup
        const core::SearchTree tree = contradictingTree(card.id);
        const std::filesystem::path projectDir = QFile::encodeName(dir.path()).toStdString();
        QVERIFY(core::TreeStore(core::TreeStore::defaultPath(projectDir, card.id)).save(tree).ok());

        // The CLI: the real executable, its table and its best line.
        QProcess cli;
        cli.start(QStringLiteral(KFORGE_EXE),
                  {QStringLiteral("tree"), dir.path(), QStringLiteral("--card"), QString::fromStdString(card.id)});
        QVERIFY(cli.waitForFinished(60000));
        const QString out = QString::fromUtf8(cli.readAllStandardOutput());
        QCOMPARE(cli.exitCode(), 0);
        const QRegularExpressionMatch bestLine =
            QRegularExpression(QStringLiteral("^best on NVIDIA H200: (n\\d+) ([0-9.]+)x$"),
                               QRegularExpression::MultilineOption)
                .match(out);
        QVERIFY2(bestLine.hasMatch(), qPrintable(out));
        const QString cliBest = bestLine.captured(1);
        const double cliSpeedup = bestLine.captured(2).toDouble();
        QCOMPARE(cliBest, QStringLiteral("n2"));
        QVERIFY2(
            out.contains(QRegularExpression(QStringLiteral("^n1 .* 0\\.980x "), QRegularExpression::MultilineOption)),
            qPrintable(out));

        // The cards table (from the tree file, as the main window reads it).
        CardsTableModel table;
        table.setProject(project);
        table.setSearchSummaries(kforge::app::summarizeSearches(projectDir, *project));
        const auto cell = [&](int column) { return table.index(0, column).data().toString(); };
        QCOMPARE(cell(CardsTableModel::SpeedupColumn), QString::number(cliSpeedup, 'f', 2) + QLatin1Char('x'));
        QCOMPARE(cell(CardsTableModel::BestColumn), QStringLiteral("16.40"));
        QCOMPARE(cell(CardsTableModel::EagerColumn), QStringLiteral("16.80")); // n2's eager, not the capture's
        QVERIFY(cell(CardsTableModel::EagerColumn) != QString::number(card.eager->medianUs, 'f', 2));
        QVERIFY(table.index(0, CardsTableModel::EagerColumn).data(Qt::ToolTipRole).toString().contains(cliBest));
        QVERIFY(!table.headerData(CardsTableModel::EagerColumn, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());

        // The tree model's badge and speedup column.
        SearchTreeModel model;
        model.setTree(tree);
        const QModelIndex best = model.indexOfNode(cliBest);
        QVERIFY(best.data(SearchTreeModel::IsBestRole).toBool());
        QVERIFY(!model.indexOfNode(QStringLiteral("n1")).data(SearchTreeModel::IsBestRole).toBool());
        QCOMPARE(model.indexOfNode(cliBest, SearchTreeModel::SpeedupColumn).data().toString(),
                 SearchTreeModel::speedupText(cliSpeedup));

        // The tree view's badge and label.
        kforge::views::TreeGraphView view;
        view.setTree(tree);
        QCOMPARE(view.bestNodeId(), cliBest);
        QVERIFY(view.nodeLabel(cliBest).endsWith(SearchTreeModel::speedupText(cliSpeedup)));

        // The charts: best so far ends on the same node.
        const auto series = LatencySeriesModel::computeSeries(QStringLiteral("run"), tree);
        QCOMPARE(series.points.last().bestNodeId, cliBest);
        QCOMPARE(series.points.last().bestUs, 16.40);
    }
};

QTEST_MAIN(BestNodeAgreementTest)
#include "BestNodeAgreementTest.moc"
