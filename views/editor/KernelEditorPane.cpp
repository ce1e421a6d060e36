#include "views/editor/KernelEditorPane.h"

#include "views/editor/AssemblyView.h"
#include "views/editor/CudaLexer.h"
#include "views/editor/QsciHeaders.h"
#include "views/editor/SideBySideDiffView.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QLabel>
#include <QListWidget>
#include <QMap>
#include <QPair>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace kforge::views {
namespace {

enum class Level { Error, Warning, Remark };

// Style numbers for annotations, above the lexers' styles (C++: 0-27 and 64-91 for inactive
// code) and the predefined ones (32-39).
constexpr int kErrorAnnotationStyle = 120;
constexpr int kWarningAnnotationStyle = 121;
constexpr int kRemarkAnnotationStyle = 122;

constexpr int kLineNumberMargin = 0;
constexpr int kSymbolMargin = 1;
constexpr int kFoldMargin = 2;

constexpr int kDiagnosticLineRole = Qt::UserRole;
constexpr int kDiagnosticColumnRole = Qt::UserRole + 1;

const QColor kErrorColor(0xc0, 0x1c, 0x28);
const QColor kWarningColor(0xd9, 0x7a, 0x00);
const QColor kRemarkColor(0x70, 0x70, 0x70);

Level levelOf(const QString& severity)
{
    if (severity.contains(QLatin1String("error"), Qt::CaseInsensitive))
        return Level::Error;
    if (severity.contains(QLatin1String("warning"), Qt::CaseInsensitive))
        return Level::Warning;
    return Level::Remark;
}

QFont monospace()
{
    return QFontDatabase::systemFont(QFontDatabase::FixedFont);
}

QsciStyle annotationStyle(Level level)
{
    QFont font = monospace();
    font.setItalic(level == Level::Remark);
    switch (level) {
    case Level::Error:
        return QsciStyle(kErrorAnnotationStyle, QStringLiteral("error annotation"), kErrorColor,
                         QColor(0xfd, 0xec, 0xec), font);
    case Level::Warning:
        return QsciStyle(kWarningAnnotationStyle, QStringLiteral("warning annotation"), QColor(0x8a, 0x4b, 0x00),
                         QColor(0xfd, 0xf4, 0xe0), font);
    case Level::Remark:
        break;
    }
    return QsciStyle(kRemarkAnnotationStyle, QStringLiteral("remark annotation"), kRemarkColor,
                     QColor(0xf4, 0xf4, 0xf4), font);
}

void setUpCodeEditor(QsciScintilla* editor)
{
    editor->setUtf8(true);
    editor->setEolMode(QsciScintilla::EolUnix);
    editor->setWrapMode(QsciScintilla::WrapNone);
    editor->SendScintilla(QsciScintillaBase::SCI_SETSCROLLWIDTH, 1);
    editor->SendScintilla(QsciScintillaBase::SCI_SETSCROLLWIDTHTRACKING, 1);
    editor->setTabWidth(4);
    editor->setIndentationsUseTabs(false);
    editor->setAutoIndent(true);
    editor->setBraceMatching(QsciScintilla::SloppyBraceMatch);
    editor->setCaretLineVisible(true);
    editor->setCaretLineBackgroundColor(QColor(0xf3, 0xf6, 0xfa));
    editor->setMarginsFont(monospace());
    editor->setMarginType(kLineNumberMargin, QsciScintilla::NumberMargin);
    editor->setMarginLineNumbers(kLineNumberMargin, true);
    editor->setMarginWidth(kFoldMargin, 0);
    auto fitLineNumbers = [editor] {
        const int digits = static_cast<int>(QString::number(editor->lines()).size());
        editor->setMarginWidth(kLineNumberMargin, QString(std::max(digits, 2) + 1, QLatin1Char('9')));
    };
    fitLineNumbers();
    QObject::connect(editor, &QsciScintilla::linesChanged, editor, fitLineNumbers);
}

// Sets text without an undo step back to the previous node's text, and marks it unmodified.
void replaceText(QsciScintilla* editor, const QString& text)
{
    editor->setText(text);
    editor->convertEols(QsciScintilla::EolUnix);
    editor->SendScintilla(QsciScintillaBase::SCI_EMPTYUNDOBUFFER);
    editor->setModified(false);
}

QString firstLine(const QString& text)
{
    const qsizetype end = text.indexOf(QLatin1Char('\n'));
    return end < 0 ? text : text.left(end);
}

} // namespace

