#include "models/ValidationLogModel.h"

#include "model/NodeRanking.h"
#include "models/SearchTreeModel.h"

#include <QStringList>
#include <QThread>

#include <algorithm>
#include <cmath>

namespace kforge::app {
namespace {

using core::NodeStatus;
using core::SearchNode;

QString oneLine(QString text)
{
    text.replace(QLatin1Char('\t'), QLatin1Char(' '));
    text.replace(QLatin1String("\r\n"), QLatin1String(" "));
    text.replace(QLatin1Char('\n'), QLatin1Char(' '));
    text.replace(QLatin1Char('\r'), QLatin1Char(' '));
    return text;
}

QString firstLine(const QString& text)
{
    const qsizetype end = text.indexOf(QLatin1Char('\n'));
    return end < 0 ? text : text.left(end);
}

// Collects the entries of one node; every entry shares the node's card, id and time.
class NodeEntries {
public:
    NodeEntries(QList<LogEntry>& out, const QString& cardId, const SearchNode& node)
        : m_out(out), m_cardId(cardId), m_nodeId(QString::fromStdString(node.id))
    {
        if (node.createdUnixMs > 0)
            m_time = QDateTime::fromMSecsSinceEpoch(node.createdUnixMs);
    }

    void add(LogLevel level, LogPhase phase, const QString& message)
    {
        m_out.append(LogEntry{m_time, level, m_cardId, m_nodeId, phase, message});
    }

private:
    QList<LogEntry>& m_out;
    QString m_cardId;
    QString m_nodeId;
    QDateTime m_time;
};

QString fromStd(const std::string& text)
{
    return QString::fromStdString(text);
}

QString diagnosticText(const core::CompileDiagnostic& diagnostic)
{
    QString location = fromStd(diagnostic.file);
    if (diagnostic.line > 0) {
        location += QLatin1Char(':') + QString::number(diagnostic.line);
        if (diagnostic.column > 0)
            location += QLatin1Char(':') + QString::number(diagnostic.column);
    }
    const QString message = fromStd(diagnostic.message);
    return location.isEmpty() ? message : location + QStringLiteral(": ") + message;
}

LogLevel diagnosticLevel(const core::CompileDiagnostic& diagnostic)
{
    if (diagnostic.severity == "warning")
        return LogLevel::Warning;
    if (diagnostic.severity == "remark" || diagnostic.severity == "note")
        return LogLevel::Info;
    return LogLevel::Error;
}

// "kf_softmax: 40 registers/thread, 1024 B shared + 0 B dynamic per block of 256 threads, no
// spills; occupancy 75% (48 of 64 warps per SM, limited by registers)".
QString kernelResourceText(const core::KernelResourceUse& k)
{
    QString text = ValidationLogModel::tr("%1: %2 registers/thread, %3 B shared + %4 B dynamic per block of %5 threads")
                       .arg(fromStd(k.entry))
                       .arg(*k.registers)
                       .arg(k.sharedBytes)
                       .arg(k.dynamicSharedBytes)
                       .arg(k.threadsPerBlock);
    text += k.spillStoreBytes + k.spillLoadBytes > 0
        ? ValidationLogModel::tr(", spills %1 B stored / %2 B loaded").arg(k.spillStoreBytes).arg(k.spillLoadBytes)
        : ValidationLogModel::tr(", no spills");
    if (k.occupancy)
        text += ValidationLogModel::tr("; theoretical occupancy %1% (%2 of %3 warps per SM, limited by %4)")
                    .arg(QString::number(*k.occupancy * 100.0, 'f', 0))
                    .arg(k.warpsPerSm)
                    .arg(k.maxWarpsPerSm)
                    .arg(fromStd(k.occupancyLimitedBy));
    return text;
}

void addCompile(NodeEntries& entries, const core::CompileResult& compile)
{
    QString summary;
    if (compile.ok) {
        summary = compile.architecture.empty()
            ? ValidationLogModel::tr("compiled")
            : ValidationLogModel::tr("compiled for %1").arg(fromStd(compile.architecture));
        if (compile.ms)
            summary += ValidationLogModel::tr(" in %1 ms").arg(QString::number(*compile.ms, 'f', 1));
        if (compile.fromCache)
            summary += ValidationLogModel::tr(" (from cache)");
        if (compile.warnings > 0)
            summary += ValidationLogModel::tr(", %n warning(s)", nullptr, compile.warnings);
    } else {
        summary = compile.errors > 0 ? ValidationLogModel::tr("compile failed: %n error(s)", nullptr, compile.errors)
                                     : ValidationLogModel::tr("compile failed");
    }
    entries.add(compile.ok ? LogLevel::Info : LogLevel::Error, LogPhase::Compile, summary);
    for (const core::CompileDiagnostic& diagnostic : compile.diagnostics)
        entries.add(diagnosticLevel(diagnostic), LogPhase::Compile, diagnosticText(diagnostic));
    for (const core::KernelResourceUse& kernel : compile.kernels)
        if (kernel.registers)
            entries.add(kernel.spillStoreBytes + kernel.spillLoadBytes > 0 ? LogLevel::Warning : LogLevel::Info,
                        LogPhase::Compile, kernelResourceText(kernel));
}

void addChecks(NodeEntries& entries, const core::ValidationResult& validation)
{
    for (const core::ValidationCheck& check : validation.checks) {
        const QString name = check.name.empty() ? ValidationLogModel::tr("(unnamed check)") : fromStd(check.name);
        QString message = check.passed ? ValidationLogModel::tr("%1: passed").arg(name)
                                       : ValidationLogModel::tr("%1: failed").arg(name);
        if (!check.detail.empty())
            message += QStringLiteral(": ") + fromStd(check.detail);
        entries.add(check.passed ? LogLevel::Info : LogLevel::Error, LogPhase::Validate, message);
    }
}

QString timingSummary(double medianUs, std::optional<double> speedup)
{
    QString text = SearchTreeModel::latencyText(medianUs);
    if (speedup)
        text += ValidationLogModel::tr(", %1 eager").arg(SearchTreeModel::speedupText(*speedup));
    return text;
}

// The timing of the report, or of the node when the report has none (a synthetic evaluator, an
// older tree). The speedup is core's (core::measuredSpeedup: the one the node was timed at, also
// for a node rejected after timing). Returns whether an entry was added.
bool addTiming(NodeEntries& entries, const SearchNode& node)
{
    const std::optional<core::TimingReport>& timing = node.evaluation.timing;
    const std::optional<double> speedup = core::measuredSpeedup(node);
    if (!timing || !timing->candidate) {
        if (!node.latency)
            return false;
        QString message = timingSummary(node.latency->medianUs, speedup);
        if (const std::optional<double> eager = core::nodeEagerUs(node))
            message += ValidationLogModel::tr(" (eager %1)").arg(SearchTreeModel::latencyText(*eager));
        entries.add(LogLevel::Info, LogPhase::Time, message);
        return true;
    }
    const core::LatencyStats& candidate = *timing->candidate;
    QStringList details;
    if (timing->eager)
        details << ValidationLogModel::tr("eager %1").arg(SearchTreeModel::latencyText(timing->eager->medianUs));
    details << ValidationLogModel::tr("quartiles %1 .. %2")
                   .arg(SearchTreeModel::latencyText(candidate.q1Us), SearchTreeModel::latencyText(candidate.q3Us));
    if (timing->pairedSpeedupQ1 && timing->pairedSpeedupQ3)
        details << ValidationLogModel::tr("speedup quartiles %1 .. %2")
                       .arg(SearchTreeModel::speedupText(*timing->pairedSpeedupQ1),
                            SearchTreeModel::speedupText(*timing->pairedSpeedupQ3));
    if (timing->repetitions)
        details << ValidationLogModel::tr("%1 repetitions").arg(*timing->repetitions);
    if (!timing->method.empty())
        details << fromStd(timing->method);
    if (const std::optional<core::BandwidthReport>& bandwidth = node.evaluation.bandwidth) {
        if (bandwidth->fractionOfCopy && bandwidth->achievedGbPerS)
            details << ValidationLogModel::tr("%1 GB/s, %2% of copy bandwidth")
                           .arg(QString::number(*bandwidth->achievedGbPerS, 'f', 0),
                                QString::number(*bandwidth->fractionOfCopy * 100.0, 'f', 0));
    }
    QString message = timingSummary(candidate.medianUs, speedup);
    if (!details.isEmpty())
        message += QStringLiteral(" (") + details.join(QStringLiteral("; ")) + QLatin1Char(')');
    entries.add(speedup && *speedup < 1.0 ? LogLevel::Warning : LogLevel::Info, LogPhase::Time, message);
    return true;
}

// The finding lines of a compute-sanitizer log ("========= Invalid __global__ write ..."), without
// the banner, the summary and blank lines; at most `limit`.
QStringList sanitizerFindings(const QString& log, int limit)
{
    QStringList findings;
    const QStringList lines = log.split(QLatin1Char('\n'));
    for (const QString& raw : lines) {
        if (!raw.startsWith(QLatin1String("=========")))
            continue;
        const QString line = raw.mid(9).trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1String("COMPUTE-SANITIZER")) ||
            line.startsWith(QLatin1String("ERROR SUMMARY")))
            continue;
        findings << line;
        if (findings.size() >= limit)
            break;
    }
    return findings;
}

