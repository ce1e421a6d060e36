#include "app/MainWindow.h"

#include "app/CaptureJobRunner.h"
#include "app/ExportJob.h"
#include "app/ManualEditJob.h"
#include "app/OptimizeJob.h"
#include "cast/CastPackage.h"
#include "cast_export/CastExport.h"
#include "engine/CardSelection.h"
#include "engine/InModelCheckTool.h"
#include "kernel/KernelDisassembly.h"
#include "kernel/NvrtcCompiler.h"
#include "llm_client/LlmClientFactory.h"
#include "llm_client/LlmConfig.h"
#include "model/NodeRanking.h"
#include "models/CardsTableModel.h"
#include "models/LatencySeriesModel.h"
#include "models/SearchTreeModel.h"
#include "models/Session.h"
#include "models/ValidationLogModel.h"
#include "project/ProjectStore.h"
#include "protocol/WorkerClient.h"
#include "protocol/WorkerPath.h"
#include "search/TreeStore.h"
#include "util/AtomicFile.h"
#include "util/Hash.h"
#include "util/Version.h"
#include "views/capture/OpenModelDialog.h"
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
#include "views/settings/SettingsDialog.h"
#include "views/status/JobStatusWidget.h"
#include "views/tree/TreeGraphView.h"
#include "views/tree/TreePane.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QInputDialog>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPointer>
#include <QSettings>
#include <QStatusBar>
#include <QTableView>
#include <QThreadPool>

#include <filesystem>

