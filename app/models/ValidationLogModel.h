#pragma once
// The validation log: one row per event of compiling, validating, timing and sanitizer-checking
// candidates, oldest first. Columns: time, level, card, node, phase, message.
//
// Two sources feed it:
//  - appendEntries(): a live run's events, a batch at a time (one rowsInserted per batch). The
//    model keeps at most maximumEntries() rows; a batch that would exceed the cap first removes the
//    oldest rows (one rowsRemoved).
//  - entriesFromTree(): the entries a stored search tree implies, derived from each node's status,
//    failure reason and evaluation details (the bench report of docs/validation.md); the caller
//    appends or replaces with them.
//
// Views filter through a QSortFilterProxyModel using LevelRole, PhaseRole, CardIdRole, NodeIdRole
// and MessageRole (or entryAt() for speed), and sort with SortRole.
//
// Thread: GUI thread only (asserted). entriesFromTree() is a pure function callable from any thread.

#include "model/SearchTree.h"

#include <QAbstractTableModel>
#include <QDateTime>
#include <QList>
#include <QString>

#include <deque>

namespace kforge::app {

/// Severity of a log entry; the order is the filter order (a minimum level shows it and above).
enum class LogLevel { Info, Warning, Error };

/// The step of a candidate's life an entry belongs to.
enum class LogPhase { Compile, Validate, Time, Sanitize, Search };

/// One event of the log (value type). `message` is one line, except that long details (a compiler
/// diagnostic's source context, sanitizer findings) may follow on further lines.
struct LogEntry {
    QDateTime time; // invalid when unknown
    LogLevel level = LogLevel::Info;
    QString cardId;
    QString nodeId;
    LogPhase phase = LogPhase::Search;
    QString message;

    bool operator==(const LogEntry&) const = default;
};

class ValidationLogModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { TimeColumn, LevelColumn, CardColumn, NodeColumn, PhaseColumn, MessageColumn, ColumnCount };
    enum Role {
        /// The entry's LogLevel as int, in every column.
        LevelRole = Qt::UserRole + 1,
        /// The entry's LogPhase as int, in every column.
        PhaseRole,
        /// The card id (QString), in every column.
        CardIdRole,
        /// The node id ("n12", QString), in every column.
        NodeIdRole,
        /// The whole message, all lines (QString), in every column.
        MessageRole,
        /// The entry's time (QDateTime), in every column.
        TimeRole,
        /// Time: ms since the epoch (qint64, -1 when unknown); level and phase: their int value;
        /// the display text otherwise.
        SortRole,
    };

    static constexpr int kDefaultMaximumEntries = 100000;

    explicit ValidationLogModel(QObject* parent = nullptr);

    /// Appends a batch (one rowsInserted), dropping the oldest rows first when the cap would be
    /// exceeded (one rowsRemoved). A batch larger than the cap keeps only its newest entries.
    void appendEntries(const QList<LogEntry>& entries);
    /// Replaces the content (model reset); the cap applies.
    void setEntries(const QList<LogEntry>& entries);
    /// Empties the model (model reset).
    void clear();

    /// The cap on the number of rows (at least 1). Lowering it below rowCount() drops the oldest rows.
    int maximumEntries() const { return m_maximumEntries; }
    void setMaximumEntries(int maximum);

    /// The entry of a row; row must be in [0, rowCount()).
    const LogEntry& entryAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// Every entry a tree implies, node by node in creation order (see docs/gui.md, "Validation
    /// log"): compile result and diagnostics ("file:line:column: message"), each validation check,
    /// the timing summary ("12.3 µs, 1.85x eager"), sanitizer results, and the failure reason of a
    /// failed node. Missing or mistyped report fields are skipped; a node without a report still
    /// gives its failure reason and, if measured, its latency. Entries carry the node's creation time.
    static QList<LogEntry> entriesFromTree(const core::SearchTree& tree);

    /// "info", "warning", "error".
    static QString levelName(LogLevel level);
    /// "compile", "validate", "time", "sanitize", "search".
    static QString phaseName(LogPhase phase);
    /// How the time column shows a time: local "HH:mm:ss.zzz"; empty for an invalid time.
    static QString timeText(const QDateTime& time);
    /// One entry as a line of tab-separated values in column order (time as local ISO 8601 with
    /// milliseconds); tabs and line breaks inside fields become spaces. No trailing newline.
    static QString toTabSeparated(const LogEntry& entry);

private:
    void dropOldest(int count);

    std::deque<LogEntry> m_entries;
    int m_maximumEntries = kDefaultMaximumEntries;
};

} // namespace kforge::app