void addSanitizer(NodeEntries& entries, const core::SanitizerResult& sanitizer)
{
    if (!sanitizer.checked) {
        entries.add(LogLevel::Info, LogPhase::Sanitize,
                    sanitizer.reason.empty()
                        ? ValidationLogModel::tr("not sanitizer-checked")
                        : ValidationLogModel::tr("not sanitizer-checked: %1").arg(fromStd(sanitizer.reason)));
        return;
    }
    if (sanitizer.tools.empty()) {
        if (sanitizer.passed)
            entries.add(*sanitizer.passed ? LogLevel::Info : LogLevel::Error, LogPhase::Sanitize,
                        *sanitizer.passed ? ValidationLogModel::tr("compute-sanitizer: clean")
                                          : ValidationLogModel::tr("compute-sanitizer: findings"));
        return;
    }
    for (const core::SanitizerToolResult& run : sanitizer.tools) {
        const QString tool = fromStd(run.tool);
        if (!run.skipped.empty()) {
            entries.add(LogLevel::Info, LogPhase::Sanitize,
                        ValidationLogModel::tr("%1: not run: %2").arg(tool, fromStd(run.skipped)));
            continue;
        }
        const bool evaluationOk = run.evaluation.empty() || run.evaluation == "passed";
        if (run.errors && *run.errors == 0 && evaluationOk) {
            entries.add(LogLevel::Info, LogPhase::Sanitize, ValidationLogModel::tr("%1: clean").arg(tool));
            continue;
        }
        QString message = run.errors ? ValidationLogModel::tr("%1: %n error(s)", nullptr, *run.errors).arg(tool)
                                     : ValidationLogModel::tr("%1: no summary in its log").arg(tool);
        if (!evaluationOk)
            message += ValidationLogModel::tr(" (evaluation: %1)").arg(fromStd(run.evaluation));
        const QStringList findings = sanitizerFindings(fromStd(run.log), 10);
        if (!findings.isEmpty())
            message += QStringLiteral(": ") + findings.front();
        for (qsizetype i = 1; i < findings.size(); ++i)
            message += QLatin1Char('\n') + findings[i];
        entries.add(LogLevel::Error, LogPhase::Sanitize, message);
    }
}