KernelEditorPane::KernelEditorPane(QWidget* parent)
    : QWidget(parent), m_header(new QLabel(this)), m_benchmark(new QPushButton(tr("Benchmark"), this)),
      m_message(new QLabel(this)), m_tabs(new QTabWidget(this)), m_source(new QsciScintilla(this)),
      m_plan(new QsciScintilla(this)), m_diagnosticsList(new QListWidget(this)), m_diff(new SideBySideDiffView(this)),
      m_assembly(new AssemblyView(this))
{
    m_header->setObjectName(QStringLiteral("editorHeader"));
    m_header->setTextFormat(Qt::PlainText);
    m_benchmark->setObjectName(QStringLiteral("benchmarkButton"));
    m_benchmark->setToolTip(tr("Compile, validate and time the edited kernel as a new child of this node"));
    m_message->setObjectName(QStringLiteral("editorMessage"));
    m_message->setTextFormat(Qt::PlainText);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_tabs->setObjectName(QStringLiteral("editorTabs"));

    m_source->setObjectName(QStringLiteral("sourceEditor"));
    setUpCodeEditor(m_source);
    m_source->setLexer(new CudaLexer(m_source));
    m_source->setMarginType(kSymbolMargin, QsciScintilla::SymbolMargin);
    m_source->setMarginWidth(kSymbolMargin, 16);
    m_source->setMarginMarkerMask(kSymbolMargin, (1 << ErrorMarker) | (1 << WarningMarker) | (1 << RemarkMarker));
    m_source->markerDefine(QsciScintilla::Circle, ErrorMarker);
    m_source->setMarkerBackgroundColor(kErrorColor, ErrorMarker);
    m_source->setMarkerForegroundColor(kErrorColor.darker(), ErrorMarker);
    m_source->markerDefine(QsciScintilla::RightTriangle, WarningMarker);
    m_source->setMarkerBackgroundColor(kWarningColor, WarningMarker);
    m_source->setMarkerForegroundColor(kWarningColor.darker(), WarningMarker);
    m_source->markerDefine(QsciScintilla::SmallRectangle, RemarkMarker);
    m_source->setMarkerBackgroundColor(kRemarkColor, RemarkMarker);
    m_source->setMarkerForegroundColor(kRemarkColor, RemarkMarker);
    m_source->indicatorDefine(QsciScintilla::SquiggleIndicator, ErrorIndicator);
    m_source->setIndicatorForegroundColor(kErrorColor, ErrorIndicator);
    m_source->indicatorDefine(QsciScintilla::SquiggleIndicator, WarningIndicator);
    m_source->setIndicatorForegroundColor(kWarningColor, WarningIndicator);
    m_source->setAnnotationDisplay(QsciScintilla::AnnotationBoxed);

    m_plan->setObjectName(QStringLiteral("planEditor"));
    setUpCodeEditor(m_plan);
    m_plan->setTabWidth(2);
    auto* jsonLexer = new QsciLexerJSON(m_plan);
    jsonLexer->setDefaultFont(monospace());
    jsonLexer->setFont(monospace());
    m_plan->setLexer(jsonLexer);
    m_plan->setMarginWidth(kSymbolMargin, 0);

    m_diagnosticsList->setObjectName(QStringLiteral("diagnosticsList"));
    m_diagnosticsList->setMaximumHeight(m_diagnosticsList->fontMetrics().height() * 7);
    m_diagnosticsList->setVisible(false);

    auto* sourceBox = new QWidget(this);
    auto* sourceLayout = new QVBoxLayout(sourceBox);
    sourceLayout->setContentsMargins(0, 0, 0, 0);
    sourceLayout->addWidget(new QLabel(tr("CUDA source"), sourceBox));
    sourceLayout->addWidget(m_source, 1);
    sourceLayout->addWidget(m_diagnosticsList);
    auto* planBox = new QWidget(this);
    auto* planLayout = new QVBoxLayout(planBox);
    planLayout->setContentsMargins(0, 0, 0, 0);
    planLayout->addWidget(new QLabel(tr("Launch plan (JSON)"), planBox));
    planLayout->addWidget(m_plan, 1);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->setObjectName(QStringLiteral("editorSplitter"));
    splitter->addWidget(sourceBox);
    splitter->addWidget(planBox);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setSizes({3000, 2000}); // 3:2 from the start, not only of the space past the size hints
    splitter->setChildrenCollapsible(false);

    m_tabs->addTab(splitter, tr("Source"));
    m_tabs->addTab(m_diff, tr("Diff"));
    m_assembly->setObjectName(QStringLiteral("assemblyView"));
    m_assembly->clear(tr("No node selected"));
    m_tabs->addTab(m_assembly, tr("PTX / SASS"));
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] { requestAssemblyIfShown(); });

    auto* top = new QHBoxLayout;
    top->addWidget(m_header, 1);
    top->addWidget(m_message, 2);
    top->addWidget(m_benchmark);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(m_tabs, 1);

    connect(m_benchmark, &QPushButton::clicked, this, &KernelEditorPane::requestBenchmark);
    connect(m_source, &QsciScintilla::modificationChanged, this, &KernelEditorPane::updateModified);
    connect(m_plan, &QsciScintilla::modificationChanged, this, &KernelEditorPane::updateModified);
    connect(m_diagnosticsList, &QListWidget::itemActivated, this, &KernelEditorPane::jumpTo);

    clear();
}

