// MainWindow over a fixture project: the cards table, selection -> details, filtering, errors that
// keep the open project, menus, and settings (layout, recent projects) across restarts.

#include "app/MainWindow.h"
#include "FixtureProject.h"
#include "SearchTestSupport.h"
#include "SearchTreeTestSupport.h"
#include "app/ExportJob.h"
#include "app/OptimizeJob.h"
#include "cast/CastReader.h"
#include "engine/InModelCheckTool.h"
#include "model/SearchTreeJson.h"
#include "models/CardsTableModel.h"
#include "models/LatencySeriesModel.h"
#include "models/SearchTreeModel.h"
#include "models/Session.h"
#include "models/ValidationLogModel.h"
#include "search/TreeStore.h"
#include "util/Hash.h"
#include "util/Version.h"
#include "views/cards/CardDetailsPane.h"
#include "views/cards/CardsPane.h"
#include "views/charts/LatencyChartsPane.h"
#include "views/editor/AssemblyView.h"
#include "views/editor/KernelEditorPane.h"
#include "views/editor/QsciHeaders.h"
#include "views/editor/SideBySideDiffView.h"
#include "views/export/ExportDialog.h"
#include "views/log/ValidationLogPane.h"
#include "views/project/ProjectSummaryPane.h"
#include "views/status/JobStatusWidget.h"
#include "views/tree/TreeGraphView.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <memory>
#include <vector>

using kforge::app::CardsTableModel;
using kforge::app::MainWindow;

namespace {

struct ReportedError {
    QString title;
    QString message;
};

QAction* action(QWidget& window, const char* name)
{
    QAction* found = window.findChild<QAction*>(QString::fromLatin1(name));
    if (!found)
        qFatal("no action named %s", name);
    return found;
}

// Run > Optimize with the synthetic search (tests/core/search) instead of the built-in proposer and
// a GPU worker: `iterations` nodes per card, each candidate `msPerCandidate` long.
void useSyntheticSearch(MainWindow& window, int iterations, unsigned long msPerCandidate)
{
    window.setOptimizeCustomizer([iterations, msPerCandidate](kforge::app::OptimizeJobRequest& request) {
        request.budget.maxIterations = iterations;
        request.makeProposer = [](const kforge::core::OperatorCard&) {
            return std::make_unique<kforge::core::test::SyntheticProposer>();
        };
        request.makeEvaluator = [msPerCandidate](const kforge::core::OperatorCard&) {
            auto evaluator = std::make_unique<kforge::core::test::SyntheticEvaluator>();
            evaluator->sideEffect = [msPerCandidate](int) { QThread::msleep(msPerCandidate); };
            return evaluator;
        };
    });
}

// The fixture project's softmax card.
std::string fixtureSoftmaxId()
{
    for (const kforge::core::OperatorCard& card : kforge::app::test::makeFixtureProject().cards)
        if (card.qualifiedName() == "aten::softmax.int")
            return card.id;
    return {};
}

// A kernel that compiles with NVRTC for the softmax card's launch plan.
constexpr const char* kCopyKernel =
    "extern \"C\" __global__ void k(const float* x, float* y)\n{\n    y[threadIdx.x] = x[threadIdx.x];\n}\n";
const nlohmann::json kCopyPlan = {
    {"launches", {{{"kernel", "k"}, {"grid", {1}}, {"block", {32}}, {"args", {"ptr:self", "ptr:out0"}}}}}};

} // namespace

class MainWindowTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QCoreApplication::setOrganizationName(QStringLiteral("KernelForgeTests"));
        QCoreApplication::setApplicationName(QStringLiteral("MainWindowTest"));
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_dir.filePath(QStringLiteral("settings")));
        m_project = m_dir.filePath(QStringLiteral("vit_block"));
        QVERIFY(kforge::app::test::writeFixtureProject(m_project));
        m_otherProject = m_dir.filePath(QStringLiteral("other"));
        kforge::core::Project small = kforge::app::test::makeFixtureProject();
        small.cards.resize(3);
        QVERIFY(kforge::app::test::writeProject(m_otherProject, small));
        m_notAProject = m_dir.filePath(QStringLiteral("just_a_folder"));
        QVERIFY(QDir().mkpath(m_notAProject));
    }

    void opensAProjectIntoTheCardsTable()
    {
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QList<ReportedError> errors;
        window.setErrorReporter([&](const QString& t, const QString& m) { errors.append({t, m}); });
        QTableView* table = window.cardsPane()->tableView();
        QCOMPARE(table->model()->rowCount(), 0);
        QCOMPARE(window.findChild<QLabel*>(QStringLiteral("deviceLabel"))->text(), QStringLiteral("No project"));

        QVERIFY(window.openProject(m_project));
        QVERIFY(errors.isEmpty());
        QCOMPARE(table->model()->rowCount(), 12);
        QCOMPARE(window.session()->projectDir(), m_project);
        QCOMPARE(window.windowTitle(), QStringLiteral("vit_block \u2014 Kernel Forge"));
        QCOMPARE(window.findChild<QLabel*>(QStringLiteral("deviceLabel"))->text(),
                 QStringLiteral("Device: cuda:0 (NVIDIA H200)"));
        QVERIFY(window.projectSummaryPane()->plainText().contains(QStringLiteral("/home/dev/models/vit_block.pt")));
        QCOMPARE(window.findChild<QLabel*>(QStringLiteral("cardsCount"))->text(), QStringLiteral("12 cards"));

        // Largest share first: fc1 (52.3 us) then fc2 (50.6 us); the untimed card last.
        const auto cell = [table](int row, int column) { return table->model()->index(row, column).data().toString(); };
        QCOMPARE(cell(0, CardsTableModel::OpColumn), QStringLiteral("aten::linear"));
        QCOMPARE(cell(0, CardsTableModel::TensorsColumn),
                 QStringLiteral("bfloat16[8,128,768] bfloat16[3072,768] bfloat16[3072]"));
        QCOMPARE(cell(0, CardsTableModel::EagerColumn), QStringLiteral("52.30"));
        QCOMPARE(cell(11, CardsTableModel::OpColumn), QStringLiteral("aten::bernoulli_.float"));
        QCOMPARE(cell(11, CardsTableModel::EagerColumn), QStringLiteral("-"));

        // Sorting by a header click on "Calls" puts the two-call cards at the bottom.
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QHeaderView* header = table->horizontalHeader();
        const int x = header->sectionViewportPosition(CardsTableModel::CallsColumn) +
            header->sectionSize(CardsTableModel::CallsColumn) / 2;
        QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, QPoint(x, header->height() / 2));
        QCOMPARE(table->horizontalHeader()->sortIndicatorSection(), int(CardsTableModel::CallsColumn));
        const Qt::SortOrder order = header->sortIndicatorOrder();
        QCOMPARE(cell(order == Qt::AscendingOrder ? 11 : 0, CardsTableModel::CallsColumn), QStringLiteral("2"));
        QCOMPARE(cell(order == Qt::AscendingOrder ? 0 : 11, CardsTableModel::CallsColumn), QStringLiteral("1"));
    }

    void selectingACardLoadsItsTreeAndANodeShowsItsSourceAndDiff()
    {
        // A small tree for the softmax card, saved where the search keeps it.
        const kforge::core::Project project = kforge::app::test::makeFixtureProject();
        const std::string softmaxId = fixtureSoftmaxId();
        QVERIFY(!softmaxId.empty());
        kforge::core::SearchTree tree(softmaxId, 1);
        const std::string root = kforge::test::addRoot(tree, kforge::test::passed(20));
        const std::string child = kforge::test::addChild(tree, root, "vector-width 4->8", kforge::test::passed(12));
        kforge::test::addChild(tree, root, "threads-per-block 128->256",
                               kforge::test::failed(kforge::core::NodeStatus::FailedValidation, "output 0 differs"));
        const auto file = kforge::core::TreeStore::defaultPath(m_project.toStdString(), softmaxId);
        QVERIFY(kforge::core::TreeStore(file).save(tree).ok());

        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QVERIFY(window.openProject(m_project));
        window.session()->setCurrentCardId(QString::fromStdString(softmaxId));
        // Read on a pool thread, shown when it arrives.
        QTRY_COMPARE(window.treeView()->nodeCount(), 3);
        QCOMPARE(window.searchTreeModel()->cardId(), QString::fromStdString(softmaxId));
        // The log and the charts follow the same tree.
        const int logRows = window.validationLogModel()->rowCount();
        QVERIFY(logRows > 0);
        QCOMPARE(window.latencyCharts()->seriesModel()->series().size(), 1);

        // Selecting a node (as a click in the graph does) fills the editor and the diff.
        Q_EMIT window.treeView()->nodeSelected(QString::fromStdString(child));
        QCOMPARE(window.session()->currentNodeId(), QString::fromStdString(child));
        QCOMPARE(window.kernelEditor()->nodeId(), QString::fromStdString(child));
        QCOMPARE(window.kernelEditor()->source(), QString::fromStdString(tree.find(child)->candidate.source));
        QVERIFY2(window.kernelEditor()->diffView()->summary().contains(QStringLiteral("changed")),
                 qPrintable(window.kernelEditor()->diffView()->summary())); // against the parent's source
        // The diff covers the launch plan too, after the source.
        const QString diffed = window.kernelEditor()->diffView()->rightView()->text();
        const kforge::core::Candidate& shownCandidate = tree.find(child)->candidate;
        QVERIFY(!shownCandidate.launchPlan.empty());
        QVERIFY2(diffed.contains(QStringLiteral("// ---- launch plan ----\n") +
                                 QString::fromStdString(shownCandidate.launchPlan.dump(2))),
                 qPrintable(diffed));
        QCOMPARE(window.treeView()->selectedNodeId(), QString::fromStdString(child));
        // Compare with any other node (View > Compare With Node...): here the failed sibling, in the
        // diff and as the node chart's baseline.
        std::string sibling;
        for (const auto& node : tree.nodes())
            if (node.id != root && node.id != child)
                sibling = node.id;
        QVERIFY(window.showDiffAgainst(QString::fromStdString(sibling)));
        QCOMPARE(window.kernelEditor()->currentTab(), kforge::views::KernelEditorPane::Tab::Diff);
        QVERIFY(window.kernelEditor()->diffView()->summary().contains(QStringLiteral("changed")));
        QCOMPARE(window.latencyCharts()->baselineNodeId(), QString::fromStdString(sibling));
        QVERIFY(!window.showDiffAgainst(QStringLiteral("no-such-node")));
        // The log shows only the selected node's entries.
        const int shown = window.validationLog()->proxyModel()->rowCount();
        QVERIFY(shown > 0 && shown < logRows);

        // Another card: the tree and the editor follow (this card has no tree yet).
        window.session()->setCurrentCardId(QString::fromStdString(project.cards.front().id));
        QCOMPARE(window.searchTreeModel()->rowCount(), 0);
        QVERIFY(window.kernelEditor()->nodeId().isEmpty());
        QVERIFY(window.session()->currentNodeId().isEmpty());
        QFile::remove(QString::fromStdString(file.string()));
    }

    void benchmarkingAnEditAddsAManualEditNodeWithDiagnostics()
    {
        // The softmax card's tree holds one node with a plain kernel; the edits are benchmarked
        // for real: NVRTC compiles them, the worker (no GPU here) makes them compile-only.
        const std::string softmaxId = fixtureSoftmaxId();
        const std::string good = kCopyKernel;
        const std::string broken =
            "extern \"C\" __global__ void k(const float* x, float* y)\n{\n    y[threadIdx.x] = undefined_name;\n}\n";
        const nlohmann::json& plan = kCopyPlan;
        kforge::core::SearchTree tree(softmaxId, 1);
        kforge::core::Candidate rootCandidate{good, plan};
        kforge::core::Provenance rootProvenance;
        rootProvenance.kind = kforge::core::ProvenanceKind::Root;
        const std::string root = tree.addRoot(rootCandidate, rootProvenance, 1700000000000).value();
        QVERIFY(tree.recordEvaluation(root, kforge::test::compiledOnly()).ok());
        const auto file = kforge::core::TreeStore::defaultPath(m_project.toStdString(), softmaxId);
        QVERIFY(kforge::core::TreeStore(file).save(tree).ok());
        qputenv("KFORGE_WORKER", QByteArray(KFORGE_WORKER_PATH));

        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QStringList errors;
        window.setErrorReporter([&](const QString&, const QString& message) { errors << message; });
        QVERIFY(window.openProject(m_project));
        window.session()->setCurrentCardId(QString::fromStdString(softmaxId));
        QTRY_COMPARE(window.treeView()->nodeCount(), 1);
        window.session()->setCurrentNodeId(QString::fromStdString(root));

        // The PTX / SASS tab: the node's source compiled by NVRTC off the GUI thread; the SASS
        // where nvdisasm is installed, else the message says it is missing.
        window.kernelEditor()->setCurrentTab(kforge::views::KernelEditorPane::Tab::Assembly);
        QTRY_VERIFY_WITH_TIMEOUT(window.kernelEditor()->assemblyView()->ptx().contains(QLatin1String(".entry")), 60000);
        const QString listingMessage = window.kernelEditor()->assemblyView()->message();
        QVERIFY2(!window.kernelEditor()->assemblyView()->sass().isEmpty() ||
                     listingMessage.contains(QLatin1String("nvdisasm")),
                 qPrintable(listingMessage));
        window.kernelEditor()->setCurrentTab(kforge::views::KernelEditorPane::Tab::Editor);

        // A broken edit: a failed-compile child, the error on line 3 of the editor.
        Q_EMIT window.kernelEditor()->benchmarkRequested(
            QString::fromStdString(broken), QString::fromStdString(plan.dump(2)), QString::fromStdString(root));
        QVERIFY(window.kernelEditor()->isBusy());
        QTRY_COMPARE_WITH_TIMEOUT(window.treeView()->nodeCount(), 2, 120000);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QStringLiteral("; "))));
        const QString brokenId = window.session()->currentNodeId();
        const kforge::core::SearchNode* brokenNode = window.searchTreeModel()->tree().find(brokenId.toStdString());
        QVERIFY(brokenNode);
        QCOMPARE(brokenNode->status, kforge::core::NodeStatus::FailedCompile);
        QCOMPARE(brokenNode->provenance.kind, kforge::core::ProvenanceKind::ManualEdit);
        QCOMPARE(brokenNode->parentId.value_or(std::string()), root);
        QVERIFY(!window.kernelEditor()->isBusy());
        bool onLine3 = false;
        for (const auto& d : window.kernelEditor()->diagnostics())
            onLine3 = onLine3 || (d.line == 3 && d.message.contains(QStringLiteral("undefined_name")));
        QVERIFY2(onLine3, "the compiler error is not on line 3");

        // A good edit: compile-only on a machine without a GPU, saved in the tree file.
        Q_EMIT window.kernelEditor()->benchmarkRequested(QString::fromStdString(good + "// edited\n"),
                                                         QString::fromStdString(plan.dump(2)),
                                                         QString::fromStdString(root));
        QTRY_COMPARE_WITH_TIMEOUT(window.treeView()->nodeCount(), 3, 120000);
        const kforge::core::SearchNode* goodNode =
            window.searchTreeModel()->tree().find(window.session()->currentNodeId().toStdString());
        QVERIFY(goodNode);
        QVERIFY2(goodNode->status == kforge::core::NodeStatus::CompiledOnly ||
                     goodNode->status == kforge::core::NodeStatus::Passed,
                 kforge::core::nodeStatusName(goodNode->status));
        // Run > Re-benchmark Node measures the selected node's own source again, as its child.
        const std::string goodId = goodNode->id;
        QTRY_VERIFY(action(window, "actionRebenchmark")->isEnabled());
        action(window, "actionRebenchmark")->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(window.treeView()->nodeCount(), 4, 120000);
        const kforge::core::SearchNode* again =
            window.searchTreeModel()->tree().find(window.session()->currentNodeId().toStdString());
        QVERIFY(again);
        QCOMPARE(again->parentId.value_or(std::string()), goodId);
        QCOMPARE(again->provenance.transformation, std::string("re-benchmark"));
        QCOMPARE(again->candidate.source, window.searchTreeModel()->tree().find(goodId)->candidate.source);
        auto reloaded = kforge::core::TreeStore(file).load();
        QVERIFY(reloaded.ok());
        QCOMPARE(reloaded->size(), std::size_t(4));
        QFile::remove(QString::fromStdString(file.string()));
    }

    void aRunStreamsNodesIntoTheTreeStopsWithinASecondAndLosesNothing()
    {
        // A synthetic search (tests/core/search): about 40 ms per candidate, so the run is still
        // going when the tree has grown a few nodes.
        std::filesystem::path file;
        const std::string cardId = firstCardAfresh(file);
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QStringList errors;
        window.setErrorReporter([&](const QString&, const QString& message) { errors << message; });
        useSyntheticSearch(window, 10000, 40);
        QVERIFY(window.openProject(m_project));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.session()->setCurrentCardId(QString::fromStdString(cardId));
        QVERIFY(action(window, "actionOptimizeSelected")->isEnabled());
        // The event loop never stalls while the run streams in: a 10 ms timer records the longest
        // gap between its ticks (the GUI thread does no search, compile or disk work).
        QElapsedTimer sinceTick;
        qint64 longestGapMs = 0;
        QTimer ticker;
        ticker.setInterval(10);
        connect(&ticker, &QTimer::timeout, this, [&]() { longestGapMs = std::max(longestGapMs, sinceTick.restart()); });
        sinceTick.start();
        ticker.start();
        action(window, "actionOptimizeSelected")->trigger();
        QVERIFY(window.optimizeJob()->isRunning());
        QVERIFY(action(window, "actionStop")->isEnabled());
        QVERIFY(!action(window, "actionOptimizeAll")->isEnabled());

        // Live: the tree pane grows while the run goes on.
        QTRY_VERIFY_WITH_TIMEOUT(window.treeView()->nodeCount() >= 5, 20000);
        QVERIFY(window.optimizeJob()->isRunning());
        QVERIFY(window.latencyCharts()->seriesModel()->series().size() == 1);

        QElapsedTimer stopping;
        stopping.start();
        action(window, "actionStop")->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(!window.optimizeJob()->isRunning(), 5000);
        QVERIFY2(stopping.elapsed() < 1000, qPrintable(QString::number(stopping.elapsed()) + QStringLiteral(" ms")));
        ticker.stop();
        qInfo("longest event-loop gap during the run: %lld ms", static_cast<long long>(longestGapMs));
        QVERIFY2(longestGapMs < 100, qPrintable(QString::number(longestGapMs) + QStringLiteral(" ms")));
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QStringLiteral("; "))));

        // Nothing lost: the file holds every node, and the pane ends up showing all of them.
        auto saved = kforge::core::TreeStore(file).load();
        QVERIFY(saved.ok());
        QTRY_COMPARE(std::size_t(window.treeView()->nodeCount()), saved->size());
        QVERIFY(saved->size() >= 5);
        // The cards table's search columns follow the run's result (the synthetic search beats eager).
        const CardsTableModel* cards = window.findChild<CardsTableModel*>();
        QVERIFY(cards);
        const int row = cards->rowOfCard(QString::fromStdString(cardId));
        QVERIFY(row >= 0);
        QTRY_COMPARE(cards->index(row, CardsTableModel::StatusColumn).data().toString(), QStringLiteral("improved"));
        QVERIFY(cards->index(row, CardsTableModel::SpeedupColumn).data().toString().endsWith(QLatin1Char('x')));
        QFile::remove(QString::fromStdString(file.string()));
    }

    void aRunOfTheAppShowsTheSearchsOwnSnapshotsNotTheTreeFile()
    {
        // The tree pane follows a run of this app through OptimizeJob::treeSaved: what the model
        // holds is, every time it is looked at, one of the very snapshots the search delivered
        // (the same object; a file read would make a tree of its own), and the window has no
        // timer polling the file.
        std::filesystem::path file;
        const std::string cardId = firstCardAfresh(file);
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QStringList errors;
        window.setErrorReporter([&](const QString&, const QString& message) { errors << message; });
        useSyntheticSearch(window, 40, 20);
        QVERIFY(window.openProject(m_project));
        window.session()->setCurrentCardId(QString::fromStdString(cardId));
        std::vector<std::shared_ptr<const kforge::core::SearchTree>> delivered;
        connect(window.optimizeJob(), &kforge::app::OptimizeJob::treeSaved, this,
                [&](const QString& id, std::shared_ptr<const kforge::core::SearchTree> tree) {
                    if (id == QString::fromStdString(cardId))
                        delivered.push_back(std::move(tree));
                });
        const auto isDelivered = [&](const kforge::core::SearchTree* tree) {
            return std::any_of(delivered.begin(), delivered.end(), [tree](const auto& d) { return d.get() == tree; });
        };
        // Sampled whenever the model changes while the run goes: the tree it shows then.
        kforge::app::SearchTreeModel* model = window.searchTreeModel();
        int samples = 0;
        int fromFile = 0;
        std::vector<std::size_t> sizes;
        const auto sample = [&]() {
            const kforge::core::SearchTree* shown = model->treePtr().get();
            if (!shown || !window.optimizeJob()->isRunning())
                return;
            ++samples;
            if (!isDelivered(shown))
                ++fromFile;
            sizes.push_back(shown->size());
        };
        connect(model, &QAbstractItemModel::modelReset, this, sample);
        connect(model, &QAbstractItemModel::rowsInserted, this, sample);
        connect(model, &QAbstractItemModel::dataChanged, this, sample);

        QVERIFY(window.startOptimize({QString::fromStdString(cardId)}));
        // No poll: the window and the job own no running timer (the status bar's message has one).
        QList<QTimer*> timers = window.findChildren<QTimer*>(QString(), Qt::FindDirectChildrenOnly);
        timers << window.optimizeJob()->findChildren<QTimer*>();
        for (QTimer* timer : timers)
            QVERIFY2(!timer->isActive(), qPrintable(QStringLiteral("an active %1 ms timer").arg(timer->interval())));
        QTRY_VERIFY_WITH_TIMEOUT(window.treeView()->nodeCount() >= 5, 20000);
        QVERIFY(window.optimizeJob()->isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(!window.optimizeJob()->isRunning(), 30000);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QStringLiteral("; "))));

        QVERIFY2(samples >= 2, qPrintable(QString::number(samples)));
        QCOMPARE(fromFile, 0);
        QVERIFY(std::is_sorted(sizes.begin(), sizes.end())); // it grew as the search saved nodes
        QVERIFY(sizes.front() < 40);
        // The last snapshot ends up shown, and it is the tree the file has.
        QVERIFY(!delivered.empty());
        QTRY_VERIFY(model->treePtr() == delivered.back());
        auto saved = kforge::core::TreeStore(file).load();
        QVERIFY(saved.ok());
        QCOMPARE(saved->size(), std::size_t(40));
        QVERIFY(kforge::core::toJson(*delivered.back()) == kforge::core::toJson(saved.value()));
        QTRY_COMPARE(window.treeView()->nodeCount(), 40); // the view follows the model on a zero timer
        QCOMPARE(window.validationLogModel()->rowCount(),
                 static_cast<int>(kforge::app::ValidationLogModel::entriesFromTree(saved.value()).size()));
        QFile::remove(QString::fromStdString(file.string()));
    }

    void theSettingsBudgetReachesTheRun()
    {
        const kforge::core::Project project = kforge::app::test::makeFixtureProject();
        const std::string cardId = project.cards.back().id;
        const auto file = kforge::core::TreeStore::defaultPath(m_project.toStdString(), cardId);
        QFile::remove(QString::fromStdString(file.string()));
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        kforge::app::SearchSettings settings;
        settings.iterations = 7;
        window.setSearchSettings(settings);
        window.setOptimizeCustomizer([](kforge::app::OptimizeJobRequest& request) {
            QCOMPARE(request.budget.maxIterations, 7);
            QVERIFY(!request.llmClient); // built-in: no client
            request.makeProposer = [](const kforge::core::OperatorCard&) {
                return std::make_unique<kforge::core::test::SyntheticProposer>();
            };
            request.makeEvaluator = [](const kforge::core::OperatorCard&) {
                return std::make_unique<kforge::core::test::SyntheticEvaluator>();
            };
        });
        QVERIFY(window.openProject(m_project));
        QVERIFY(window.startOptimize({QString::fromStdString(cardId)}));
        QTRY_VERIFY_WITH_TIMEOUT(!window.optimizeJob()->isRunning(), 20000);
        auto saved = kforge::core::TreeStore(file).load();
        QVERIFY(saved.ok());
        QCOMPARE(saved->size(), std::size_t(7));
        QFile::remove(QString::fromStdString(file.string()));
    }

    void fileExportWritesAPackageThatVerifies()
    {
        // The softmax card's tree has a passed node 1.5x faster than eager with a real kernel.
        const kforge::core::Project project = kforge::app::test::makeFixtureProject();
        std::filesystem::path treeFile;
        savePassedSoftmaxTree(treeFile);
        if (QTest::currentTestFailed())
            return;
        qputenv("KFORGE_WORKER", QByteArray(KFORGE_WORKER_PATH));

        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QStringList errors;
        window.setErrorReporter([&](const QString&, const QString& message) { errors << message; });
        QVERIFY(window.openProject(m_project));
        QVERIFY(action(window, "actionExportCast")->isEnabled());
        const QString file = m_dir.filePath(QStringLiteral("fixture.cast"));
        QSignalSpy finished(window.exportJob(), &kforge::app::ExportJob::finished);
        // Progress comes as signals (no timer reads it), the last one before finished().
        QList<kforge::app::ExportJob::Progress> progress;
        const QMetaObject::Connection onProgress = connect(window.exportJob(), &kforge::app::ExportJob::progressChanged,
                                                           this, [&](const kforge::app::ExportJob::Progress& p) {
                                                               QCOMPARE(finished.count(), 0);
                                                               progress << p;
                                                           });
        QVERIFY(window.startExport(file));
        QTRY_VERIFY_WITH_TIMEOUT(!window.exportJob()->isRunning(), 120000);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QStringLiteral("; "))));
        QCOMPARE(finished.count(), 1);
        QVERIFY(!progress.isEmpty());
        const int cardCount = static_cast<int>(project.cards.size());
        QCOMPARE(progress.back().cards, cardCount);
        QCOMPARE(progress.back().card, cardCount);
        QVERIFY(!progress.back().checkingModel);
        QCOMPARE(progress.back().sanitizing, 0);
        QCOMPARE(window.jobStatus()->labelText(), QStringLiteral("Export finished"));
        disconnect(onProgress);
        const QString summary = finished.at(0).at(1).toString();
        QVERIFY2(QRegularExpression(QStringLiteral("^wrote .*fixture\\.cast: 1 custom, \\d+ fallback, \\d+ bytes in "
                                                   "\\d+\\.\\d s \\(sanitizer gate \\d+\\.\\d s, in-model check "
                                                   "\\d+\\.\\d s\\)$"))
                     .match(summary)
                     .hasMatch(),
                 qPrintable(summary));

        // What `kforge verify` checks: the strict reader accepts it; one custom kernel, the rest audited.
        auto package = kforge::core::openCast(file.toStdString());
        QVERIFY2(package.ok(), package.ok() ? "" : package.error().toString().c_str());
        QCOMPARE(package->header.customCount, std::uint64_t(1));
        QCOMPARE(package->audit.size(), project.cards.size());
        QVERIFY(!package->model); // the fixture's model file does not exist: kernels-only
        // ... which the audit says first (kforge export would fail and ask for --no-model).
        const QString audit = finished.at(0).at(2).toString();
        QVERIFY2(audit.startsWith(QStringLiteral("kernels-only package: the project's model cannot be read (")),
                 qPrintable(audit));
        QVERIFY2(!audit.contains(QStringLiteral("--no-model")), qPrintable(audit));
        // The audit stays in its own pane (not the log, where a filter could hide it).
        QVERIFY(window.exportAudit()->toPlainText().contains(audit));
        QVERIFY(window.exportAudit()->toPlainText().startsWith(file));
        QFile::remove(file);

        // With the captured model there, File > Export runs the in-model check as `kforge export`
        // does, through kforge-cast-run (a build without CUDA has none and says so).
        kforge::core::Project withModel = project;
        const QString modelFile = m_dir.filePath(QStringLiteral("vit_block.pt"));
        const QByteArray modelBytes("not a real TorchScript archive, but the bytes that were captured");
        {
            QFile model(modelFile);
            QVERIFY(model.open(QIODevice::WriteOnly));
            model.write(modelBytes);
        }
        withModel.capture.modelPath = modelFile.toStdString();
        withModel.capture.modelSha = kforge::core::fnv1a64Hex(modelBytes.toStdString());
        QVERIFY(kforge::app::test::writeProject(m_project, withModel));
        QVERIFY(window.openProject(m_project));
        QVERIFY(window.startExport(file));
        QTRY_VERIFY_WITH_TIMEOUT(!window.exportJob()->isRunning(), 120000);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QStringLiteral("; "))));
        QCOMPARE(finished.count(), 2);
        QVERIFY(!finished.at(1).at(2).toString().startsWith(QStringLiteral("kernels-only")));
        auto checked = kforge::core::openCast(file.toStdString());
        QVERIFY2(checked.ok(), checked.ok() ? "" : checked.error().toString().c_str());
        QVERIFY(checked->model.has_value());
        std::string checkNote;
        for (const std::string& note : checked->auditNotes)
            if (note.starts_with("in-model check: "))
                checkNote = note;
        // Not "(this build has no CUDA runtime (libkforge_runtime))": that is an export without a checker.
        QVERIFY2(checkNote.starts_with("in-model check: not run (") &&
                     checkNote.find("libkforge_runtime") == std::string::npos,
                 checkNote.c_str());
        if (!QFile::exists(QString::fromStdString(kforge::core::castRunToolPath())))
            QCOMPARE(
                QString::fromStdString(checkNote),
                QStringLiteral("in-model check: not run (this build has no CUDA runtime (kforge-cast-run not found))"));
        QVERIFY(kforge::app::test::writeFixtureProject(m_project));
        QFile::remove(modelFile);
        QFile::remove(QString::fromStdString(treeFile.string()));
        QFile::remove(file);
    }

    void cancellingAnExportWritesNothing()
    {
        // The softmax card has a passed kernel, so the export reaches the sanitizer gate; a
        // compute-sanitizer on PATH (never run) and a worker that takes two seconds to fail its start
        // keep it there while Cancel is clicked.
        std::filesystem::path treeFile;
        savePassedSoftmaxTree(treeFile);
        if (QTest::currentTestFailed())
            return;
        const QString tools = m_dir.filePath(QStringLiteral("slow-tools"));
        QVERIFY(QDir().mkpath(tools));
        for (const auto& [name, script] :
             {std::pair{"compute-sanitizer", "exit 1"}, std::pair{"slow-worker", "sleep 2\nexit 1"}}) {
            QFile file(QDir(tools).filePath(QString::fromLatin1(name)));
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(QByteArray("#!/bin/sh\n") + script + "\n");
            file.close();
            QVERIFY(file.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        }
        const QByteArray oldPath = qgetenv("PATH");
        const QByteArray oldWorker = qgetenv("KFORGE_WORKER");
        qputenv("PATH", QFile::encodeName(tools) + ":" + oldPath);
        qputenv("KFORGE_WORKER", QFile::encodeName(QDir(tools).filePath(QStringLiteral("slow-worker"))));

        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QStringList errors;
        window.setErrorReporter([&](const QString&, const QString& message) { errors << message; });
        QVERIFY(window.openProject(m_project));
        const QString file = m_dir.filePath(QStringLiteral("cancelled.cast"));
        QVERIFY(window.startExport(file));
        QVERIFY(window.jobStatus()->isJobVisible());
        QPushButton* cancel = window.jobStatus()->findChild<QPushButton*>(QStringLiteral("jobCancel"));
        QVERIFY(cancel && cancel->isEnabled());
        QTest::mouseClick(cancel, Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!window.exportJob()->isRunning(), 60000);
        qputenv("PATH", oldPath);
        qputenv("KFORGE_WORKER", oldWorker);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QStringLiteral("; ")))); // a cancel is not an error
        QCOMPARE(window.jobStatus()->labelText(), QStringLiteral("Export cancelled: nothing written"));
        QVERIFY(!QFile::exists(file));
        QVERIFY(action(window, "actionExportCast")->isEnabled());
        QFile::remove(QString::fromStdString(treeFile.string()));
    }

    void selectingARowShowsTheCardDetails()
    {
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QVERIFY(window.openProject(m_project));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTableView* table = window.cardsPane()->tableView();
        QVERIFY(window.cardDetailsPane()->plainText().contains(QStringLiteral("Select a card")));

        // A real click on the softmax row.
        int softmaxRow = -1;
        for (int row = 0; row < table->model()->rowCount(); ++row) {
            if (table->model()->index(row, CardsTableModel::OpColumn).data().toString() ==
                QStringLiteral("aten::softmax.int"))
                softmaxRow = row;
        }
        QVERIFY(softmaxRow >= 0);
        table->scrollTo(table->model()->index(softmaxRow, 0));
        const QRect rect = table->visualRect(table->model()->index(softmaxRow, CardsTableModel::OpColumn));
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, rect.center());

        const QString softmaxId = table->model()->index(softmaxRow, 0).data(CardsTableModel::CardIdRole).toString();
        QCOMPARE(window.session()->currentCardId(), softmaxId);
        QString details = window.cardDetailsPane()->plainText();
        QVERIFY2(details.contains(
                     QStringLiteral("aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")),
                 qPrintable(details));
        QVERIFY(details.contains(softmaxId));
        QVERIFY(details.contains(QStringLiteral("bfloat16[8,12,128,128] @ cuda:0")));
        QVERIFY(details.contains(QStringLiteral("Samples (1)")));
        QVERIFY(details.contains(QStringLiteral("cuda-events, L2 flushed")));
        QVERIFY(details.contains(QStringLiteral("11.70 \u00b5s")));

        // Keyboard: the next row is another card with other details.
        QTest::keyClick(table->viewport(), Qt::Key_Down);
        QVERIFY(window.session()->currentCardId() != softmaxId);
        QVERIFY(!window.session()->currentCardId().isEmpty());
        QVERIFY(window.cardDetailsPane()->plainText() != details);

        // The untimed card says why.
        table->selectRow(table->model()->rowCount() - 1);
        details = window.cardDetailsPane()->plainText();
        QVERIFY2(details.contains(QStringLiteral("not timed: argument 'generator' is opaque")), qPrintable(details));
        QVERIFY(details.contains(QStringLiteral("<torch.Generator>")));

        // Opening another project clears the selection.
        QVERIFY(window.openProject(m_otherProject));
        QVERIFY(window.session()->currentCardId().isEmpty());
        QCOMPARE(table->model()->rowCount(), 3);
        QVERIFY(window.cardDetailsPane()->plainText().contains(QStringLiteral("Select a card")));
    }

    void filterNarrowsTheTable()
    {
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QVERIFY(window.openProject(m_project));
        QLineEdit* filter = window.cardsPane()->filterEdit();
        QTest::keyClicks(filter, QStringLiteral("LINEAR"));
        QTableView* table = window.cardsPane()->tableView();
        QCOMPARE(table->model()->rowCount(), 4);
        QCOMPARE(window.findChild<QLabel*>(QStringLiteral("cardsCount"))->text(), QStringLiteral("4 of 12 cards"));
        filter->setText(QStringLiteral("[8,12,128,128]"));
        QCOMPARE(table->model()->rowCount(), 4); // mul, softmax, bernoulli_, the second matmul
        filter->clear();
        QCOMPARE(table->model()->rowCount(), 12);
    }

    void aFolderThatIsNoProjectIsReportedAndTheProjectStays()
    {
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QList<ReportedError> errors;
        window.setErrorReporter([&](const QString& t, const QString& m) { errors.append({t, m}); });
        QVERIFY(window.openProject(m_project));
        const auto project = window.session()->project();

        QVERIFY(!window.openProject(m_notAProject));
        QCOMPARE(errors.size(), 1);
        QCOMPARE(errors[0].title, QStringLiteral("Open Project"));
        QCOMPARE(errors[0].message, m_notAProject + QStringLiteral(": not a Kernel Forge project (no project.json)"));
        QVERIFY(window.session()->project() == project);
        QCOMPARE(window.session()->projectDir(), m_project);
        QCOMPARE(window.cardsPane()->tableView()->model()->rowCount(), 12);
        QCOMPARE(window.windowTitle(), QStringLiteral("vit_block \u2014 Kernel Forge"));

        QVERIFY(!window.openProject(m_dir.filePath(QStringLiteral("does_not_exist"))));
        QCOMPARE(errors.size(), 2);
        QVERIFY(errors[1].message.endsWith(QStringLiteral("does_not_exist: no such project directory")));

        const QString damaged = m_dir.filePath(QStringLiteral("damaged"));
        QVERIFY(kforge::app::test::writeFixtureProject(damaged));
        QFile cards(damaged + QStringLiteral("/cards.json"));
        QVERIFY(cards.open(QIODevice::WriteOnly | QIODevice::Truncate));
        cards.write("{\"cards\": [");
        cards.close();
        QVERIFY(!window.openProject(damaged));
        QCOMPARE(errors.size(), 3);
        QVERIFY2(errors[2].message.contains(QStringLiteral("cards.json: damaged JSON")), qPrintable(errors[2].message));
        QCOMPARE(window.session()->projectDir(), m_project);
    }

    void theDefaultReporterShowsACriticalMessageBox()
    {
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QString shownText;
        QMessageBox::Icon shownIcon = QMessageBox::NoIcon;
        // Poll for the modal box from inside its own event loop, then close it.
        QTimer poll;
        connect(&poll, &QTimer::timeout, this, [&]() {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            if (!box)
                return;
            shownText = box->text();
            shownIcon = box->icon();
            box->accept();
        });
        poll.start(20);
        QVERIFY(!window.openProject(m_notAProject)); // returns once the box is closed
        QCOMPARE(shownIcon, QMessageBox::Critical);
        QCOMPARE(shownText, m_notAProject + QStringLiteral(": not a Kernel Forge project (no project.json)"));
    }

    void menusHaveTheSkeletonAndHonestDisabledItems()
    {
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QCOMPARE(action(window, "actionOpenProject")->shortcut(), QKeySequence(QKeySequence::Open));
        QCOMPARE(action(window, "actionQuit")->shortcut(), QKeySequence(QKeySequence::Quit));
        QVERIFY(action(window, "actionOpenModel")->isEnabled());
        QAction* exportCast = action(window, "actionExportCast");
        QVERIFY(!exportCast->isEnabled()); // no project open
        QVERIFY(!action(window, "actionRebenchmark")->isEnabled());
        // Without a project nothing can be searched or stopped.
        for (const char* name : {"actionOptimizeSelected", "actionOptimizeAll", "actionStop"})
            QVERIFY2(!action(window, name)->isEnabled(), name);
        QStringList menus;
        for (QAction* menu : window.menuBar()->actions())
            menus << menu->text().remove(QLatin1Char('&'));
        QCOMPARE(menus,
                 QStringList(
                     {QStringLiteral("File"), QStringLiteral("Run"), QStringLiteral("View"), QStringLiteral("Help")}));

        // The job indicator is hidden while nothing runs.
        QVERIFY(!window.jobStatus()->isJobVisible());

        // View toggles hide and show the docks; Reset Layout brings everything back.
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto* details = window.findChild<QDockWidget*>(QStringLiteral("cardDetailsDock"));
        auto* project = window.findChild<QDockWidget*>(QStringLiteral("projectDock"));
        QVERIFY(details && project);
        // The cards table is the centre, not a dock that could be closed.
        QCOMPARE(window.centralWidget(), static_cast<QWidget*>(window.cardsPane()));
        action(window, "toggle_cardDetailsDock")->trigger();
        QVERIFY(details->isHidden());
        project->setFloating(true);
        action(window, "actionResetLayout")->trigger();
        QVERIFY(!details->isHidden());
        QVERIFY(!project->isFloating());
        QCOMPARE(window.dockWidgetArea(project), Qt::RightDockWidgetArea);
        QCOMPARE(window.dockWidgetArea(details), Qt::RightDockWidgetArea);
        QCOMPARE(window.tabifiedDockWidgets(details), QList<QDockWidget*>({project}));
    }

    void statusBarNamesTheGpuAndTheProposer()
    {
        qputenv("KFORGE_WORKER", QByteArray(KFORGE_WORKER_PATH));
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        auto* gpu = window.findChild<QLabel*>(QStringLiteral("gpuLabel"));
        auto* proposer = window.findChild<QLabel*>(QStringLiteral("proposerLabel"));
        QVERIFY(gpu && proposer);
        // The worker is asked on a pool thread; this machine may or may not have a GPU.
        QTRY_VERIFY_WITH_TIMEOUT(!gpu->text().contains(QStringLiteral("checking")), 60000);
        QVERIFY2(gpu->text().startsWith(QStringLiteral("GPU: ")) ||
                     gpu->text().endsWith(QStringLiteral("compile-only")),
                 qPrintable(gpu->text()));
        QCOMPARE(proposer->text(), QStringLiteral("Proposer: built-in"));
        kforge::app::SearchSettings settings;
        settings.proposer = QStringLiteral("openai");
        settings.model = QStringLiteral("qwen-coder");
        window.setSearchSettings(settings);
        QCOMPARE(proposer->text(), QStringLiteral("Proposer: openai qwen-coder"));
    }

    void aboutNamesEveryVersion()
    {
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QString about = window.aboutText();
        QVERIFY(about.contains(QStringLiteral("Kernel Forge ") + QString::fromLatin1(kforge::core::kKforgeVersion)));
        QVERIFY(about.contains(QStringLiteral("Qt ") + QString::fromLatin1(qVersion())));
        QVERIFY(about.contains(QStringLiteral("No project open")));
        QVERIFY2(about.contains(QRegularExpression(QStringLiteral("CUDA \\d+\\.\\d+ \\(NVRTC"))), qPrintable(about));
        QVERIFY(window.openProject(m_project));
        about = window.aboutText();
        QVERIFY2(about.contains(QStringLiteral("captured with torch 2.11.0+cu130")), qPrintable(about));
        QVERIFY2(about.contains(QStringLiteral("on NVIDIA H200")), qPrintable(about)); // the fixture's GPU
    }

    void layoutAndRecentProjectsSurviveARestart()
    {
        QSettings().clear();
        {
            MainWindow window(MainWindow::SettingsMode::Persistent);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            QVERIFY(window.openProject(m_otherProject));
            QVERIFY(window.openProject(m_project));
            window.findChild<QDockWidget*>(QStringLiteral("cardDetailsDock"))->hide();
            QVERIFY(window.close());
        }
        QCOMPARE(QSettings().value(QStringLiteral("recentProjects")).toStringList(),
                 QStringList({m_project, m_otherProject}));

        MainWindow window(MainWindow::SettingsMode::Persistent);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.findChild<QDockWidget*>(QStringLiteral("cardDetailsDock"))->isHidden());
        QVERIFY(!window.findChild<QDockWidget*>(QStringLiteral("projectDock"))->isHidden());

        QStringList entries;
        QAction* otherEntry = nullptr;
        for (QAction* entry : window.recentProjectsMenu()->actions()) {
            if (entry->isSeparator())
                continue;
            entries << entry->text().remove(QLatin1Char('&'));
            if (entry->text() == m_otherProject)
                otherEntry = entry;
        }
        QCOMPARE(entries, QStringList({m_project, m_otherProject, QStringLiteral("Clear List")}));
        QVERIFY(otherEntry);
        otherEntry->trigger();
        QCOMPARE(window.session()->projectDir(), m_otherProject);
        QCOMPARE(window.recentProjects().entries().front(), m_otherProject);

        // A recent project that is gone is reported and dropped from the list.
        const QString doomed = m_dir.filePath(QStringLiteral("doomed"));
        QVERIFY(kforge::app::test::writeFixtureProject(doomed));
        QVERIFY(window.openProject(doomed));
        QVERIFY(QDir(doomed).removeRecursively());
        QList<ReportedError> errors;
        window.setErrorReporter([&](const QString& t, const QString& m) { errors.append({t, m}); });
        for (QAction* entry : window.recentProjectsMenu()->actions()) {
            if (entry->text() == doomed) {
                entry->trigger();
                break;
            }
        }
        QCOMPARE(errors.size(), 1);
        QVERIFY(!window.recentProjects().entries().contains(doomed));
        QCOMPARE(window.session()->projectDir(), doomed); // still shown: it was open before it vanished
    }

    void exportDialogPreviewsWhatWouldShipAndPassesTheOptionsOn()
    {
        std::filesystem::path treeFile;
        savePassedSoftmaxTree(treeFile); // 1.5x: ships at the default minimum speedup
        if (QTest::currentTestFailed())
            return;
        MainWindow window(MainWindow::SettingsMode::Ephemeral);
        QStringList errors;
        window.setErrorReporter([&](const QString&, const QString& message) { errors << message; });
        QVERIFY(window.openProject(m_project));
        std::unique_ptr<kforge::views::ExportDialog> dialog = window.makeExportDialog();
        QVERIFY(dialog);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QStringLiteral("; "))));
        auto* table = dialog->findChild<QTableWidget*>(QStringLiteral("exportPreview"));
        auto* minSpeedup = dialog->findChild<QDoubleSpinBox*>(QStringLiteral("exportMinSpeedup"));
        auto* archs = dialog->findChild<QLineEdit*>(QStringLiteral("exportArchitectures"));
        auto* summary = dialog->findChild<QLabel*>(QStringLiteral("exportSummary"));
        auto* accept = dialog->findChild<QPushButton*>(QStringLiteral("exportAccept"));
        QVERIFY(table && minSpeedup && archs && summary && accept);
        const kforge::core::Project project = kforge::app::test::makeFixtureProject();
        QCOMPARE(table->rowCount(), static_cast<int>(project.cards.size()));
        int softmaxRow = -1;
        for (int row = 0; row < table->rowCount(); ++row)
            if (table->item(row, 1)->toolTip().toStdString() == fixtureSoftmaxId())
                softmaxRow = row;
        QVERIFY(softmaxRow >= 0);
        QCOMPARE(table->item(softmaxRow, 3)->text(), QStringLiteral("custom"));
        QCOMPARE(table->item(softmaxRow, 4)->text(), QStringLiteral("best 1.500x (n0)"));
        QVERIFY2(summary->text().startsWith(QStringLiteral("1 of ")), qPrintable(summary->text()));
        QVERIFY(accept->isEnabled());

        // Above the node's speedup it would fall back, with export's reason.
        minSpeedup->setValue(2.0);
        QCOMPARE(table->item(softmaxRow, 3)->text(), QStringLiteral("fallback"));
        QCOMPARE(table->item(softmaxRow, 4)->text(), QStringLiteral("best 1.500x below --min-speedup 2 (n0)"));
        QVERIFY2(summary->text().startsWith(QStringLiteral("0 of ")), qPrintable(summary->text()));
        minSpeedup->setValue(1.2);

        // Cards left out: "not selected", and only the checked ones are passed on.
        for (int row = 0; row < table->rowCount(); ++row)
            if (row != softmaxRow)
                table->item(row, 0)->setCheckState(Qt::Unchecked);
        QCOMPARE(table->item((softmaxRow + 1) % table->rowCount(), 4)->text(),
                 QStringLiteral("not selected (--cards)"));
        archs->setText(QStringLiteral("sm_90, compute_90"));
        QVERIFY(!accept->isEnabled()); // not an architecture name
        QVERIFY2(dialog->problem().contains(QStringLiteral("compute_90")), qPrintable(dialog->problem()));
        archs->setText(QStringLiteral("sm_90 sm_100"));
        QVERIFY(accept->isEnabled());
        const kforge::views::ExportChoices choices = dialog->choices();
        QCOMPARE(choices.minSpeedup, 1.2);
        QCOMPARE(choices.cardIds, QStringList{QString::fromStdString(fixtureSoftmaxId())});
        QCOMPARE(choices.architectures, (QStringList{QStringLiteral("sm_90"), QStringLiteral("sm_100")}));
        QVERIFY(choices.file.endsWith(QStringLiteral(".cast")));
        table->item(softmaxRow, 0)->setCheckState(Qt::Unchecked);
        QVERIFY(!accept->isEnabled()); // nothing selected
        QFile::remove(QString::fromStdString(treeFile.string()));
    }