LogPhase failurePhase(const SearchNode& node)
{
    switch (node.status) {
    case NodeStatus::FailedCompile:
        return LogPhase::Compile;
    case NodeStatus::FailedProposal:
        return LogPhase::Search;
    default:
        break;
    }
    const core::EvaluationReport& report = node.evaluation;
    if (report.sanitizer && report.sanitizer->checked && !report.sanitizer->passed.value_or(true))
        return LogPhase::Sanitize;
    if (report.validation && report.validation->failure && report.validation->failure->check == "timing")
        return LogPhase::Time;
    return LogPhase::Validate;
}

void addNode(QList<LogEntry>& out, const QString& cardId, const SearchNode& node)
{
    NodeEntries entries(out, cardId, node);
    const core::EvaluationReport& report = node.evaluation;
    if (report.compile)
        addCompile(entries, *report.compile);
    if (report.validation)
        addChecks(entries, *report.validation);
    if (node.status == NodeStatus::Passed || report.validation)
        addTiming(entries, node);
    if (report.sanitizer)
        addSanitizer(entries, *report.sanitizer);

    if (core::isFailure(node.status)) {
        QString reason = fromStd(node.failureReason);
        if (reason.isEmpty())
            reason = fromStd(report.reason.line);
        const QString status = SearchTreeModel::statusText(node.status);
        entries.add(LogLevel::Error, failurePhase(node),
                    reason.isEmpty() ? status : QStringLiteral("%1: %2").arg(status, reason));
    } else if (node.status == NodeStatus::CompiledOnly) {
        const QString reason = fromStd(report.reason.line);
        entries.add(LogLevel::Info, LogPhase::Validate,
                    reason.isEmpty() ? ValidationLogModel::tr("compiled only: not measured")
                                     : ValidationLogModel::tr("compiled only: %1").arg(reason));
    } else if (node.status == NodeStatus::ValidatedOnly) {
        entries.add(LogLevel::Info, LogPhase::Time,
                    ValidationLogModel::tr("validated, not timed (a validate-only evaluation): no speedup to rank"));
    }
}

} // namespace