namespace kforge::app {
namespace {

// Bump when docks are added, removed or renamed: an old saved state is then ignored.
constexpr int kLayoutVersion = 4;
constexpr int kStatusMessageMs = 8000;

const QString kGeometryKey = QStringLiteral("mainWindow/geometry");
const QString kStateKey = QStringLiteral("mainWindow/state");

QString fromStd(const std::string& text)
{
    return QString::fromStdString(text);
}

// What the Diff tab compares for a node: its source, then its launch plan as indented JSON, so that
// a change of grid, block, shared memory or arguments shows as well as a change of code.
QString diffTextOf(const core::Candidate& candidate)
{
    QString text = fromStd(candidate.source);
    if (candidate.launchPlan.is_object() && !candidate.launchPlan.empty())
        text += QStringLiteral("\n\n// ---- launch plan ----\n") + fromStd(candidate.launchPlan.dump(2));
    return text;
}

} // namespace

MainWindow::MainWindow(SettingsMode mode, QWidget* parent)
    : QMainWindow(parent), m_settingsMode(mode), m_session(new Session(this)), m_cardsModel(new CardsTableModel(this)),
      m_captureRunner(new CaptureJobRunner(this)), m_recent(mode == SettingsMode::Persistent)
{
    setObjectName(QStringLiteral("mainWindow"));
    m_errorReporter = [this](const QString& title, const QString& message) {
        QMessageBox::critical(this, title, message);
    };
    createDocks();
    createMenus();
    createStatusBar();
    resize(1400, 860);
    resetLayout();
    if (m_settingsMode == SettingsMode::Persistent)
        restoreSettings();
    updateProjectLabels();

    connect(m_captureRunner, &CaptureJobRunner::progressChanged, this, &MainWindow::onCaptureProgress);
    connect(m_captureRunner, &CaptureJobRunner::succeeded, this, &MainWindow::onCaptureSucceeded);
    connect(m_captureRunner, &CaptureJobRunner::failed, this, &MainWindow::onCaptureFailed);
    connect(m_session, &Session::currentCardChanged, this, &MainWindow::loadTreeForCurrentCard);
    connect(m_session, &Session::currentNodeChanged, this, &MainWindow::showCurrentNode);
    updateProposerLabel();
    probeGpu();
    m_exportJob = new ExportJob(this);
    connect(m_exportJob, &ExportJob::progressChanged, this, [this](const ExportJob::Progress& p) {
        if (p.checkingModel)
            m_jobStatus->setProgress(tr("in-model check"), 0, 0);
        else if (p.cards > 0)
            m_jobStatus->setProgress(p.sanitizing > 0 ? tr("card (sanitizer on %1)").arg(p.sanitizing) : tr("card"),
                                     p.card, p.cards);
    });
    connect(m_exportJob, &ExportJob::cancelled, this, [this]() {
        m_jobStatus->endJob(tr("Export cancelled: nothing written"));
        updateRunActions();
    });
    connect(m_exportJob, &ExportJob::finished, this,
            [this](const QString& file, const QString& summary, const QString& audit) {
                m_jobStatus->endJob(tr("Export finished"));
                statusBar()->showMessage(summary, kStatusMessageMs);
                m_logModel->appendEntries(
                    {LogEntry{QDateTime::currentDateTime(), LogLevel::Info, QString(), QString(), LogPhase::Search,
                              summary + tr(" (the audit: View > Export Audit)")}});
                m_auditView->setPlainText(file + QLatin1Char('\n') + summary + QStringLiteral("\n\n") + audit);
                m_auditDock->show();
                m_auditDock->raise();
                updateRunActions();
            });
    connect(m_exportJob, &ExportJob::failed, this, [this](const QString& error) {
        m_jobStatus->endJob(tr("Export failed"));
        updateRunActions();
        reportError(tr("Export .cast"), error);
    });
    m_optimizeJob = new OptimizeJob(this);
    // A run of this app is followed through the job's signals (the search's own snapshots), never
    // by reading the tree file; the last ones come before finished() and failed().
    connect(m_optimizeJob, &OptimizeJob::progressChanged, this, [this](const OptimizeJob::Progress& p) {
        m_cardsModel->setSearchingCard(p.cardId);
        if (p.cardId.isEmpty())
            return; // between cards
        QString phase = tr("card %1 of %2 (%3): iteration %4")
                            .arg(p.cardIndex + 1)
                            .arg(p.cardCount)
                            .arg(p.cardId.left(8))
                            .arg(p.iteration);
        if (p.bestSpeedup > 0)
            phase += tr(", best %1x").arg(p.bestSpeedup, 0, 'f', 2);
        if (!p.gpuWarning.isEmpty())
            phase += tr(" (warning: %1)").arg(p.gpuWarning);
        m_jobStatus->setProgress(phase, p.cardIndex, p.cardCount);
    });
    connect(m_optimizeJob, &OptimizeJob::treeSaved, this, &MainWindow::showSavedTree);
    connect(m_optimizeJob, &OptimizeJob::finished, this, [this](const QString& summary, bool stopped) {
        m_jobStatus->endJob(stopped ? tr("Search stopped") : tr("Search finished"));
        m_cardsModel->setSearchingCard(QString());
        refreshSearchSummaries();
        statusBar()->showMessage(summary.section(QLatin1Char('\n'), -1), kStatusMessageMs);
        updateRunActions();
    });
    connect(m_optimizeJob, &OptimizeJob::failed, this, [this](const QString& error) {
        m_jobStatus->endJob(tr("Search failed"));
        m_cardsModel->setSearchingCard(QString());
        refreshSearchSummaries();
        updateRunActions();
        reportError(tr("Optimize"), error);
    });
    connect(m_session, &Session::projectChanged, this, &MainWindow::updateRunActions);
    connect(m_session, &Session::currentCardChanged, this, &MainWindow::updateRunActions);
    connect(m_session, &Session::currentNodeChanged, this, &MainWindow::updateRunActions);
    updateRunActions();
    m_manualEditJob = new ManualEditJob(this);
    connect(m_editorPane, &views::KernelEditorPane::benchmarkRequested, this, &MainWindow::onBenchmarkRequested);
    connect(m_editorPane, &views::KernelEditorPane::assemblyRequested, this, &MainWindow::compileListing);
    connect(m_manualEditJob, &ManualEditJob::finished, this,
            [this](std::shared_ptr<const core::SearchTree> tree, const QString& nodeId,
                   const core::EvaluationReport& evaluation) {
                m_editorPane->setBusy(false);
                updateRunActions();
                if (m_treeModel->cardId() == QString::fromStdString(tree->cardId())) {
                    m_treeShown = ++m_treeRequest; // newer than any read still in flight
                    showTree(tree, ValidationLogModel::entriesFromTree(*tree));
                }
                m_session->setCurrentNodeId(nodeId);
                refreshSearchSummaries();
                // The new node's compiler messages on their lines (a broken edit shows where).
                QList<views::EditorDiagnostic> diagnostics;
                if (evaluation.compile)
                    for (const core::CompileDiagnostic& d : evaluation.compile->diagnostics)
                        diagnostics.append(
                            {d.line, d.column, QString::fromStdString(d.severity), QString::fromStdString(d.message)});
                m_editorPane->setDiagnostics(diagnostics);
                QString summary = tr("Edit benchmarked as node %1: %2").arg(nodeId, fromStd(evaluation.status));
                if (!evaluation.reason.line.empty())
                    summary += QStringLiteral(" (") + fromStd(evaluation.reason.line) + QStringLiteral(")");
                statusBar()->showMessage(summary, kStatusMessageMs);
            });
    connect(m_manualEditJob, &ManualEditJob::failed, this, [this](const QString& error) {
        m_editorPane->setBusy(false);
        updateRunActions();
        statusBar()->clearMessage();
        reportError(tr("Benchmark Edit"), error);
    });
    connect(m_jobStatus, &views::JobStatusWidget::cancelRequested, this, [this]() {
        if (m_exportJob->isRunning()) {
            m_exportJob->stop(); // after the card in work; cancelled() ends the job
            m_jobStatus->setCancelling();
            return;
        }
        if (m_optimizeJob->isRunning()) {
            m_optimizeJob->stop();
            m_jobStatus->setCancelling();
            return;
        }
        m_captureRunner->cancel();
        m_jobStatus->setCancelling();
    });
}

MainWindow::~MainWindow() = default;

void MainWindow::createDocks()
{
    // The cards table is the centre: what every other pane is about. The project's static summary
    // is a tab beside the card's details, so that it never takes room from the tree, the charts or
    // the log.
    m_cardsPane = new views::CardsPane(m_cardsModel, m_session, this);
    setCentralWidget(m_cardsPane);

    m_summaryPane = new views::ProjectSummaryPane(m_session, this);
    m_projectDock = new QDockWidget(tr("Project"), this);
    m_projectDock->setObjectName(QStringLiteral("projectDock"));
    m_projectDock->setWidget(m_summaryPane);

    m_detailsPane = new views::CardDetailsPane(m_session, this);
    m_detailsDock = new QDockWidget(tr("Card Details"), this);
    m_detailsDock->setObjectName(QStringLiteral("cardDetailsDock"));
    m_detailsDock->setWidget(m_detailsPane);

    m_treeModel = new SearchTreeModel(this);
    // The pane puts the node chosen in its graph or list into the session and follows it back.
    m_treePane = new views::TreePane(m_treeModel, m_session, this);
    m_treeView = m_treePane->graphView();
    m_treeDock = new QDockWidget(tr("MCTS Tree"), this);
    m_treeDock->setObjectName(QStringLiteral("treeDock"));
    m_treeDock->setWidget(m_treePane);

    m_editorPane = new views::KernelEditorPane(this);
    m_editorDock = new QDockWidget(tr("Kernel Editor"), this);
    m_editorDock->setObjectName(QStringLiteral("editorDock"));
    m_editorDock->setWidget(m_editorPane);

    m_logModel = new ValidationLogModel(this);
    m_logPane = new views::ValidationLogPane(this);
    m_logPane->setModel(m_logModel);
    m_logDock = new QDockWidget(tr("Validation Log"), this);
    m_logDock->setObjectName(QStringLiteral("logDock"));
    m_logDock->setWidget(m_logPane);

    m_chartsPane = new views::LatencyChartsPane(this);
    m_chartsDock = new QDockWidget(tr("Latency Charts"), this);
    m_chartsDock->setObjectName(QStringLiteral("chartsDock"));
    m_chartsDock->setWidget(m_chartsPane);

    m_auditView = new QPlainTextEdit(this);
    m_auditView->setObjectName(QStringLiteral("exportAudit"));
    m_auditView->setReadOnly(true);
    m_auditView->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_auditView->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_auditView->setPlaceholderText(
        tr("No export in this session yet. File > Export .cast writes a package; its audit stays here."));
    m_auditDock = new QDockWidget(tr("Export Audit"), this);
    m_auditDock->setObjectName(QStringLiteral("exportAuditDock"));
    m_auditDock->setWidget(m_auditView);

    setCorner(Qt::TopRightCorner, Qt::RightDockWidgetArea);
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
}

void MainWindow::createMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->setToolTipsVisible(true);
    m_openModelAction = file->addAction(tr("Open &Model..."), this, &MainWindow::openModelDialog);
    m_openModelAction->setObjectName(QStringLiteral("actionOpenModel"));
    m_openModelAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    QAction* openProject = file->addAction(tr("&Open Project..."), this, &MainWindow::openProjectDialog);
    openProject->setObjectName(QStringLiteral("actionOpenProject"));
    openProject->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("&Recent Projects"));
    m_recentMenu->setObjectName(QStringLiteral("menuRecentProjects"));
    rebuildRecentMenu();
    file->addSeparator();
    m_exportAction = file->addAction(tr("&Export .cast..."), this, [this]() {
        std::unique_ptr<views::ExportDialog> dialog = makeExportDialog();
        if (dialog && dialog->exec() == QDialog::Accepted)
            startExport(dialog->choices());
    });
    m_exportAction->setObjectName(QStringLiteral("actionExportCast"));
    m_exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setObjectName(QStringLiteral("actionQuit"));
    quit->setShortcut(QKeySequence::Quit);
    quit->setMenuRole(QAction::QuitRole);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->setToolTipsVisible(true);
    m_optimizeSelectedAction =
        run->addAction(tr("Optimize &Selected Card"), this, [this]() { startOptimize({m_session->currentCardId()}); });
    m_optimizeSelectedAction->setObjectName(QStringLiteral("actionOptimizeSelected"));
    m_optimizeSelectedAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    m_optimizeAllAction = run->addAction(tr("Optimize &All"), this, [this]() {
        // Every card the built-in proposer covers, largest share of model time first (the
        // engine's default choice, as kforge optimize makes it).
        QStringList ids;
        if (m_session->hasProject())
            if (auto selection = core::selectCardsToSearch(*m_session->project(), {}, /*builtin=*/true))
                for (const core::OperatorCard* card : selection->cards)
                    ids << fromStd(card->id);
        startOptimize(ids);
    });
    m_optimizeAllAction->setObjectName(QStringLiteral("actionOptimizeAll"));
    m_stopAction = run->addAction(tr("S&top"), this, [this]() { m_optimizeJob->stop(); });
    m_stopAction->setObjectName(QStringLiteral("actionStop"));
    m_stopAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
    run->addSeparator();
    QAction* settings = run->addAction(tr("Se&ttings..."), this, [this]() {
        views::SettingsDialog dialog(m_searchSettings, this);
        if (dialog.exec() == QDialog::Accepted)
            setSearchSettings(dialog.settings());
    });
    settings->setObjectName(QStringLiteral("actionSettings"));
    settings->setMenuRole(QAction::PreferencesRole);
    run->addSeparator();
    m_rebenchmarkAction = run->addAction(tr("&Re-benchmark Node"), this, [this]() {
        const QString id = m_session->currentNodeId();
        const core::SearchNode* node = id.isEmpty() ? nullptr : m_treeModel->tree().find(id.toStdString());
        if (node)
            benchmarkAsChild(fromStd(node->candidate.source), fromStd(node->candidate.launchPlan.dump(2)), id,
                             QStringLiteral("re-benchmark"));
    });
    m_rebenchmarkAction->setObjectName(QStringLiteral("actionRebenchmark"));
    m_rebenchmarkAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));

    QMenu* view = menuBar()->addMenu(tr("&View"));
    for (QDockWidget* dock : docks()) {
        QAction* toggle = dock->toggleViewAction();
        toggle->setObjectName(QStringLiteral("toggle_") + dock->objectName());
        view->addAction(toggle);
    }
    view->addSeparator();
    QAction* diffAgainst = view->addAction(tr("&Compare With Node..."), this, [this]() {
        QStringList ids;
        for (const core::SearchNode& node : m_treeModel->tree().nodes())
            if (fromStd(node.id) != m_session->currentNodeId())
                ids << fromStd(node.id);
        if (ids.isEmpty() || m_session->currentNodeId().isEmpty()) {
            statusBar()->showMessage(tr("Select a node of a tree with more than one node first"), kStatusMessageMs);
            return;
        }
        bool ok = false;
        const QString other = QInputDialog::getItem(
            this, tr("Compare With Node"),
            tr("Compare %1 with (the diff, and the node chart's baseline):").arg(m_session->currentNodeId()), ids, 0,
            false, &ok);
        if (ok)
            showDiffAgainst(other);
    });
    diffAgainst->setObjectName(QStringLiteral("actionDiffAgainst"));
    diffAgainst->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
    view->addSeparator();
    QAction* reset = view->addAction(tr("&Reset Layout"), this, &MainWindow::resetLayout);
    reset->setObjectName(QStringLiteral("actionResetLayout"));

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* about = help->addAction(tr("&About Kernel Forge"), this, &MainWindow::showAbout);
    about->setObjectName(QStringLiteral("actionAbout"));
    about->setMenuRole(QAction::AboutRole);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt)->setMenuRole(QAction::AboutQtRole);
}