void KernelEditorPane::showNode(const QString& nodeId, const QString& source, const QString& planJson)
{
    m_nodeId = nodeId;
    setDiagnostics({});
    m_replacingText = true; // setText() flips the editors' modified state on and off again
    replaceText(m_source, source);
    replaceText(m_plan, planJson);
    m_replacingText = false;
    setMessage(QString(), false);
    updateModified();
    updateHeader();
    updateBenchmarkEnabled();
    // The listing follows the node's saved source; the same node shown again keeps it.
    if (nodeId != m_assemblyNodeId || source != m_assemblySource) {
        m_assemblyNodeId.clear();
        m_assemblySource = source;
        m_assembly->clear(nodeId.isEmpty()
                              ? tr("No node selected")
                              : tr("Node %1: its PTX and SASS are compiled when this tab is opened").arg(nodeId));
        requestAssemblyIfShown();
    }
}

void KernelEditorPane::showAssembly(const QString& nodeId, const QString& ptx, const QString& sass,
                                    const QString& message)
{
    if (nodeId != m_assemblyNodeId || nodeId != m_nodeId)
        return; // a listing for a node no longer shown
    m_assembly->setListing(ptx, sass, message);
}

void KernelEditorPane::requestAssemblyIfShown()
{
    if (m_tabs->currentWidget() != m_assembly || m_nodeId.isEmpty() || m_assemblyNodeId == m_nodeId)
        return;
    m_assemblyNodeId = m_nodeId;
    m_assembly->clear(tr("Compiling node %1 for its PTX and SASS...").arg(m_nodeId));
    Q_EMIT assemblyRequested(m_nodeId, m_assemblySource);
}

void KernelEditorPane::clear()
{
    showNode(QString(), QString(), QString());
}

QString KernelEditorPane::source() const
{
    return m_source->text();
}

QString KernelEditorPane::planJson() const
{
    return m_plan->text();
}