ValidationLogModel::ValidationLogModel(QObject* parent) : QAbstractTableModel(parent)
{
}

void ValidationLogModel::appendEntries(const QList<LogEntry>& entries)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (entries.isEmpty())
        return;
    const qsizetype keep = std::min<qsizetype>(entries.size(), m_maximumEntries);
    const qsizetype first = entries.size() - keep;
    const qsizetype overflow = static_cast<qsizetype>(m_entries.size()) + keep - m_maximumEntries;
    if (overflow > 0)
        dropOldest(static_cast<int>(overflow));
    const int row = static_cast<int>(m_entries.size());
    beginInsertRows({}, row, row + static_cast<int>(keep) - 1);
    m_entries.insert(m_entries.end(), entries.begin() + first, entries.end());
    endInsertRows();
}

void ValidationLogModel::setEntries(const QList<LogEntry>& entries)
{
    Q_ASSERT(QThread::currentThread() == thread());
    const qsizetype keep = std::min<qsizetype>(entries.size(), m_maximumEntries);
    beginResetModel();
    m_entries.assign(entries.end() - keep, entries.end());
    endResetModel();
}

void ValidationLogModel::clear()
{
    Q_ASSERT(QThread::currentThread() == thread());
    beginResetModel();
    m_entries.clear();
    endResetModel();
}

void ValidationLogModel::setMaximumEntries(int maximum)
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_maximumEntries = std::max(1, maximum);
    const int overflow = static_cast<int>(m_entries.size()) - m_maximumEntries;
    if (overflow > 0)
        dropOldest(overflow);
}

void ValidationLogModel::dropOldest(int count)
{
    count = std::min(count, static_cast<int>(m_entries.size()));
    if (count <= 0)
        return;
    beginRemoveRows({}, 0, count - 1);
    m_entries.erase(m_entries.begin(), m_entries.begin() + count);
    endRemoveRows();
}