void MainWindow::createStatusBar()
{
    m_deviceLabel = new QLabel(this);
    m_deviceLabel->setObjectName(QStringLiteral("deviceLabel"));
    m_jobStatus = new views::JobStatusWidget(this);
    m_jobStatus->setObjectName(QStringLiteral("jobStatus"));
    statusBar()->addPermanentWidget(m_jobStatus);
    statusBar()->addPermanentWidget(m_deviceLabel);
    m_gpuLabel = new QLabel(tr("GPU: checking..."), this);
    m_gpuLabel->setObjectName(QStringLiteral("gpuLabel"));
    statusBar()->addPermanentWidget(m_gpuLabel);
    m_proposerLabel = new QLabel(this);
    m_proposerLabel->setObjectName(QStringLiteral("proposerLabel"));
    statusBar()->addPermanentWidget(m_proposerLabel);
}

QList<QDockWidget*> MainWindow::docks() const
{
    return {m_detailsDock, m_projectDock, m_treeDock, m_editorDock, m_logDock, m_chartsDock, m_auditDock};
}

void MainWindow::resetLayout()
{
    for (QDockWidget* dock : docks()) {
        dock->setFloating(false);
        removeDockWidget(dock);
    }
    addDockWidget(Qt::RightDockWidgetArea, m_detailsDock);
    tabifyDockWidget(m_detailsDock, m_projectDock);
    addDockWidget(Qt::BottomDockWidgetArea, m_treeDock);
    addDockWidget(Qt::BottomDockWidgetArea, m_editorDock);
    splitDockWidget(m_treeDock, m_editorDock, Qt::Horizontal);
    tabifyDockWidget(m_treeDock, m_logDock);
    tabifyDockWidget(m_logDock, m_auditDock);
    tabifyDockWidget(m_editorDock, m_chartsDock);
    for (QDockWidget* dock : docks())
        dock->show();
    m_treeDock->raise(); // the tree in front of the log it is tabbed with
    m_editorDock->raise();
    m_detailsDock->raise();
    // The panes below the cards get the larger part: the tree, the editor's source, three charts
    // and the log's messages need height; the table scrolls.
    resizeDocks({m_treeDock}, {height() * 11 / 20}, Qt::Vertical);
    // The details column a little narrower than a quarter: at 1400 px the log's message column
    // keeps 200 px beside its time, level, card, node and phase.
    resizeDocks({m_detailsDock}, {width() * 2 / 9}, Qt::Horizontal);
    resizeDocks({m_treeDock, m_editorDock}, {width() * 7 / 18, width() * 7 / 18}, Qt::Horizontal);
}