private:
    // Saves, where the search keeps it, a softmax tree whose one node is a real kernel that passed
    // at 10 us against eager's 15 us (what an export packages as custom); `file` is where.
    void savePassedSoftmaxTree(std::filesystem::path& file)
    {
        const std::string softmaxId = fixtureSoftmaxId();
        kforge::core::SearchTree tree(softmaxId, 1);
        kforge::core::Provenance root;
        root.kind = kforge::core::ProvenanceKind::Root;
        const std::string id = tree.addRoot({kCopyKernel, kCopyPlan}, root, 1700000000000).value();
        QVERIFY(tree.recordEvaluation(id, kforge::test::passed(10.0, 15.0)).ok());
        file = kforge::core::TreeStore::defaultPath(m_project.toStdString(), softmaxId);
        QVERIFY(kforge::core::TreeStore(file).save(tree).ok());
    }

    // The fixture's first card, whose tree `file` is removed: a search starts it anew.
    std::string firstCardAfresh(std::filesystem::path& file) const
    {
        const std::string cardId = kforge::app::test::makeFixtureProject().cards.front().id;
        file = kforge::core::TreeStore::defaultPath(m_project.toStdString(), cardId);
        QFile::remove(QString::fromStdString(file.string()));
        return cardId;
    }

    QTemporaryDir m_dir;
    QString m_project;
    QString m_otherProject;
    QString m_notAProject;
};

QTEST_MAIN(MainWindowTest)
#include "MainWindowTest.moc"
