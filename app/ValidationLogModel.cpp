#include "ValidationLogModel.h"

#include "SearchTreeModel.h"

#include <QStringList>
#include <QThread>

#include <algorithm>
#include <cmath>

namespace kforge::app {
namespace {

using core::NodeStatus;
using core::SearchNode;
using nlohmann::json;

// Report access that never throws: a missing key or a value of another type reads as absent.
const json* member(const json& object, const char* key)
{
    if (!object.is_object())
        return nullptr;
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
}

const json* objectMember(const json& object, const char* key)
{
    const json* value = member(object, key);
    return value && value->is_object() ? value : nullptr;
}

std::optional<QString> stringMember(const json& object, const char* key)
{
    const json* value = member(object, key);
    if (!value || !value->is_string())
        return std::nullopt;
    return QString::fromStdString(value->get<std::string>());
}

std::optional<double> numberMember(const json& object, const char* key)
{
    const json* value = member(object, key);
    if (!value || !value->is_number())
        return std::nullopt;
    const double number = value->get<double>();
    return std::isfinite(number) ? std::optional<double>(number) : std::nullopt;
}

std::optional<bool> boolMember(const json& object, const char* key)
{
    const json* value = member(object, key);
    if (!value || !value->is_boolean())
        return std::nullopt;
    return value->get<bool>();
}

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

QString diagnosticText(const json& diagnostic)
{
    QString location = stringMember(diagnostic, "file").value_or(QString());
    const std::optional<double> line = numberMember(diagnostic, "line");
    if (line && *line > 0) {
        location += QLatin1Char(':') + QString::number(static_cast<long long>(*line));
        const std::optional<double> column = numberMember(diagnostic, "column");
        if (column && *column > 0)
            location += QLatin1Char(':') + QString::number(static_cast<long long>(*column));
    }
    const QString message = stringMember(diagnostic, "message").value_or(QString());
    return location.isEmpty() ? message : location + QStringLiteral(": ") + message;
}

LogLevel diagnosticLevel(const json& diagnostic)
{
    const QString severity = stringMember(diagnostic, "severity").value_or(QStringLiteral("error"));
    if (severity == QLatin1String("warning"))
        return LogLevel::Warning;
    if (severity == QLatin1String("remark") || severity == QLatin1String("note"))
        return LogLevel::Info;
    return LogLevel::Error;
}

void addCompile(NodeEntries& entries, const json& compile)
{
    int errors = 0;
    int warnings = 0;
    const json* diagnostics = member(compile, "diagnostics");
    if (diagnostics && diagnostics->is_array()) {
        for (const json& diagnostic : *diagnostics) {
            if (!diagnostic.is_object())
                continue;
            const LogLevel level = diagnosticLevel(diagnostic);
            errors += level == LogLevel::Error;
            warnings += level == LogLevel::Warning;
        }
    }
    const std::optional<bool> ok = boolMember(compile, "ok");
    if (ok) {
        QString summary;
        if (*ok) {
            const QString arch = stringMember(compile, "architecture").value_or(QString());
            summary = arch.isEmpty() ? ValidationLogModel::tr("compiled")
                                     : ValidationLogModel::tr("compiled for %1").arg(arch);
            if (const std::optional<double> ms = numberMember(compile, "ms"))
                summary += ValidationLogModel::tr(" in %1 ms").arg(QString::number(*ms, 'f', 1));
            if (boolMember(compile, "from_cache").value_or(false))
                summary += ValidationLogModel::tr(" (from cache)");
            if (warnings > 0)
                summary += ValidationLogModel::tr(", %n warning(s)", nullptr, warnings);
        } else {
            summary = errors > 0 ? ValidationLogModel::tr("compile failed: %n error(s)", nullptr, errors)
                                 : ValidationLogModel::tr("compile failed");
        }
        entries.add(*ok ? LogLevel::Info : LogLevel::Error, LogPhase::Compile, summary);
    }
    if (diagnostics && diagnostics->is_array()) {
        for (const json& diagnostic : *diagnostics) {
            if (diagnostic.is_object())
                entries.add(diagnosticLevel(diagnostic), LogPhase::Compile, diagnosticText(diagnostic));
        }
    }
}

void addChecks(NodeEntries& entries, const json& evaluation)
{
    const json* checks = member(evaluation, "checks");
    if (!checks || !checks->is_array())
        return;
    for (const json& check : *checks) {
        if (!check.is_object())
            continue;
        const QString name = stringMember(check, "name").value_or(ValidationLogModel::tr("(unnamed check)"));
        const bool passed = boolMember(check, "passed").value_or(false);
        const QString detail = stringMember(check, "detail").value_or(QString());
        QString message =
            passed ? ValidationLogModel::tr("%1: passed").arg(name) : ValidationLogModel::tr("%1: failed").arg(name);
        if (!detail.isEmpty())
            message += QStringLiteral(": ") + detail;
        entries.add(passed ? LogLevel::Info : LogLevel::Error, LogPhase::Validate, message);
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
// older tree). Returns whether an entry was added.
bool addTiming(NodeEntries& entries, const json* evaluation, const SearchNode& node)
{
    const json* timing = evaluation ? objectMember(*evaluation, "timing") : nullptr;
    const json* candidate = timing ? objectMember(*timing, "candidate") : nullptr;
    const std::optional<double> median = candidate ? numberMember(*candidate, "median_us") : std::nullopt;
    if (!median) {
        if (!node.latency)
            return false;
        QString message = timingSummary(node.latency->medianUs, node.speedup);
        if (node.eagerUs)
            message += ValidationLogModel::tr(" (eager %1)").arg(SearchTreeModel::latencyText(*node.eagerUs));
        entries.add(LogLevel::Info, LogPhase::Time, message);
        return true;
    }
    std::optional<double> speedup = numberMember(*timing, "speedup");
    if (!speedup)
        speedup = node.speedup;
    QStringList details;
    const json* eager = objectMember(*timing, "eager");
    if (const std::optional<double> eagerUs = eager ? numberMember(*eager, "median_us") : std::nullopt)
        details << ValidationLogModel::tr("eager %1").arg(SearchTreeModel::latencyText(*eagerUs));
    const std::optional<double> q1 = numberMember(*candidate, "q1_us");
    const std::optional<double> q3 = numberMember(*candidate, "q3_us");
    if (q1 && q3)
        details << ValidationLogModel::tr("quartiles %1 .. %2")
                       .arg(SearchTreeModel::latencyText(*q1), SearchTreeModel::latencyText(*q3));
    if (const std::optional<double> repetitions = numberMember(*candidate, "repetitions"))
        details << ValidationLogModel::tr("%1 repetitions").arg(static_cast<long long>(*repetitions));
    if (const std::optional<QString> method = stringMember(*timing, "method"))
        details << *method;
    if (const json* bandwidth = objectMember(*evaluation, "bandwidth")) {
        const std::optional<double> fraction = numberMember(*bandwidth, "fraction_of_copy");
        const std::optional<double> achieved = numberMember(*bandwidth, "achieved_gb_per_s");
        if (fraction && achieved)
            details << ValidationLogModel::tr("%1 GB/s, %2% of copy bandwidth")
                           .arg(QString::number(*achieved, 'f', 0), QString::number(*fraction * 100.0, 'f', 0));
    }
    QString message = timingSummary(*median, speedup);
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

void addSanitizer(NodeEntries& entries, const json& sanitizer)
{
    const std::optional<bool> checked = boolMember(sanitizer, "checked");
    if (checked && !*checked) {
        const QString reason = stringMember(sanitizer, "reason").value_or(QString());
        entries.add(LogLevel::Info, LogPhase::Sanitize,
                    reason.isEmpty() ? ValidationLogModel::tr("not sanitizer-checked")
                                     : ValidationLogModel::tr("not sanitizer-checked: %1").arg(reason));
        return;
    }
    const json* tools = objectMember(sanitizer, "tools");
    if (!tools) {
        if (const std::optional<bool> passed = boolMember(sanitizer, "passed"))
            entries.add(*passed ? LogLevel::Info : LogLevel::Error, LogPhase::Sanitize,
                        *passed ? ValidationLogModel::tr("compute-sanitizer: clean")
                                : ValidationLogModel::tr("compute-sanitizer: findings"));
        return;
    }
    for (auto it = tools->begin(); it != tools->end(); ++it) {
        const QString tool = QString::fromStdString(it.key());
        const json& result = it.value();
        const std::optional<double> errors = numberMember(result, "errors");
        const QString evaluation = stringMember(result, "evaluation").value_or(QString());
        const bool evaluationOk = evaluation.isEmpty() || evaluation == QLatin1String("passed");
        if (errors && *errors == 0 && evaluationOk) {
            entries.add(LogLevel::Info, LogPhase::Sanitize, ValidationLogModel::tr("%1: clean").arg(tool));
            continue;
        }
        QString message = errors
            ? ValidationLogModel::tr("%1: %n error(s)", nullptr, static_cast<int>(*errors)).arg(tool)
            : ValidationLogModel::tr("%1: no summary in its log").arg(tool);
        if (!evaluationOk)
            message += ValidationLogModel::tr(" (evaluation: %1)").arg(evaluation);
        const QStringList findings = sanitizerFindings(stringMember(result, "log").value_or(QString()), 10);
        if (!findings.isEmpty())
            message += QStringLiteral(": ") + findings.front();
        for (qsizetype i = 1; i < findings.size(); ++i)
            message += QLatin1Char('\n') + findings[i];
        entries.add(LogLevel::Error, LogPhase::Sanitize, message);
    }
}

LogPhase failurePhase(const SearchNode& node, const json& report)
{
    switch (node.status) {
    case NodeStatus::FailedCompile:
        return LogPhase::Compile;
    case NodeStatus::FailedProposal:
        return LogPhase::Search;
    default:
        break;
    }
    if (const json* sanitizer = objectMember(report, "sanitizer")) {
        if (boolMember(*sanitizer, "checked").value_or(false) && !boolMember(*sanitizer, "passed").value_or(true))
            return LogPhase::Sanitize;
    }
    if (const json* evaluation = objectMember(report, "evaluation")) {
        if (const json* failure = objectMember(*evaluation, "failure")) {
            if (stringMember(*failure, "check").value_or(QString()) == QLatin1String("timing"))
                return LogPhase::Time;
        }
    }
    return LogPhase::Validate;
}

void addNode(QList<LogEntry>& out, const QString& cardId, const SearchNode& node)
{
    NodeEntries entries(out, cardId, node);
    const json& report = node.evaluationDetails;
    if (const json* compile = objectMember(report, "compile"))
        addCompile(entries, *compile);
    const json* evaluation = objectMember(report, "evaluation");
    if (evaluation)
        addChecks(entries, *evaluation);
    if (node.status == NodeStatus::Passed || evaluation)
        addTiming(entries, evaluation, node);
    if (const json* sanitizer = objectMember(report, "sanitizer"))
        addSanitizer(entries, *sanitizer);

    if (core::isFailure(node.status)) {
        QString reason = QString::fromStdString(node.failureReason);
        if (reason.isEmpty())
            reason = stringMember(report, "reason").value_or(QString());
        const QString status = SearchTreeModel::statusText(node.status);
        entries.add(LogLevel::Error, failurePhase(node, report),
                    reason.isEmpty() ? status : QStringLiteral("%1: %2").arg(status, reason));
    } else if (node.status == NodeStatus::CompiledOnly) {
        const QString reason = stringMember(report, "reason").value_or(QString());
        entries.add(LogLevel::Info, LogPhase::Validate,
                    reason.isEmpty() ? ValidationLogModel::tr("compiled only: not measured")
                                     : ValidationLogModel::tr("compiled only: %1").arg(reason));
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
            return entry.cardId;
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