void MainWindow::showPane(Pane pane)
{
    QDockWidget* dock = m_treeDock;
    QWidget* focus = m_treeView;
    switch (pane) {
    case Pane::Tree:
        break;
    case Pane::Editor:
    case Pane::Diff:
        dock = m_editorDock;
        m_editorPane->setCurrentTab(pane == Pane::Diff ? views::KernelEditorPane::Tab::Diff
                                                       : views::KernelEditorPane::Tab::Editor);
        focus = pane == Pane::Diff ? static_cast<QWidget*>(m_editorPane->diffView()) : m_editorPane->sourceEditor();
        break;
    case Pane::Assembly:
        dock = m_editorDock;
        m_editorPane->setCurrentTab(views::KernelEditorPane::Tab::Assembly); // requests the listing
        focus = m_editorPane->assemblyView()->ptxView();
        break;
    case Pane::Charts:
        dock = m_chartsDock;
        focus = m_chartsPane;
        break;
    case Pane::Log:
        dock = m_logDock;
        focus = m_logPane->tableView();
        break;
    }
    dock->show();
    dock->raise();
    focus->setFocus(Qt::OtherFocusReason);
}

bool MainWindow::isLoading() const
{
    return m_summariesPending || m_treeFileRequest != 0 || m_gpuProbePending || m_listingsPending > 0;
}

void MainWindow::finishLoadingStep()
{
    if (!isLoading())
        Q_EMIT loadingFinished();
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    restoreGeometry(settings.value(kGeometryKey).toByteArray());
    restoreState(settings.value(kStateKey).toByteArray(), kLayoutVersion);
    m_searchSettings = SearchSettings::load(settings);
    updateProposerLabel();
}

void MainWindow::saveSettings() const
{
    if (m_settingsMode != SettingsMode::Persistent)
        return;
    QSettings settings;
    settings.setValue(kGeometryKey, saveGeometry());
    settings.setValue(kStateKey, saveState(kLayoutVersion));
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    // The runners join their threads when destroyed; asking them to stop now keeps that wait short
    // (an export in work is cancelled after its current card and writes nothing).
    m_captureRunner->cancel();
    m_exportJob->stop();
    saveSettings();
    event->accept();
}

void MainWindow::rebuildRecentMenu()
{
    // Deferred deletion: this runs from the triggered() of one of these actions.
    const QList<QAction*> old = m_recentMenu->actions();
    for (QAction* action : old) {
        m_recentMenu->removeAction(action);
        action->deleteLater();
    }
    for (const QString& dir : m_recent.entries()) {
        QAction* action =
            m_recentMenu->addAction(QDir::toNativeSeparators(dir).replace(QLatin1Char('&'), QStringLiteral("&&")));
        connect(action, &QAction::triggered, this, [this, dir]() {
            if (!openProject(dir)) {
                m_recent.remove(dir); // gone or damaged: do not offer it again
                rebuildRecentMenu();
            }
        });
    }
    if (m_recent.entries().isEmpty())
        m_recentMenu->addAction(tr("(none)"))->setEnabled(false);
    m_recentMenu->addSeparator();
    QAction* clear = m_recentMenu->addAction(tr("&Clear List"), this, [this]() {
        m_recent.clear();
        rebuildRecentMenu();
    });
    clear->setEnabled(!m_recent.entries().isEmpty());
}

bool MainWindow::openProject(const QString& dir)
{
    auto project = core::openProject(QFile::encodeName(dir).toStdString());
    if (!project) {
        reportError(tr("Open Project"), fromStd(project.error().toString()));
        return false;
    }
    showProject(std::make_shared<const core::Project>(std::move(project).value()), dir);
    statusBar()->showMessage(
        tr("Opened %1 (%2 cards)").arg(QDir::toNativeSeparators(m_session->projectDir())).arg(m_cardsModel->rowCount()),
        kStatusMessageMs);
    return true;
}

void MainWindow::showProject(std::shared_ptr<const core::Project> project, const QString& dir)
{
    const QString absolute = QDir::cleanPath(QDir(dir).absolutePath());
    m_cardsModel->setProject(project);
    m_session->setProject(project, absolute);
    m_recent.add(absolute);
    rebuildRecentMenu();
    updateProjectLabels();
    refreshSearchSummaries();
}