void KernelEditorPane::setDiagnostics(const QList<EditorDiagnostic>& diagnostics)
{
    m_diagnostics = diagnostics;
    m_source->markerDeleteAll();
    m_source->clearAnnotations();
    const long length = m_source->SendScintilla(QsciScintillaBase::SCI_GETLENGTH);
    for (int indicator : {ErrorIndicator, WarningIndicator}) {
        m_source->SendScintilla(QsciScintillaBase::SCI_SETINDICATORCURRENT, indicator);
        m_source->SendScintilla(QsciScintillaBase::SCI_INDICATORCLEARRANGE, 0, length);
    }
    m_diagnosticsList->clear();

    // Annotations per line (0-based), several diagnostics on a line stacking in order under the
    // style of the most severe one.
    QMap<int, QPair<Level, QStringList>> annotations;
    int errors = 0;
    int warnings = 0;
    const int lines = m_source->lines();
    for (const EditorDiagnostic& d : diagnostics) {
        const Level level = levelOf(d.severity);
        errors += level == Level::Error;
        warnings += level == Level::Warning;
        const QString severity = d.severity.isEmpty() ? QStringLiteral("error") : d.severity;
        const QString text = QStringLiteral("%1: %2").arg(severity, d.message);

        QString where;
        if (d.line > 0)
            where = d.column > 0 ? QStringLiteral("%1:%2").arg(d.line).arg(d.column) : QString::number(d.line);
        auto* item = new QListWidgetItem(where.isEmpty() ? firstLine(text)
                                                         : QStringLiteral("%1  %2").arg(where, firstLine(text)),
                                         m_diagnosticsList);
        item->setToolTip(text);
        item->setData(kDiagnosticLineRole, d.line);
        item->setData(kDiagnosticColumnRole, d.column);
        item->setForeground(level == Level::Error         ? kErrorColor
                                : level == Level::Warning ? kWarningColor.darker(130)
                                                          : kRemarkColor);

        if (d.line < 1 || d.line > lines)
            continue;
        const int line = d.line - 1;
        m_source->markerAdd(line,
                            level == Level::Error         ? ErrorMarker
                                : level == Level::Warning ? WarningMarker
                                                          : RemarkMarker);
        auto& annotation = annotations[line];
        if (annotation.second.isEmpty() || level < annotation.first)
            annotation.first = level;
        annotation.second.append(text);

        if (level == Level::Remark)
            continue;
        // The column counts bytes (a tab as one), as Scintilla's positions do.
        const long lineStart = m_source->SendScintilla(QsciScintillaBase::SCI_POSITIONFROMLINE, line);
        const long lineEnd = m_source->SendScintilla(QsciScintillaBase::SCI_GETLINEENDPOSITION, line);
        long start = 0;
        long end = 0;
        if (d.column > 0) {
            start = std::min(lineStart + d.column - 1, lineEnd);
            end = m_source->SendScintilla(QsciScintillaBase::SCI_WORDENDPOSITION, start, 1L);
            if (end <= start)
                end = m_source->SendScintilla(QsciScintillaBase::SCI_POSITIONAFTER, start);
            end = std::min(end, lineEnd);
            if (end <= start) // the column is at the end of the line: underline its last character
                start = m_source->SendScintilla(QsciScintillaBase::SCI_POSITIONBEFORE, lineEnd);
        } else {
            start = m_source->SendScintilla(QsciScintillaBase::SCI_GETLINEINDENTPOSITION, line);
            end = lineEnd;
        }
        start = std::max(start, lineStart);
        if (end > start) {
            m_source->SendScintilla(QsciScintillaBase::SCI_SETINDICATORCURRENT,
                                    level == Level::Error ? ErrorIndicator : WarningIndicator);
            m_source->SendScintilla(QsciScintillaBase::SCI_INDICATORFILLRANGE, start, end - start);
        }
    }
    for (auto it = annotations.cbegin(); it != annotations.cend(); ++it)
        m_source->annotate(it.key(), it.value().second.join(QLatin1Char('\n')), annotationStyle(it.value().first));

    m_diagnosticsList->setVisible(!diagnostics.isEmpty());
    if (diagnostics.isEmpty())
        setMessage(QString(), false);
    else
        setMessage((errors == 1 ? tr("1 error") : tr("%1 errors").arg(errors)) + QStringLiteral(", ") +
                       (warnings == 1 ? tr("1 warning") : tr("%1 warnings").arg(warnings)),
                   errors > 0);
}

