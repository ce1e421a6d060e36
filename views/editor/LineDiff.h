#pragma once
// A line diff of two texts (Myers' O((N+M)D) algorithm, linear-space variant) as hunks that turn the
// left text into the right one, and as rows of a side-by-side view. Pure functions; any thread.

#include <QList>
#include <QString>
#include <QStringList>

namespace kforge::views {

/// One replacement: `leftCount` lines of the left text starting at `leftStart` become
/// `rightLines`, which sit at `rightStart` in the right text. Line numbers are 0-based. A pure
/// insertion has leftCount 0; a pure deletion has no rightLines.
struct DiffHunk {
    int leftStart = 0;
    int leftCount = 0;
    int rightStart = 0;
    QStringList rightLines;

    bool operator==(const DiffHunk&) const = default;
};

enum class DiffKind {
    Same,    // the line is in both texts
    Added,   // only in the right text
    Removed, // only in the left text
    Changed, // a left line replaced by a right line (paired in order inside a hunk)
};

/// One row of a side-by-side view. Lines are 0-based; -1 where the row has no line on that side
/// (Added rows have no left line, Removed rows no right line).
struct DiffRow {
    int leftLine = -1;
    int rightLine = -1;
    DiffKind kind = DiffKind::Same;

    bool operator==(const DiffRow&) const = default;
};

struct LineDiff {
    QList<DiffHunk> hunks; // ordered by leftStart, non-overlapping, never adjacent
    QList<DiffRow> rows;   // every line of both texts once, in order
    int added = 0;         // rows by kind (Same rows are not counted)
    int removed = 0;
    int changed = 0;
};

/// Splits text into lines on "\n", dropping a trailing "\r" from each line; a final line break
/// does not start another line, so "" and "\n" are 0 and 1 lines.
QStringList splitLines(const QString& text);

/// A minimal diff: the hunks remove and insert the fewest lines that turn `left` into `right`.
/// Inside a hunk, the first min(removed, inserted) lines pair up as Changed rows, the rest are
/// Removed or Added. Time O((N+M)·D) for D edited lines after common prefix and suffix; memory
/// O(N+M). Two 5,000-line texts with 50 edits take about a millisecond.
LineDiff diffLines(const QStringList& left, const QStringList& right);

/// The part of a changed line pair that differs: the common prefix and suffix left out. `start` is
/// the first differing character (in both lines); `leftLength` and `rightLength` how many follow
/// on each side (one may be 0: an insertion or a deletion inside the line).
struct CharSpan {
    int start = 0;
    int leftLength = 0;
    int rightLength = 0;

    bool operator==(const CharSpan&) const = default;
};
CharSpan changedSpan(const QString& left, const QString& right);

/// The display rows where each run of non-Same rows of `diff` starts, in order: where "next change"
/// and "previous change" go.
QList<int> changeStarts(const LineDiff& diff);

/// Applies `hunks` (as diffLines made them, from `left`) to `left`: the right text.
QStringList applyHunks(const QStringList& left, const QList<DiffHunk>& hunks);

} // namespace kforge::views