void MainWindow::refreshSearchSummaries()
{
    const auto project = m_session->project();
    if (!project)
        return;
    const quint64 generation = ++m_summaryGeneration;
    m_summariesPending = true;
    const std::filesystem::path dir = m_session->projectDir().toStdString();
    const bool builtinProposer = !m_searchSettings.usesLlm();
    QPointer<MainWindow> self(this);
    QThreadPool::globalInstance()->start([self, project, dir, generation, builtinProposer]() {
        auto summaries = std::make_shared<QHash<QString, CardSearchSummary>>(summarizeSearches(dir, *project));
        // A card never searched that the built-in proposer does not cover says so, with the
        // proposer's reason, instead of "not started" for ever (an LLM may write any op); a view
        // or an identity says there is nothing to run, whatever the proposer.
        if (auto selection = core::selectCardsToSearch(*project, {}, builtinProposer))
            for (const core::SkippedCard& skipped : selection->skipped) {
                CardSearchSummary& summary = (*summaries)[fromStd(skipped.card->id)];
                if (summary.status != CardSearchStatus::NotStarted || skipped.card->vendorBacked)
                    continue;
                summary.status =
                    skipped.card->computesNothing() ? CardSearchStatus::NothingToRun : CardSearchStatus::NotCovered;
                summary.reason = fromStd(skipped.reason);
            }
        QMetaObject::invokeMethod(
            qApp,
            [self, project, summaries, generation]() {
                if (!self || generation != self->m_summaryGeneration)
                    return; // superseded: the newer read ends the loading
                self->m_summariesPending = false;
                if (self->m_session->project() == project) // else another project opened meanwhile
                    self->showSearchSummaries(*project, *summaries);
                self->finishLoadingStep();
            },
            Qt::QueuedConnection);
    });
}

void MainWindow::showSearchSummaries(const core::Project& project, const QHash<QString, CardSearchSummary>& summaries)
{
    m_cardsModel->setSearchSummaries(summaries);
    QList<QPair<QString, double>> speedups;
    for (const core::OperatorCard& card : project.cards) {
        const CardSearchSummary s = summaries.value(fromStd(card.id));
        if (s.speedup)
            speedups.append(
                {fromStd(card.displayName()) + QLatin1Char(' ') + fromStd(card.id.substr(0, 8)), *s.speedup});
    }
    m_chartsPane->setCardSpeedups(speedups);
}

void MainWindow::updateProjectLabels()
{
    const auto& project = m_session->project();
    if (!project) {
        m_deviceLabel->setText(tr("No project"));
        setWindowTitle(tr("Kernel Forge"));
        return;
    }
    const core::CaptureInfo& capture = project->capture;
    QString device = fromStd(capture.device);
    if (!capture.deviceName.empty() && capture.deviceName != capture.device)
        device += QStringLiteral(" (") + fromStd(capture.deviceName) + QStringLiteral(")");
    m_deviceLabel->setText(tr("Device: %1").arg(device));
    setWindowTitle(tr("%1 \u2014 Kernel Forge").arg(QFileInfo(m_session->projectDir()).fileName()));
}

void MainWindow::openProjectDialog()
{
    const QString start = m_session->hasProject() ? QFileInfo(m_session->projectDir()).absolutePath() : QString();
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open Project"), start);
    if (!dir.isEmpty())
        openProject(dir);
}

core::CaptureOptions MainWindow::captureOptionsFor(const views::CaptureRequest& request)
{
    core::CaptureOptions options;
    options.modelPath = QFile::encodeName(request.modelPath).toStdString();
    for (const QString& input : request.inputs)
        options.inputs.push_back(input.toStdString());
    options.outputDir = QFile::encodeName(request.outputDir).toStdString();
    options.device = request.device.toStdString();
    options.samplesPerCard = request.samplesPerCard;
    return options;
}

void MainWindow::openModelDialog()
{
    views::OpenModelDialog dialog(this);
    dialog.setRequest(m_lastCaptureRequest);
    if (dialog.exec() != QDialog::Accepted)
        return;
    m_lastCaptureRequest = dialog.request();
    startCapture(captureOptionsFor(m_lastCaptureRequest));
}

bool MainWindow::startCapture(core::CaptureOptions options)
{
    const QString model = QFileInfo(QFile::decodeName(options.modelPath.string().c_str())).fileName();
    if (!m_captureRunner->start(std::move(options))) {
        reportError(tr("Open Model"), tr("a capture is already running; cancel it or wait for it to finish"));
        return false;
    }
    m_openModelAction->setEnabled(false);
    m_jobStatus->beginJob(tr("Capturing %1").arg(model));
    return true;
}

void MainWindow::onCaptureProgress(const QString& phase, int done, int total)
{
    m_jobStatus->setProgress(phase, done, total);
}

void MainWindow::onCaptureSucceeded(std::shared_ptr<const core::CaptureReport> report, const QString& outputDir)
{
    m_openModelAction->setEnabled(true);
    // The report's project is what the capture just wrote to outputDir: no need to read it back.
    showProject(std::shared_ptr<const core::Project>(report, &report->project), outputDir);
    // The capture's notes (a sample budget that ran out, a CPU capture) stay with its summary
    // until the next job: cards left without a sample can never get a kernel.
    QString summary = tr("Captured %1 cards in %2 s")
                          .arg(report->project.cards.size())
                          .arg(report->times.totalMs / 1000.0, 0, 'f', 1);
    for (const std::string& note : report->notes)
        summary += tr("; note: %1").arg(fromStd(note));
    m_jobStatus->endJob(summary);
}

void MainWindow::onCaptureFailed(const QString& error, bool cancelled)
{
    m_openModelAction->setEnabled(true);
    m_jobStatus->endJob(cancelled ? tr("Capture cancelled") : tr("Capture failed"));
    if (!cancelled)
        reportError(tr("Capture Failed"), error);
}