void KernelEditorPane::setBusy(bool busy)
{
    m_busy = busy;
    updateBenchmarkEnabled();
    if (busy) {
        setMessage(tr("Benchmarking the edit..."), false);
        m_busyMessageShown = true;
    } else if (m_busyMessageShown) {
        setMessage(QString(), false);
    }
}

void KernelEditorPane::showDiff(const QString& leftTitle, const QString& leftSource, const QString& rightTitle,
                                const QString& rightSource)
{
    m_diff->setTexts(leftTitle, leftSource, rightTitle, rightSource);
}

void KernelEditorPane::setCurrentTab(Tab tab)
{
    m_tabs->setCurrentIndex(static_cast<int>(tab));
}

KernelEditorPane::Tab KernelEditorPane::currentTab() const
{
    return static_cast<Tab>(std::clamp(m_tabs->currentIndex(), 0, 2));
}

QString KernelEditorPane::message() const
{
    return m_message->text();
}

void KernelEditorPane::requestBenchmark()
{
    if (m_busy || m_nodeId.isEmpty())
        return;
    const QString plan = planJson();
    if (!plan.trimmed().isEmpty()) {
        const QByteArray bytes = plan.toUtf8();
        QJsonParseError error;
        const QJsonDocument document = QJsonDocument::fromJson(bytes, &error);
        if (error.error != QJsonParseError::NoError) {
            const QByteArray before = bytes.left(error.offset);
            const int line = static_cast<int>(before.count('\n')) + 1;
            const int column = static_cast<int>(before.size() - before.lastIndexOf('\n'));
            setMessage(tr("Launch plan line %1, column %2: %3").arg(line).arg(column).arg(error.errorString()), true);
            m_tabs->setCurrentIndex(0);
            m_plan->setFocus();
            m_plan->setCursorPosition(line - 1, 0);
            return;
        }
        if (!document.isObject()) {
            setMessage(tr("Launch plan: expected a JSON object such as {\"launches\": [...]}"), true);
            return;
        }
    }
    if (source().trimmed().isEmpty()) {
        setMessage(tr("The kernel source is empty."), true);
        return;
    }
    setMessage(QString(), false);
    Q_EMIT benchmarkRequested(source(), plan, m_nodeId);
}

void KernelEditorPane::updateModified()
{
    if (m_replacingText)
        return;
    const bool modified = m_source->isModified() || m_plan->isModified();
    if (modified == m_modified)
        return;
    m_modified = modified;
    updateHeader();
    Q_EMIT modifiedChanged(modified);
}

void KernelEditorPane::updateHeader()
{
    if (m_nodeId.isEmpty())
        m_header->setText(tr("No node selected"));
    else if (m_modified)
        m_header->setText(tr("Node %1 (edited)").arg(m_nodeId));
    else
        m_header->setText(tr("Node %1").arg(m_nodeId));
}

void KernelEditorPane::updateBenchmarkEnabled()
{
    m_benchmark->setEnabled(!m_busy && !m_nodeId.isEmpty());
}

void KernelEditorPane::setMessage(const QString& text, bool isError)
{
    m_busyMessageShown = false;
    m_message->setText(text);
    m_message->setStyleSheet(isError ? QStringLiteral("color: #c01c28;") : QString());
}

void KernelEditorPane::jumpTo(QListWidgetItem* item)
{
    const int line = item->data(kDiagnosticLineRole).toInt();
    if (line < 1 || line > m_source->lines())
        return;
    m_tabs->setCurrentIndex(0);
    const long lineStart = m_source->SendScintilla(QsciScintillaBase::SCI_POSITIONFROMLINE, line - 1);
    const long lineEnd = m_source->SendScintilla(QsciScintillaBase::SCI_GETLINEENDPOSITION, line - 1);
    const int column = item->data(kDiagnosticColumnRole).toInt();
    const long position = std::min(lineStart + std::max(column - 1, 0), lineEnd);
    m_source->SendScintilla(QsciScintillaBase::SCI_GOTOPOS, position);
    m_source->ensureLineVisible(line - 1);
    m_source->setFocus();
}

} // namespace kforge::views
