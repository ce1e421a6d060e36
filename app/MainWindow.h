#pragma once
// The Kernel Forge main window: menus, the dock panes over one Session, the status bar, opening
// projects and capturing models through CaptureJobRunner.
//
// Thread: GUI thread only. Settings (layout, geometry, recent projects) go to the application's
// default QSettings when the window is Persistent; an Ephemeral window (screenshots, tests) neither
// reads nor writes them.

#include "app/RecentProjects.h"
#include "capture/CaptureJob.h"
#include "models/SearchSettings.h"
#include "views/capture/CaptureRequest.h"

#include <QHash>
#include <QMainWindow>

#include <functional>
#include <memory>

class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QPlainTextEdit;

namespace kforge::core {
class SearchTree;
} // namespace kforge::core

namespace kforge::views {
class CardDetailsPane;
class CardsPane;
class KernelEditorPane;
class TreeGraphView;
class TreePane;
class ValidationLogPane;
class LatencyChartsPane;
class JobStatusWidget;
class ProjectSummaryPane;
class ExportDialog;
struct ExportChoices;
} // namespace kforge::views

namespace kforge::app {

class CaptureJobRunner;
class ExportJob;
class ManualEditJob;
class OptimizeJob;
struct OptimizeJobRequest;
class CardsTableModel;
class SearchTreeModel;
class ValidationLogModel;
struct LogEntry;
struct CardSearchSummary;
class Session;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    enum class SettingsMode { Persistent, Ephemeral };
    /// The panes below the cards table, each in front of the one it is tabbed with when shown
    /// (Diff: the Kernel Editor's Diff tab).
    enum class Pane { Tree, Editor, Diff, Assembly, Charts, Log };
    /// Shows an error to the user: `title` names the action, `message` is the one-line error.
    using ErrorReporter = std::function<void(const QString& title, const QString& message)>;