QString MainWindow::aboutText() const
{
    QString text = tr("Kernel Forge %1\nQt %2 (built with %3)\nCUDA %4 (NVRTC, compiles candidates)")
                       .arg(QString::fromLatin1(core::kKforgeVersion), QString::fromLatin1(qVersion()),
                            QStringLiteral(QT_VERSION_STR), fromStd(core::NvrtcCompiler().nvrtcVersion()));
    if (const auto& project = m_session->project()) {
        text += QLatin1Char('\n') +
            tr("Open project captured with torch %1 (Kernel Forge %2) on %3 (%4)")
                .arg(fromStd(project->capture.torchVersion), fromStd(project->capture.kforgeVersion),
                     fromStd(project->capture.deviceName), fromStd(project->capture.device));
    } else {
        text += QLatin1Char('\n') + tr("No project open");
    }
    return text;
}

void MainWindow::showAbout()
{
    QMessageBox::about(this, tr("About Kernel Forge"), aboutText());
}

void MainWindow::setErrorReporter(ErrorReporter reporter)
{
    m_errorReporter = std::move(reporter);
}

void MainWindow::reportError(const QString& title, const QString& message)
{
    statusBar()->showMessage(message, kStatusMessageMs);
    if (m_errorReporter)
        m_errorReporter(title, message);
}

void MainWindow::loadTreeForCurrentCard()
{
    ++m_treeGeneration; // a read or snapshot still in flight for the previous card is dropped
    const bool dropsRead = m_treeFileRequest != 0;
    m_treeFileRequest = 0;
    m_treeModel->clear();
    m_editorPane->clear();
    m_logModel->clear();
    m_chartsPane->clear();
    readTreeFile();
    if (dropsRead)
        finishLoadingStep();
}

void MainWindow::showTree(std::shared_ptr<const core::SearchTree> tree, const QList<LogEntry>& entries)
{
    if (m_treeModel->cardId() == fromStd(tree->cardId())) {
        m_treeModel->updateTree(tree); // the same card, grown: the views keep their state
    } else {
        m_treeModel->setTree(tree);
        m_treeView->fitToView();
        m_chartsPane->setBaselineNode(QString()); // a baseline node is one of the card's own
    }
    m_logModel->setEntries(entries);
    showInCharts(*tree);
    // The baseline is the eager the best node's speedup was measured against (one eager per card,
    // as in the cards table); before a search measured one, the capture's.
    const core::SearchNode* best = core::bestNode(*tree);
    std::optional<double> eager = best ? core::nodeEagerUs(*best) : std::nullopt;
    const core::OperatorCard* card = m_session->currentCard();
    if (!eager && card && card->eager)
        eager = card->eager->medianUs;
    m_chartsPane->setEagerBaselineUs(eager);
}

void MainWindow::showCurrentNode()
{
    const QString id = m_session->currentNodeId();
    m_logPane->setNodeFilter(id, m_session->currentCardId());
    m_chartsPane->showNode(id);
    const core::SearchNode* node = id.isEmpty() ? nullptr : m_treeModel->tree().find(id.toStdString());
    if (!node) {
        m_editorPane->clear();
        return;
    }
    const QString source = fromStd(node->candidate.source);
    m_editorPane->showNode(id, source, fromStd(node->candidate.launchPlan.dump(2)));
    const core::SearchNode* parent = node->parentId ? m_treeModel->tree().find(*node->parentId) : nullptr;
    if (parent)
        m_editorPane->showDiff(tr("parent %1").arg(fromStd(parent->id)), diffTextOf(parent->candidate),
                               tr("node %1").arg(id), diffTextOf(node->candidate));
    else
        m_editorPane->showDiff(tr("(root: no parent)"), QString(), tr("node %1").arg(id), diffTextOf(node->candidate));
}

void MainWindow::onBenchmarkRequested(const QString& source, const QString& planJson, const QString& parentNodeId)
{
    benchmarkAsChild(source, planJson, parentNodeId, QStringLiteral("manual edit"));
}

void MainWindow::benchmarkAsChild(const QString& source, const QString& planJson, const QString& parentNodeId,
                                  const QString& transformation)
{
    const core::OperatorCard* card = m_session->currentCard();
    if (!card || parentNodeId.isEmpty()) {
        reportError(tr("Benchmark Edit"), tr("select a node of a card's tree first"));
        return;
    }
    ManualEditRequest request;
    request.projectDir = m_session->projectDir();
    request.card = *card;
    request.parentNodeId = parentNodeId;
    request.source = source;
    request.planJson = planJson;
    request.transformation = transformation;
    if (!m_manualEditJob->start(std::move(request))) {
        statusBar()->showMessage(tr("An edit is already being benchmarked"), kStatusMessageMs);
        return;
    }
    m_editorPane->setBusy(true);
    updateRunActions();
    statusBar()->showMessage(tr("Benchmarking the edit of node %1 (compile, validate, time)...").arg(parentNodeId));
}

void MainWindow::setOptimizeCustomizer(std::function<void(OptimizeJobRequest&)> customizer)
{
    m_optimizeCustomizer = std::move(customizer);
}

bool MainWindow::startOptimize(const QStringList& cardIds)
{
    if (!m_session->hasProject() || m_optimizeJob->isRunning() || m_captureRunner->isRunning())
        return false;
    OptimizeJobRequest request;
    request.projectDir = m_session->projectDir();
    for (const QString& id : cardIds)
        for (const core::OperatorCard& card : m_session->project()->cards)
            if (fromStd(card.id) == id)
                request.cards.push_back(card);
    if (request.cards.empty()) {
        reportError(tr("Optimize"), tr("no card to search: select one the built-in proposer covers"));
        return false;
    }
    request.budget.maxIterations = m_searchSettings.iterations;
    request.budget.wallTimeLimitS = m_searchSettings.timeLimitS;
    request.evaluateTimeoutS = m_searchSettings.evaluateTimeoutS;
    request.gpus = m_searchSettings.gpus;
    if (m_searchSettings.usesLlm()) {
        // The key is read from the named environment variable by the client; it is never stored.
        auto provider = core::parseLlmProvider(m_searchSettings.proposer.toStdString());
        core::LlmProviderConfig config = core::LlmProviderConfig::defaultsFor(
            provider.ok() ? provider.value() : core::LlmProvider::OpenAiCompatible);
        if (!m_searchSettings.baseUrl.isEmpty())
            config.baseUrl = m_searchSettings.baseUrl.toStdString();
        config.model = m_searchSettings.model.toStdString();
        if (!m_searchSettings.apiKeyEnv.isEmpty())
            config.apiKeyEnv = m_searchSettings.apiKeyEnv.toStdString();
        auto valid = config.validate();
        auto client =
            valid.ok() ? core::createLlmClient(config) : core::Result<std::unique_ptr<core::LlmClient>>(valid.error());
        if (!client) {
            reportError(tr("Optimize"), fromStd(client.error().toString()));
            return false;
        }
        request.llmClient = std::move(client.value());
    }
    if (m_optimizeCustomizer)
        m_optimizeCustomizer(request);
    if (!m_optimizeJob->start(std::move(request)))
        return false;
    m_jobStatus->beginJob(tr("Optimize"));
    updateRunActions();
    return true;
}