const LogEntry& ValidationLogModel::entryAt(int row) const
{
    Q_ASSERT(row >= 0 && row < static_cast<int>(m_entries.size()));
    return m_entries[static_cast<std::size_t>(row)];
}

int ValidationLogModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_entries.size());
}

int ValidationLogModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ValidationLogModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const LogEntry& entry = entryAt(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case TimeColumn:
            return timeText(entry.time);
        case LevelColumn:
            return levelName(entry.level);
        case CardColumn:
            return entry.cardId.left(8); // the cards table's short id; the tooltip has the whole
        case NodeColumn:
            return entry.nodeId;
        case PhaseColumn:
            return phaseName(entry.phase);
        case MessageColumn:
            return firstLine(entry.message);
        }
        return {};
    case Qt::ToolTipRole:
        if (index.column() == TimeColumn)
            return entry.time.isValid() ? entry.time.toString(Qt::ISODateWithMs) : QVariant();
        if (index.column() == MessageColumn)
            return entry.message;
        if (index.column() == CardColumn && !entry.cardId.isEmpty())
            return entry.cardId;
        return {};
    case LevelRole:
        return static_cast<int>(entry.level);
    case PhaseRole:
        return static_cast<int>(entry.phase);
    case CardIdRole:
        return entry.cardId;
    case NodeIdRole:
        return entry.nodeId;
    case MessageRole:
        return entry.message;
    case TimeRole:
        return entry.time;
    case SortRole:
        switch (index.column()) {
        case TimeColumn:
            return entry.time.isValid() ? entry.time.toMSecsSinceEpoch() : qint64(-1);
        case LevelColumn:
            return static_cast<int>(entry.level);
        case PhaseColumn:
            return static_cast<int>(entry.phase);
        default:
            return data(index, Qt::DisplayRole);
        }
    default:
        return {};
    }
}

QVariant ValidationLogModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case TimeColumn:
        return tr("Time");
    case LevelColumn:
        return tr("Level");
    case CardColumn:
        return tr("Card");
    case NodeColumn:
        return tr("Node");
    case PhaseColumn:
        return tr("Phase");
    case MessageColumn:
        return tr("Message");
    }
    return {};
}

QList<LogEntry> ValidationLogModel::entriesFromTree(const core::SearchTree& tree)
{
    QList<LogEntry> entries;
    const QString cardId = QString::fromStdString(tree.cardId());
    for (const SearchNode& node : tree.nodes())
        addNode(entries, cardId, node);
    return entries;
}

QString ValidationLogModel::levelName(LogLevel level)
{
    switch (level) {
    case LogLevel::Info:
        return QStringLiteral("info");
    case LogLevel::Warning:
        return QStringLiteral("warning");
    case LogLevel::Error:
        return QStringLiteral("error");
    }
    return {};
}

QString ValidationLogModel::phaseName(LogPhase phase)
{
    switch (phase) {
    case LogPhase::Compile:
        return QStringLiteral("compile");
    case LogPhase::Validate:
        return QStringLiteral("validate");
    case LogPhase::Time:
        return QStringLiteral("time");
    case LogPhase::Sanitize:
        return QStringLiteral("sanitize");
    case LogPhase::Search:
        return QStringLiteral("search");
    }
    return {};
}

QString ValidationLogModel::timeText(const QDateTime& time)
{
    return time.isValid() ? time.toLocalTime().toString(QStringLiteral("HH:mm:ss.zzz")) : QString();
}

QString ValidationLogModel::toTabSeparated(const LogEntry& entry)
{
    const QString time = entry.time.isValid() ? entry.time.toLocalTime().toString(Qt::ISODateWithMs) : QString();
    return QStringList{time,
                       levelName(entry.level),
                       oneLine(entry.cardId),
                       oneLine(entry.nodeId),
                       phaseName(entry.phase),
                       oneLine(entry.message)}
        .join(QLatin1Char('\t'));
}

} // namespace kforge::app
