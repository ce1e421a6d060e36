#pragma once
// The kernel editor pane: the CUDA source of one search node (QScintilla with CudaLexer, line
// numbers, compiler diagnostics on their lines) beside its launch plan JSON, a Benchmark button,
// a Diff tab with a side-by-side diff of any two sources (SideBySideDiffView), and a PTX / SASS tab
// (AssemblyView) the owner fills on request.
//
// Usage (the owner does all engine work; this pane does none):
//   pane->showNode("n12", source, planJson);                 // the selected node, unmodified
//   pane->showDiff("n3 (parent)", parentSource, "n12", source);
//   connect(pane, &KernelEditorPane::benchmarkRequested, owner, ...);
//     // the owner: pane->setBusy(true); compile, validate, time the edit as a manual-edit child
//     // of parentNodeId; pane->setDiagnostics(fromTheCompile); pane->setBusy(false);
//   connect(pane, &KernelEditorPane::assemblyRequested, owner, ...);
//     // the owner compiles the node's source off the GUI thread, then
//     // pane->showAssembly(nodeId, ptx, sass, message);
//
// Thread: GUI thread only.

#include <QList>
#include <QString>
#include <QWidget>

class QLabel;
class QListWidget;
class QListWidgetItem;
class QPushButton;
class QTabWidget;
class QsciScintilla;

namespace kforge::views {

class AssemblyView;
class SideBySideDiffView;

/// A compiler message located in the editor's source (the Qt-side mirror of core's Diagnostic,
/// which lives in a library views do not link). `line` and `column` are 1-based, 0 when unknown;
/// the column counts bytes of the UTF-8 line, a tab counting as one (as NVRTC reports it).
/// `severity` is "error", "warning" or "remark"/"note"; any severity containing "error" (e.g.
/// "fatal error") is shown as an error.
struct EditorDiagnostic {
    int line = 0;
    int column = 0;
    QString severity;
    QString message;

    bool operator==(const EditorDiagnostic&) const = default;
};

class KernelEditorPane : public QWidget {
    Q_OBJECT
public:
    /// Margin markers of the source editor (sourceEditor()->markersAtLine(line) & (1 << marker)).
    static constexpr int ErrorMarker = 0;
    static constexpr int WarningMarker = 1;
    static constexpr int RemarkMarker = 2;
    /// Squiggle indicators under the located token of an error or warning.
    static constexpr int ErrorIndicator = 8;
    static constexpr int WarningIndicator = 9;

    enum class Tab { Editor, Diff, Assembly };

    explicit KernelEditorPane(QWidget* parent = nullptr);

    /// Shows a node's candidate for editing: replaces both texts, clears the diagnostics and the
    /// modified state. `planJson` is shown as given (pass it indented). Benchmarking an edit will
    /// name `nodeId` as the parent.
    void showNode(const QString& nodeId, const QString& source, const QString& planJson);
    /// No node: empty editors, Benchmark disabled.
    void clear();

    QString nodeId() const { return m_nodeId; }
    QString source() const;
    QString planJson() const;
    /// True when the source or the plan was edited since showNode()/clear().
    bool isModified() const { return m_modified; }

    /// Replaces the diagnostics shown: errors and warnings get a margin marker, a squiggle under
    /// the token at their column (the whole line when the column is 0) and an annotation below the
    /// line; remarks get a marker and an annotation. All of them, including those without a line
    /// in the source, are listed under the editor; activating an entry moves the cursor there.
    void setDiagnostics(const QList<EditorDiagnostic>& diagnostics);
    QList<EditorDiagnostic> diagnostics() const { return m_diagnostics; }

    /// While busy (a benchmark of this pane's edit runs), Benchmark is disabled; editing is not.
    void setBusy(bool busy);
    bool isBusy() const { return m_busy; }

    /// Fills the Diff tab (it does not switch to it): typically the shown node against its
    /// parent, but any two sources work.
    void showDiff(const QString& leftTitle, const QString& leftSource, const QString& rightTitle,
                  const QString& rightSource);

    /// Fills the PTX / SASS tab with the listing of `nodeId`'s saved source (assemblyRequested);
    /// ignored when another node is shown by then.
    void showAssembly(const QString& nodeId, const QString& ptx, const QString& sass, const QString& message);
    void setCurrentTab(Tab tab);
    Tab currentTab() const;

    /// The one-line message under the button (plan errors, diagnostic counts, busy state).
    QString message() const;

    QsciScintilla* sourceEditor() const { return m_source; }
    QsciScintilla* planEditor() const { return m_plan; }
    SideBySideDiffView* diffView() const { return m_diff; }
    AssemblyView* assemblyView() const { return m_assembly; }

Q_SIGNALS:
    /// Benchmark was pressed with a plan that is empty (the source may carry it, see
    /// docs/kernel-contract.md) or a JSON object. The owner compiles, validates and times the
    /// candidate and adds it as a manual-edit child of `parentNodeId`.
    void benchmarkRequested(const QString& source, const QString& planJson, const QString& parentNodeId);
    void modifiedChanged(bool modified);
    /// The PTX / SASS tab is shown for a node whose listing it does not have: the owner compiles
    /// `source` (the node's saved source, not the edit) and calls showAssembly. Once per node shown.
    void assemblyRequested(const QString& nodeId, const QString& source);

private:
    void requestBenchmark();
    void updateModified();
    void updateHeader();
    void updateBenchmarkEnabled();
    void setMessage(const QString& text, bool isError);
    void jumpTo(QListWidgetItem* item);
    void requestAssemblyIfShown();

    QString m_nodeId;
    QList<EditorDiagnostic> m_diagnostics;
    bool m_modified = false;
    bool m_busy = false;
    bool m_busyMessageShown = false;
    bool m_replacingText = false;

    QLabel* m_header;
    QPushButton* m_benchmark;
    QLabel* m_message;
    QTabWidget* m_tabs;
    QsciScintilla* m_source;
    QsciScintilla* m_plan;
    QListWidget* m_diagnosticsList;
    SideBySideDiffView* m_diff;
    AssemblyView* m_assembly;
    QString m_assemblyNodeId; // the node whose listing was requested (and is shown once delivered)
    QString m_assemblySource; // the saved source of the node shown
};

} // namespace kforge::views