void MainWindow::showSavedTree(const QString& cardId, std::shared_ptr<const core::SearchTree> tree)
{
    if (!tree || cardId != m_session->currentCardId())
        return; // another card's: the cards table hears of it when the run ends
    const quint64 generation = m_treeGeneration;
    const quint64 request = ++m_treeRequest;
    QPointer<MainWindow> self(this);
    QThreadPool::globalInstance()->start([self, tree, generation, request]() {
        // Pure, on an immutable snapshot: fine off the GUI thread.
        auto entries = std::make_shared<QList<LogEntry>>(ValidationLogModel::entriesFromTree(*tree));
        QMetaObject::invokeMethod(
            qApp,
            [self, tree, entries, generation, request]() {
                if (!self || !self->isNewestTree(generation, request))
                    return;
                self->showTree(tree, *entries);
            },
            Qt::QueuedConnection);
    });
}

bool MainWindow::isNewestTree(quint64 generation, quint64 request)
{
    if (generation != m_treeGeneration || request <= m_treeShown)
        return false; // another card was selected, or a newer tree is shown already
    m_treeShown = request;
    return true;
}

void MainWindow::readTreeFile()
{
    const QString cardId = m_session->currentCardId();
    if (cardId.isEmpty() || !m_session->hasProject())
        return;
    const std::filesystem::path file =
        core::TreeStore::defaultPath(m_session->projectDir().toStdString(), cardId.toStdString());
    if (!QFileInfo::exists(QString::fromStdString(file.string())))
        return;                                  // not searched yet: the tree pane stays empty
    const quint64 generation = m_treeGeneration; // a card change in between drops the result
    const quint64 request = ++m_treeRequest;     // a snapshot shown meanwhile is newer: drops it too
    m_treeFileRequest = request;
    QPointer<MainWindow> self(this);
    QThreadPool::globalInstance()->start([self, file, generation, request]() {
        auto loaded = std::make_shared<core::Result<core::SearchTree>>(core::TreeStore(file).load());
        auto entries = std::make_shared<QList<LogEntry>>();
        if (loaded->ok())
            *entries = ValidationLogModel::entriesFromTree(loaded->value()); // pure: fine off the GUI thread
        QMetaObject::invokeMethod(
            qApp,
            [self, loaded, entries, generation, request]() {
                if (!self)
                    return;
                // Unless another card was selected, or a newer tree is shown already.
                if (self->isNewestTree(generation, request)) {
                    if (loaded->ok())
                        self->showTree(std::make_shared<const core::SearchTree>(std::move(loaded->value())), *entries);
                    else
                        self->reportError(tr("Open Search Tree"), fromStd(loaded->error().toString()));
                }
                if (request == self->m_treeFileRequest) {
                    self->m_treeFileRequest = 0;
                    self->finishLoadingStep();
                }
            },
            Qt::QueuedConnection);
    });
}

void MainWindow::updateRunActions()
{
    const bool running = m_optimizeJob && m_optimizeJob->isRunning();
    const bool open = m_session->hasProject();
    m_optimizeSelectedAction->setEnabled(open && !running && !m_session->currentCardId().isEmpty());
    m_optimizeAllAction->setEnabled(open && !running);
    m_stopAction->setEnabled(running);
    m_exportAction->setEnabled(open && !running && !(m_exportJob && m_exportJob->isRunning()));
    m_rebenchmarkAction->setEnabled(open && !running && !m_session->currentNodeId().isEmpty() &&
                                    !(m_manualEditJob && m_manualEditJob->isRunning()));
}

void MainWindow::setSearchSettings(const SearchSettings& settings)
{
    m_searchSettings = settings;
    updateProposerLabel();
    refreshSearchSummaries(); // which cards are "not covered" depends on the proposer
    if (m_settingsMode == SettingsMode::Persistent) {
        QSettings store;
        m_searchSettings.save(store);
    }
}

std::unique_ptr<views::ExportDialog> MainWindow::makeExportDialog()
{
    if (!m_session->hasProject())
        return nullptr;
    // The project and its trees as they are on disk now (a search may have run since it opened),
    // read once: the preview recomputes in memory as the options change.
    const std::filesystem::path dir = m_session->projectDir().toStdString();
    auto project = core::openProject(dir);
    if (!project) {
        reportError(tr("Export .cast"), fromStd(project.error().toString()));
        return nullptr;
    }
    auto trees = core::loadProjectTrees(dir, project.value());
    if (!trees) {
        reportError(tr("Export .cast"), fromStd(trees.error().toString()));
        return nullptr;
    }
    auto loaded = std::make_shared<std::pair<core::Project, std::map<std::string, core::SearchTree>>>(
        std::move(project.value()), std::move(trees.value()));
    const auto preview = [loaded](double minSpeedup) {
        QList<views::ExportPreviewLine> lines;
        for (const core::ExportPreviewRow& row : core::previewCastExport(loaded->first, loaded->second, {}, minSpeedup))
            lines.append({fromStd(row.cardId), fromStd(row.op), row.ships, fromStd(row.reason)});
        return lines;
    };
    const auto architectureProblem = [](const QString& arch) {
        // As `kforge export --arch` checks it.
        const std::string name = arch.toStdString();
        return core::isArchName(name) && core::NvrtcCompiler::isValidArchitecture(name)
            ? QString()
            : tr("Architecture '%1': expected sm_NN (e.g. sm_90).").arg(arch);
    };
    return std::make_unique<views::ExportDialog>(m_session->projectDir() + QStringLiteral(".cast"),
                                                 core::kDefaultMinSpeedup, preview, architectureProblem, this);
}

