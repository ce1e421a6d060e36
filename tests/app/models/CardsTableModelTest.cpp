// CardsTableModel: structure under QAbstractItemModelTester, every column's text, numeric sorting.

#include "models/CardsTableModel.h"
#include "SearchTreeTestSupport.h"
#include "models/CardSearchSummary.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTest>

using kforge::app::CardSearchStatus;
using kforge::app::CardSearchSummary;

using kforge::app::CardsTableModel;
namespace core = kforge::core;

namespace {

core::ArgSpec tensorArg(const std::string& name, std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides)
{
    core::ArgSpec arg;
    arg.name = name;
    arg.type = "Tensor";
    arg.kind = core::ArgKind::Tensor;
    arg.tensors = {core::TensorSpec{"float16", std::move(sizes), std::move(strides), "cuda:0"}};
    return arg;
}

core::OperatorCard card(const std::string& op, const std::string& overload, std::vector<core::ArgSpec> args, int calls,
                        double medianUs, double share)
{
    core::OperatorCard c;
    c.op = op;
    c.overload = overload;
    c.args = std::move(args);
    c.key = core::variantKey(op, overload, c.args);
    c.id = core::cardIdForKey(c.key);
    c.callCount = calls;
    for (int i = 0; i < calls; ++i)
        c.callPositions.push_back(i);
    if (medianUs > 0)
        c.eager =
            core::EagerTiming{"cuda:0 (NVIDIA H200)", "cuda-events, L2 flushed", medianUs, medianUs, medianUs, 10};
    c.timeShare = share;
    return c;
}

// Three cards whose project order, share order and eager order all differ.
std::shared_ptr<const core::Project> threeCards()
{
    auto project = std::make_shared<core::Project>();
    core::ArgSpec dim;
    dim.name = "dim";
    dim.type = "int";
    dim.kind = core::ArgKind::Value;
    dim.value = -1;
    core::OperatorCard softmax = card("aten::softmax", "int", {tensorArg("self", {4, 64}, {64, 1}), dim}, 3, 2.0, 0.3);
    softmax.samples = {core::SampleRef{0, "samples/a.pt", 512}, core::SampleRef{1, "samples/b.pt", 512}};
    core::OperatorCard mm =
        card("aten::mm", "", {tensorArg("self", {64, 32}, {1, 64}), tensorArg("mat2", {32, 8}, {8, 1})}, 1, 14.0, 0.7);
    mm.vendorBacked = true;
    core::OperatorCard dropout = card("aten::bernoulli_", "float", {tensorArg("self", {4, 64}, {64, 1})}, 12, 0, 0.0);
    dropout.eagerNote = "argument 'generator' is opaque";
    project->cards = {softmax, mm, dropout};
    return project;
}

QString text(const QAbstractItemModel& model, int row, int column, int role = Qt::DisplayRole)
{
    return model.data(model.index(row, column), role).toString();
}

} // namespace

class CardsTableModelTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void searchColumnsShowBestSpeedupAndStatus()
    {
        CardsTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto project = threeCards();
        model.setProject(project);
        // Before any summary: not started, except the vendor-backed card which the search skips.
        QCOMPARE(text(model, 0, CardsTableModel::StatusColumn), QStringLiteral("not started"));
        QCOMPARE(text(model, 1, CardsTableModel::StatusColumn), QStringLiteral("skipped (vendor)"));
        QCOMPARE(text(model, 0, CardsTableModel::BestColumn), QStringLiteral("-"));

        QHash<QString, CardSearchSummary> summaries;
        CardSearchSummary improved;
        improved.status = CardSearchStatus::Improved;
        improved.bestUs = 1.25;
        improved.speedup = 1.6;
        summaries.insert(QString::fromStdString(project->cards[0].id), improved);
        CardSearchSummary flat;
        flat.status = CardSearchStatus::NoGain;
        summaries.insert(QString::fromStdString(project->cards[2].id), flat);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.setSearchSummaries(summaries);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(text(model, 0, CardsTableModel::BestColumn), QStringLiteral("1.25"));
        QCOMPARE(text(model, 0, CardsTableModel::SpeedupColumn), QStringLiteral("1.60x"));
        QCOMPARE(text(model, 0, CardsTableModel::StatusColumn), QStringLiteral("improved"));
        QCOMPARE(text(model, 2, CardsTableModel::StatusColumn), QStringLiteral("no gain"));
        QCOMPARE(model.data(model.index(2, CardsTableModel::SpeedupColumn), CardsTableModel::SortRole).toDouble(),
                 -1.0);

        model.setSearchingCard(QString::fromStdString(project->cards[2].id));
        QCOMPARE(text(model, 2, CardsTableModel::StatusColumn), QStringLiteral("searching"));
        model.setSearchingCard(QString());
        QCOMPARE(text(model, 2, CardsTableModel::StatusColumn), QStringLiteral("no gain"));
    }

    // The card's status says what happened to its search: "compiled only" only for candidates
    // compiled without a GPU, "no sample" when nothing could be validated, else "failed".
    void summaryStatusSaysWhatHappened()
    {
        using kforge::app::summarizeTree;
        using kforge::test::addChild;
        using kforge::test::addRoot;
        using kforge::test::failed;
        core::SearchTree failedTree; // a failed root is never revised: the tree ends there
        addRoot(failedTree, failed(core::NodeStatus::FailedValidation, "max abs error 3"));
        QCOMPARE(summarizeTree(failedTree).status, CardSearchStatus::Failed);
        QCOMPARE(kforge::app::cardSearchStatusText(CardSearchStatus::Failed), QStringLiteral("failed"));

        core::SearchTree noSample;
        addRoot(noSample, failed(core::NodeStatus::NoSample, "the card has no captured sample"));
        QCOMPARE(summarizeTree(noSample).status, CardSearchStatus::NoSample);
        QCOMPARE(kforge::app::cardSearchStatusText(CardSearchStatus::NoSample), QStringLiteral("no sample"));

        core::SearchTree compiled;
        addRoot(compiled, kforge::test::compiledOnly());
        QCOMPARE(summarizeTree(compiled).status, CardSearchStatus::CompiledOnly);

        // Validated on a GPU without timing (a validate-only evaluation) is not "compiled only".
        core::SearchTree validated;
        core::Evaluation untimed;
        untimed.status = core::NodeStatus::ValidatedOnly;
        addRoot(validated, untimed);
        QCOMPARE(summarizeTree(validated).status, CardSearchStatus::ValidatedOnly);
        QCOMPARE(kforge::app::cardSearchStatusText(CardSearchStatus::ValidatedOnly),
                 QStringLiteral("validated, not timed"));

        QCOMPARE(summarizeTree(noSample).reason, QStringLiteral("the card has no captured sample"));

        // A card the proposer does not cover shows the reason as the status's tooltip.
        CardsTableModel model;
        const auto project = threeCards();
        model.setProject(project);
        CardSearchSummary uncovered;
        uncovered.status = CardSearchStatus::NotCovered;
        uncovered.reason = QStringLiteral("no built-in family for aten::bernoulli_");
        model.setSearchSummaries({{QString::fromStdString(project->cards[2].id), uncovered}});
        QCOMPARE(text(model, 2, CardsTableModel::StatusColumn), QStringLiteral("not covered"));
        QCOMPARE(text(model, 2, CardsTableModel::StatusColumn, Qt::ToolTipRole), uncovered.reason);
        QCOMPARE(text(model, 0, CardsTableModel::StatusColumn, Qt::ToolTipRole), QString());
        CardSearchSummary view;
        view.status = CardSearchStatus::NothingToRun;
        view.reason = QStringLiteral("no kernel to run: its output is a view of an input or the input itself");
        model.setSearchSummaries({{QString::fromStdString(project->cards[2].id), view}});
        QCOMPARE(text(model, 2, CardsTableModel::StatusColumn), QStringLiteral("no kernel to run"));
        QCOMPARE(text(model, 2, CardsTableModel::StatusColumn, Qt::ToolTipRole), view.reason);

        core::SearchTree measured;
        const std::string fast = addRoot(measured, kforge::test::passed(40.0, 50.0));
        addChild(measured, fast, "unroll-2", failed(core::NodeStatus::NoSample, "no sample"));
        QCOMPARE(summarizeTree(measured).status, CardSearchStatus::Improved);
    }

    void emptyModelHasNoRows()
    {
        CardsTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.columnCount(), int(CardsTableModel::ColumnCount));
        QCOMPARE(model.headerData(CardsTableModel::ShareColumn, Qt::Horizontal).toString(), QStringLiteral("Share %"));
    }

    void everyColumnShowsTheCard()
    {
        CardsTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        const auto project = threeCards();
        model.setProject(project);
        QCOMPARE(resets.count(), 1);
        QCOMPARE(model.rowCount(), 3);

        const QString softmaxId = QString::fromStdString(project->cards[0].id);
        QCOMPARE(softmaxId.size(), 16);
        QCOMPARE(text(model, 0, CardsTableModel::IdColumn), softmaxId.left(8));
        QCOMPARE(text(model, 0, CardsTableModel::IdColumn, Qt::ToolTipRole), softmaxId);
        QCOMPARE(text(model, 2, CardsTableModel::OpColumn, CardsTableModel::CardIdRole),
                 QString::fromStdString(project->cards[2].id));
        QCOMPARE(text(model, 0, CardsTableModel::OpColumn), QStringLiteral("aten::softmax.int"));
        QCOMPARE(text(model, 1, CardsTableModel::OpColumn), QStringLiteral("aten::mm"));
        // Tensor arguments only, strides shown where not contiguous (mm's transposed self).
        QCOMPARE(text(model, 0, CardsTableModel::TensorsColumn), QStringLiteral("float16[4,64]"));
        QCOMPARE(text(model, 1, CardsTableModel::TensorsColumn), QStringLiteral("float16[64,32]{1,64} float16[32,8]"));
        QCOMPARE(text(model, 0, CardsTableModel::CallsColumn), QStringLiteral("3"));
        QCOMPARE(text(model, 2, CardsTableModel::CallsColumn), QStringLiteral("12"));
        QCOMPARE(text(model, 0, CardsTableModel::EagerColumn), QStringLiteral("2.00"));
        QCOMPARE(text(model, 2, CardsTableModel::EagerColumn), QStringLiteral("-"));
        QCOMPARE(text(model, 1, CardsTableModel::ShareColumn), QStringLiteral("70.0"));
        QCOMPARE(text(model, 0, CardsTableModel::NotesColumn), QStringLiteral("2 samples"));
        QCOMPARE(text(model, 1, CardsTableModel::NotesColumn), QStringLiteral("vendor-backed, 0 samples"));
        QCOMPARE(text(model, 2, CardsTableModel::NotesColumn),
                 QStringLiteral("0 samples, not timed: argument 'generator' is opaque"));

        QCOMPARE(model.data(model.index(2, CardsTableModel::CallsColumn), CardsTableModel::SortRole).toLongLong(), 12);
        QCOMPARE(model.data(model.index(2, CardsTableModel::EagerColumn), CardsTableModel::SortRole).toDouble(), -1.0);
        QCOMPARE(model.rowOfCard(QString::fromStdString(project->cards[1].id)), 1);
        QCOMPARE(model.rowOfCard(QStringLiteral("0000000000000000")), -1);

        model.setProject(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void sortsNumericallyThroughTheSortRole()
    {
        CardsTableModel model;
        model.setProject(threeCards());
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(CardsTableModel::SortRole);
        QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);

        proxy.sort(CardsTableModel::ShareColumn, Qt::DescendingOrder);
        QCOMPARE(text(proxy, 0, CardsTableModel::OpColumn), QStringLiteral("aten::mm"));
        QCOMPARE(text(proxy, 1, CardsTableModel::OpColumn), QStringLiteral("aten::softmax.int"));
        QCOMPARE(text(proxy, 2, CardsTableModel::OpColumn), QStringLiteral("aten::bernoulli_.float"));

        // As text "12" < "3"; numerically 3 < 12.
        proxy.sort(CardsTableModel::CallsColumn, Qt::AscendingOrder);
        QCOMPARE(text(proxy, 0, CardsTableModel::CallsColumn), QStringLiteral("1"));
        QCOMPARE(text(proxy, 1, CardsTableModel::CallsColumn), QStringLiteral("3"));
        QCOMPARE(text(proxy, 2, CardsTableModel::CallsColumn), QStringLiteral("12"));

        // Untimed cards sort below every timed one.
        proxy.sort(CardsTableModel::EagerColumn, Qt::DescendingOrder);
        QCOMPARE(text(proxy, 0, CardsTableModel::EagerColumn), QStringLiteral("14.00"));
        QCOMPARE(text(proxy, 2, CardsTableModel::EagerColumn), QStringLiteral("-"));
    }
};

QTEST_GUILESS_MAIN(CardsTableModelTest)
#include "CardsTableModelTest.moc"