    explicit MainWindow(SettingsMode mode = SettingsMode::Persistent, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Opens the project in `dir`. On failure reports the one-line error and keeps the open project.
    bool openProject(const QString& dir);
    /// Starts a capture in the background; its project is opened when it succeeds. False (reported)
    /// while another capture runs.
    bool startCapture(core::CaptureOptions options);
    /// Replaces the default error reporter (a modal QMessageBox::critical).
    void setErrorReporter(ErrorReporter reporter);

    /// Puts every pane back where a fresh install has it, visible.
    void resetLayout();
    /// Brings `pane` to the front of its tab group and gives it the keyboard focus.
    void showPane(Pane pane);
    /// True while something the window shows is still being read on a pool thread: the cards'
    /// search summaries (after opening a project, a search or a settings change), the current
    /// card's tree file (after selecting a card) or this workstation's GPU (at start).
    /// loadingFinished() is emitted when the last of them arrives (shown, or reported as an error).
    bool isLoading() const;
    /// Writes geometry and dock layout to QSettings (Persistent windows only; also done on close).
    void saveSettings() const;
    /// The text of Help > About: versions of Kernel Forge, Qt and the open project's torch.
    QString aboutText() const;

    Session* session() const { return m_session; }
    CardsTableModel* cardsModel() const { return m_cardsModel; }
    CaptureJobRunner* captureRunner() const { return m_captureRunner; }
    views::CardsPane* cardsPane() const { return m_cardsPane; }
    views::CardDetailsPane* cardDetailsPane() const { return m_detailsPane; }
    views::ProjectSummaryPane* projectSummaryPane() const { return m_summaryPane; }
    views::JobStatusWidget* jobStatus() const { return m_jobStatus; }
    SearchTreeModel* searchTreeModel() const { return m_treeModel; }
    ManualEditJob* manualEditJob() const { return m_manualEditJob; }
    OptimizeJob* optimizeJob() const { return m_optimizeJob; }
    ExportJob* exportJob() const { return m_exportJob; }
    /// File > Export .cast to `file` with `kforge export`'s defaults: the open project's best
    /// kernels, the model when its file is still the captured one. False when nothing can start.
    bool startExport(const QString& file);
    /// The same with the export dialog's choices (file, minimum speedup, cards, architectures).
    bool startExport(const views::ExportChoices& choices);
    /// File > Export's dialog for the open project, its preview computed from the project's search
    /// trees (read here, once); nullptr (the error reported) when no project is open or a tree
    /// cannot be read. The menu runs it and starts the export it accepts.
    std::unique_ptr<views::ExportDialog> makeExportDialog();
    /// The Export Audit pane: the last export of this session, its summary and the audit (every
    /// card's decision and the notes), kept until the next export.
    QPlainTextEdit* exportAudit() const { return m_auditView; }
    /// Test seam: how Run > Optimize builds each card's proposer and evaluator (default: built-in
    /// proposer, GPU worker). Called with the request before it starts.
    void setOptimizeCustomizer(std::function<void(OptimizeJobRequest&)> customizer);
    /// Run > Optimize for `cardIds` (the Run menu passes the current card, or every searchable card).
    bool startOptimize(const QStringList& cardIds);
    QString gpuStatusText() const;
    /// Run > Settings: what Optimize uses (QSettings in Persistent windows).
    const SearchSettings& searchSettings() const { return m_searchSettings; }
    void setSearchSettings(const SearchSettings& settings);
    /// The editor's Diff tab: node `otherId` (left) against the current node (right), and `otherId`
    /// as the node chart's baseline (until the card changes); false when either is not in the
    /// card's tree. View > Compare With Node... asks for `otherId`.
    bool showDiffAgainst(const QString& otherId);
    ValidationLogModel* validationLogModel() const { return m_logModel; }
    views::ValidationLogPane* validationLog() const { return m_logPane; }
    views::LatencyChartsPane* latencyCharts() const { return m_chartsPane; }
    views::TreeGraphView* treeView() const { return m_treeView; }
    views::TreePane* treePane() const { return m_treePane; }
    views::KernelEditorPane* kernelEditor() const { return m_editorPane; }
    const RecentProjects& recentProjects() const { return m_recent; }
    QMenu* recentProjectsMenu() const { return m_recentMenu; }

    static core::CaptureOptions captureOptionsFor(const views::CaptureRequest& request);

Q_SIGNALS:
    /// isLoading() turned false.
    void loadingFinished();

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void createDocks();
    /// Every dock pane, in View menu order.
    QList<QDockWidget*> docks() const;
    void createMenus();
    void createStatusBar();
    void restoreSettings();
    void rebuildRecentMenu();
    void showProject(std::shared_ptr<const core::Project> project, const QString& dir);
    void updateProjectLabels();
    void openProjectDialog();
    void openModelDialog();
    void showAbout();
    void onCaptureProgress(const QString& phase, int done, int total);
    void onCaptureSucceeded(std::shared_ptr<const core::CaptureReport> report, const QString& outputDir);
    void onCaptureFailed(const QString& error, bool cancelled);
    void reportError(const QString& title, const QString& message);
    /// Clears the tree, editor, log and charts and reads the new current card's tree.
    void loadTreeForCurrentCard();
    /// Opening a card: reads its search tree file (docs/search.md) on a pool thread and shows it; a
    /// damaged file is a dialog. A newer card selection, or a newer snapshot of a run, supersedes a
    /// read in flight. The file is read only then: a run of this app comes as snapshots
    /// (showSavedTree), and a run of another process (kforge optimize on the same project) is not
    /// followed live: selecting the card again reads what it saved so far.
    void readTreeFile();
    /// OptimizeJob::treeSaved: shows the snapshot when it is the current card's, its log entries
    /// computed on a pool thread first (no file read; the tree is shared, not copied).
    void showSavedTree(const QString& cardId, std::shared_ptr<const core::SearchTree> tree);
    /// For a tree arriving from the pool (file read or snapshot) tagged with the card generation
    /// and the request number it was started with: true (and it is now the shown one) when it is
    /// still the current card's and newer than the tree shown.
    bool isNewestTree(quint64 generation, quint64 request);
    /// The tree in the tree pane (reset for a new card, updated for the same card grown), the log
    /// `entries` and the charts.
    void showTree(std::shared_ptr<const core::SearchTree> tree, const QList<LogEntry>& entries);
    /// The current node's source and plan in the editor, and its diff against its parent.
    void showCurrentNode();
    void onBenchmarkRequested(const QString& source, const QString& planJson, const QString& parentNodeId);
    /// Benchmarks `source` + `planJson` as a new child of `parentNodeId` (the editor's Benchmark, or
    /// Run > Re-benchmark Node with the node's own source).
    void benchmarkAsChild(const QString& source, const QString& planJson, const QString& parentNodeId,
                          const QString& transformation);
    void updateRunActions();
    /// Re-reads every card's tree on a pool thread for the cards table's search columns and the
    /// per-card speedup chart.
    void refreshSearchSummaries();
    /// The cards table's search columns and the per-card speedup chart of `project`.
    void showSearchSummaries(const core::Project& project, const QHash<QString, CardSearchSummary>& summaries);
    /// Starts a kforge-worker on a pool thread and shows what it says about the GPU ("GPU: NVIDIA
    /// H200 (sm_90)" or "no GPU: compile-only").
    void probeGpu();
    void updateProposerLabel();
    void showInCharts(const core::SearchTree& tree);
    /// Emits loadingFinished() when nothing is being read any more.
    void finishLoadingStep();
    /// Compiles a node's saved source for the PTX / SASS tab and hands the listing to the editor.
    void compileListing(const QString& nodeId, const QString& source);

    const SettingsMode m_settingsMode;
    Session* m_session;
    CardsTableModel* m_cardsModel;
    CaptureJobRunner* m_captureRunner;
    RecentProjects m_recent;
    ErrorReporter m_errorReporter;
    views::CaptureRequest m_lastCaptureRequest;

    views::ProjectSummaryPane* m_summaryPane = nullptr;
    views::CardsPane* m_cardsPane = nullptr;
    views::CardDetailsPane* m_detailsPane = nullptr;
    QDockWidget* m_projectDock = nullptr;
    QDockWidget* m_detailsDock = nullptr;
    SearchTreeModel* m_treeModel = nullptr;
    views::TreeGraphView* m_treeView = nullptr; // inside m_treePane
    views::TreePane* m_treePane = nullptr;
    views::KernelEditorPane* m_editorPane = nullptr;
    QDockWidget* m_treeDock = nullptr;
    QDockWidget* m_editorDock = nullptr;
    ValidationLogModel* m_logModel = nullptr;
    views::ValidationLogPane* m_logPane = nullptr;
    QDockWidget* m_logDock = nullptr;
    views::LatencyChartsPane* m_chartsPane = nullptr;
    QDockWidget* m_chartsDock = nullptr;
    QPlainTextEdit* m_auditView = nullptr;
    QDockWidget* m_auditDock = nullptr;
    ManualEditJob* m_manualEditJob = nullptr;
    OptimizeJob* m_optimizeJob = nullptr;
    ExportJob* m_exportJob = nullptr;
    QAction* m_exportAction = nullptr;
    std::function<void(OptimizeJobRequest&)> m_optimizeCustomizer;
    SearchSettings m_searchSettings;
    QAction* m_optimizeSelectedAction = nullptr;
    QAction* m_optimizeAllAction = nullptr;
    QAction* m_stopAction = nullptr;
    QAction* m_rebenchmarkAction = nullptr;
    quint64 m_treeGeneration = 0;    // bumped per card change; a tree read or snapshot of another is dropped
    quint64 m_treeRequest = 0;       // bumped per tree read or snapshot started
    quint64 m_treeShown = 0;         // the request whose tree is shown; an older one arriving later is dropped
    quint64 m_summaryGeneration = 0; // bumped per tree read; an older read's result is dropped
    bool m_summariesPending = false; // the read of generation m_summaryGeneration is in flight
    quint64 m_treeFileRequest = 0;   // the current card's tree file read in flight, 0 when none
    bool m_gpuProbePending = false;
    int m_listingsPending = 0;                           // PTX / SASS listings compiling for the editor pane
    QString m_gpuArchitecture = QStringLiteral("sm_90"); // the worker's GPU once it answered; NVRTC's target
    QMenu* m_recentMenu = nullptr;
    QAction* m_openModelAction = nullptr;
    QLabel* m_deviceLabel = nullptr;
    QLabel* m_gpuLabel = nullptr;      // this workstation's GPU, as kforge-worker describes it
    QLabel* m_proposerLabel = nullptr; // the proposer Optimize uses (Run > Settings)
    views::JobStatusWidget* m_jobStatus = nullptr;
};

} // namespace kforge::app