bool MainWindow::startExport(const QString& file)
{
    views::ExportChoices choices;
    choices.file = file;
    choices.minSpeedup = core::kDefaultMinSpeedup;
    return startExport(choices);
}

bool MainWindow::startExport(const views::ExportChoices& choices)
{
    if (!m_session->hasProject() || m_exportJob->isRunning() || m_optimizeJob->isRunning())
        return false;
    // The policy of `kforge export` (core::defaultExportRequest): min speedup, sanitizer gate,
    // worker, and the in-model check through the runtime, which drops a kernel that breaks accuracy
    // or slows the model (not run in builds without CUDA). One difference, as the app has no
    // --no-model: a model file that is gone or changed since the capture makes a kernels-only
    // package (the audit says why) instead of an error. Reading and hashing the model is the
    // export's work, on its thread.
    core::ExportRequest request =
        core::defaultExportRequest(m_session->projectDir().toStdString(), choices.file.toStdString());
    request.model = core::ModelInclusion::IfUnchanged;
    request.minSpeedup = choices.minSpeedup;
    for (const QString& id : choices.cardIds)
        request.cardIds.push_back(id.toStdString());
    for (const QString& arch : choices.architectures)
        request.architectures.push_back(arch.toStdString());
    if (!m_exportJob->start(std::move(request)))
        return false;
    m_jobStatus->beginJob(tr("Export .cast"));
    updateRunActions();
    return true;
}

void MainWindow::updateProposerLabel()
{
    if (!m_proposerLabel)
        return;
    m_proposerLabel->setText(m_searchSettings.usesLlm()
                                 ? tr("Proposer: %1 %2").arg(m_searchSettings.proposer, m_searchSettings.model)
                                 : tr("Proposer: built-in"));
}

QString MainWindow::gpuStatusText() const
{
    return m_gpuLabel->text();
}

void MainWindow::probeGpu()
{
    m_gpuProbePending = true;
    QPointer<MainWindow> self(this);
    QThreadPool::globalInstance()->start([self]() {
        core::WorkerCommand command;
        command.executable = core::workerPath(std::nullopt);
        core::WorkerClient worker(command);
        const core::WorkerResponse hello = worker.start();
        QString text;
        QString architecture;
        if (!hello.ok()) {
            text = tr("no GPU worker: compile-only");
        } else {
            const nlohmann::json info = hello.result.value("info", nlohmann::json());
            if (info.is_object() && info.contains("architecture") && info.value("gpu", nlohmann::json()).is_string()) {
                architecture = QString::fromStdString(info.value("architecture", std::string()));
                text = tr("GPU: %1 (%2)")
                           .arg(QString::fromStdString(info.value("gpu", std::string())),
                                QString::fromStdString(info.value("architecture", std::string())));
            } else {
                text = tr("no GPU: compile-only");
            }
        }
        worker.shutdown();
        QMetaObject::invokeMethod(
            qApp,
            [self, text, architecture]() {
                if (!self)
                    return;
                self->m_gpuLabel->setText(text);
                if (architecture.startsWith(QLatin1String("sm_")))
                    self->m_gpuArchitecture = architecture;
                self->m_gpuProbePending = false;
                self->finishLoadingStep();
            },
            Qt::QueuedConnection);
    });
}

void MainWindow::compileListing(const QString& nodeId, const QString& source)
{
    // NVRTC for the GPU the worker reported (sm_90 before it answers, or without one), off the GUI
    // thread; the pane drops a listing for a node it no longer shows.
    const std::string architecture = m_gpuArchitecture.toStdString();
    ++m_listingsPending; // a screenshot of the tab waits for it (isLoading)
    QPointer<MainWindow> self(this);
    QThreadPool::globalInstance()->start([self, nodeId, source = source.toStdString(), architecture]() {
        const core::KernelListing listing = core::kernelListing(core::NvrtcCompiler(), source, architecture);
        QString message = listing.problem.empty()
            ? tr("Node %1 compiled for %2 (PTX for its compute architecture, SASS from nvdisasm)")
                  .arg(nodeId, QString::fromStdString(architecture))
            : tr("Node %1 for %2: %3")
                  .arg(nodeId, QString::fromStdString(architecture), QString::fromStdString(listing.problem));
        QMetaObject::invokeMethod(
            qApp,
            [self, nodeId, listing, message]() {
                if (!self)
                    return;
                self->m_editorPane->showAssembly(nodeId, QString::fromStdString(listing.ptx),
                                                 QString::fromStdString(listing.sass), message);
                --self->m_listingsPending;
                self->finishLoadingStep();
            },
            Qt::QueuedConnection);
    });
}

bool MainWindow::showDiffAgainst(const QString& otherId)
{
    const QString id = m_session->currentNodeId();
    const core::SearchNode* node = id.isEmpty() ? nullptr : m_treeModel->tree().find(id.toStdString());
    const core::SearchNode* other = m_treeModel->tree().find(otherId.toStdString());
    if (!node || !other)
        return false;
    m_editorPane->showDiff(tr("node %1").arg(otherId), diffTextOf(other->candidate), tr("node %1").arg(id),
                           diffTextOf(node->candidate));
    m_editorPane->setCurrentTab(views::KernelEditorPane::Tab::Diff);
    // The other node stays the charts' baseline for every node of this card until another is
    // picked or the card changes.
    m_chartsPane->setBaselineNode(otherId);
    return true;
}

void MainWindow::showInCharts(const core::SearchTree& tree)
{
    // One line per proposer that grew the card's tree (built-in, each LLM provider + model).
    QList<NamedRun> runs = LatencySeriesModel::runsByProposer(tree);
    if (runs.size() > 1)
        m_chartsPane->setRuns(std::move(runs));
    else
        m_chartsPane->setTree(tree);
}

} // namespace kforge::app
