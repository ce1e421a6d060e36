// LineDiff: minimal hunks that round-trip, side-by-side rows covering both texts in order, and
// speed on 5,000-line sources.

#include "views/editor/LineDiff.h"

#include <QElapsedTimer>
#include <QTest>

#include <algorithm>
#include <random>
#include <vector>

using kforge::views::applyHunks;
using kforge::views::DiffHunk;
using kforge::views::DiffKind;
using kforge::views::diffLines;
using kforge::views::DiffRow;
using kforge::views::LineDiff;
using kforge::views::splitLines;

namespace {

QStringList lines(std::initializer_list<const char*> items)
{
    QStringList out;
    for (const char* item : items)
        out.append(QString::fromLatin1(item));
    return out;
}

// Length of a longest common subsequence, by dynamic programming (the reference for minimality).
int lcsLength(const QStringList& a, const QStringList& b)
{
    std::vector<int> previous(static_cast<std::size_t>(b.size()) + 1, 0);
    std::vector<int> current(previous.size(), 0);
    for (qsizetype i = 1; i <= a.size(); ++i) {
        for (qsizetype j = 1; j <= b.size(); ++j)
            current[j] = a[i - 1] == b[j - 1] ? previous[j - 1] + 1 : std::max(previous[j], current[j - 1]);
        std::swap(previous, current);
    }
    return previous.back();
}

int editCount(const LineDiff& diff)
{
    int count = 0;
    for (const DiffHunk& hunk : diff.hunks)
        count += hunk.leftCount + static_cast<int>(hunk.rightLines.size());
    return count;
}

// Every line of both texts appears once, in order; Same rows join equal lines; counts add up.
void checkRows(const QStringList& left, const QStringList& right, const LineDiff& diff)
{
    int nextLeft = 0;
    int nextRight = 0;
    int added = 0;
    int removed = 0;
    int changed = 0;
    for (const DiffRow& row : diff.rows) {
        QCOMPARE(row.leftLine >= 0, row.kind != DiffKind::Added);
        QCOMPARE(row.rightLine >= 0, row.kind != DiffKind::Removed);
        if (row.leftLine >= 0)
            QCOMPARE(row.leftLine, nextLeft++);
        if (row.rightLine >= 0)
            QCOMPARE(row.rightLine, nextRight++);
        if (row.kind == DiffKind::Same)
            QCOMPARE(left.at(row.leftLine), right.at(row.rightLine));
        added += row.kind == DiffKind::Added;
        removed += row.kind == DiffKind::Removed;
        changed += row.kind == DiffKind::Changed;
    }
    QCOMPARE(nextLeft, left.size());
    QCOMPARE(nextRight, right.size());
    QCOMPARE(diff.added, added);
    QCOMPARE(diff.removed, removed);
    QCOMPARE(diff.changed, changed);
}

// A kernel-like source of `count` lines: mostly distinct lines, with repeated braces and blanks
// that give the diff many equal candidates to choose between.
QStringList syntheticSource(int count)
{
    QStringList out;
    out.reserve(count);
    for (int i = 0; i < count; ++i) {
        switch (i % 7) {
        case 0:
            out.append(QStringLiteral("__global__ void kernel_%1(const float* x, float* y, int n) {").arg(i));
            break;
        case 3:
            out.append(QStringLiteral("}"));
            break;
        case 5:
            out.append(QString());
            break;
        default:
            out.append(QStringLiteral("    float v%1 = x[threadIdx.x + %2] * %3.0f;").arg(i).arg(i % 97).arg(i % 13));
        }
    }
    return out;
}

// Applies `edits` random single-line edits (change, insert or delete) at distinct places.
QStringList edited(QStringList source, int edits, std::mt19937& random)
{
    for (int e = 0; e < edits; ++e) {
        std::uniform_int_distribution<int> at(0, static_cast<int>(source.size()) - 1);
        const int line = at(random);
        switch (e % 3) {
        case 0:
            source[line] = QStringLiteral("    // changed %1: %2").arg(e).arg(source[line]);
            break;
        case 1:
            source.insert(line, QStringLiteral("    __syncthreads(); // inserted %1").arg(e));
            break;
        default:
            source.removeAt(line);
        }
    }
    return source;
}

} // namespace

class LineDiffTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void splitsLines()
    {
        QCOMPARE(splitLines(QString()), QStringList());
        QCOMPARE(splitLines(QStringLiteral("\n")), lines({""}));
        QCOMPARE(splitLines(QStringLiteral("a")), lines({"a"}));
        QCOMPARE(splitLines(QStringLiteral("a\nb\n")), lines({"a", "b"}));
        QCOMPARE(splitLines(QStringLiteral("a\r\n\r\nb")), lines({"a", "", "b"}));
        QCOMPARE(splitLines(QStringLiteral("a\n\n")), lines({"a", ""}));
    }

    void knownPairGivesExactHunksAndRows()
    {
        const QStringList left = lines({"a", "b", "c", "d", "e", "f", "g"});
        const QStringList right = lines({"a", "B", "c", "e", "f", "x", "y", "g", "h"});
        const LineDiff diff = diffLines(left, right);

        const QList<DiffHunk> hunks = {
            {1, 1, 1, lines({"B"})},
            {3, 1, 3, {}},
            {6, 0, 5, lines({"x", "y"})},
            {7, 0, 8, lines({"h"})},
        };
        QCOMPARE(diff.hunks, hunks);
        const QList<DiffRow> rows = {
            {0, 0, DiffKind::Same}, {1, 1, DiffKind::Changed}, {2, 2, DiffKind::Same},   {3, -1, DiffKind::Removed},
            {4, 3, DiffKind::Same}, {5, 4, DiffKind::Same},    {-1, 5, DiffKind::Added}, {-1, 6, DiffKind::Added},
            {6, 7, DiffKind::Same}, {-1, 8, DiffKind::Added},
        };
        QCOMPARE(diff.rows, rows);
        QCOMPARE(diff.changed, 1);
        QCOMPARE(diff.added, 3);
        QCOMPARE(diff.removed, 1);
        QCOMPARE(applyHunks(left, diff.hunks), right);
    }

    void replacedBlockPairsAsChangedThenRemoved()
    {
        const QStringList left = lines({"k", "1", "2", "3", "z"});
        const QStringList right = lines({"k", "one", "z"});
        const LineDiff diff = diffLines(left, right);
        const QList<DiffRow> rows = {
            {0, 0, DiffKind::Same},     {1, 1, DiffKind::Changed}, {2, -1, DiffKind::Removed},
            {3, -1, DiffKind::Removed}, {4, 2, DiffKind::Same},
        };
        QCOMPARE(diff.rows, rows);
    }

    void changedSpanAndChangeStarts()
    {
        using kforge::views::CharSpan;
        QCOMPARE(kforge::views::changedSpan(QStringLiteral("grid 132"), QStringLiteral("grid 264")),
                 (CharSpan{5, 3, 3}));
        QCOMPARE(kforge::views::changedSpan(QStringLiteral("abc"), QStringLiteral("abXc")), (CharSpan{2, 0, 1}));
        QCOMPARE(kforge::views::changedSpan(QStringLiteral("aaa"), QStringLiteral("aa")), (CharSpan{2, 1, 0}));
        QCOMPARE(kforge::views::changedSpan(QStringLiteral("same"), QStringLiteral("same")), (CharSpan{4, 0, 0}));
        QCOMPARE(kforge::views::changedSpan(QString(), QStringLiteral("new")), (CharSpan{0, 0, 3}));

        const QStringList left = {QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c"), QStringLiteral("d")};
        const QStringList right = {QStringLiteral("A"), QStringLiteral("b"), QStringLiteral("C"), QStringLiteral("D"),
                                   QStringLiteral("e")};
        QCOMPARE(kforge::views::changeStarts(kforge::views::diffLines(left, right)), (QList<int>{0, 2}));
        QCOMPARE(kforge::views::changeStarts(kforge::views::diffLines(left, left)), QList<int>{});
    }

    void edgeCases()
    {
        const QStringList some = lines({"x", "y"});
        for (const auto& [left, right] : {std::pair{QStringList(), QStringList()}, std::pair{some, QStringList()},
                                          std::pair{QStringList(), some}, std::pair{some, some}}) {
            const LineDiff diff = diffLines(left, right);
            checkRows(left, right, diff);
            QCOMPARE(applyHunks(left, diff.hunks), right);
        }
        QVERIFY(diffLines(some, some).hunks.isEmpty());
        QCOMPARE(diffLines(some, QStringList()).removed, 2);
        QCOMPARE(diffLines(QStringList(), some).added, 2);
    }

    void randomPairsAreMinimalAndRoundTrip()
    {
        std::mt19937 random(12345);
        std::uniform_int_distribution<int> length(0, 30);
        std::uniform_int_distribution<int> symbol(0, 4); // few symbols: many equal lines
        for (int trial = 0; trial < 500; ++trial) {
            QStringList left;
            QStringList right;
            for (int i = length(random); i > 0; --i)
                left.append(QString::number(symbol(random)));
            for (int i = length(random); i > 0; --i)
                right.append(QString::number(symbol(random)));
            const LineDiff diff = diffLines(left, right);
            QCOMPARE(applyHunks(left, diff.hunks), right);
            QCOMPARE(editCount(diff), static_cast<int>(left.size() + right.size()) - 2 * lcsLength(left, right));
            checkRows(left, right, diff);
        }
    }

    void fiveThousandLinesWithFiftyEditsIsFast()
    {
        std::mt19937 random(2024);
        const QStringList left = syntheticSource(5000);
        const QStringList right = edited(left, 50, random);

        QElapsedTimer timer;
        timer.start();
        const LineDiff diff = diffLines(left, right);
        const qint64 elapsedMs = timer.elapsed();
        qInfo("diffLines: %d vs %d lines, %d hunks, %lld ms", static_cast<int>(left.size()),
              static_cast<int>(right.size()), static_cast<int>(diff.hunks.size()), elapsedMs);
        QVERIFY2(elapsedMs < 100, qPrintable(QStringLiteral("took %1 ms").arg(elapsedMs)));

        QCOMPARE(applyHunks(left, diff.hunks), right);
        checkRows(left, right, diff);
        // 50 single-line edits cost at most 2 lines each (a change removes one and adds one).
        QVERIFY2(editCount(diff) <= 100, qPrintable(QString::number(editCount(diff))));
        QVERIFY(!diff.hunks.isEmpty());
    }

    void completelyDifferentSourcesRoundTrip()
    {
        QStringList left;
        QStringList right;
        for (int i = 0; i < 3000; ++i) {
            left.append(QStringLiteral("left %1").arg(i));
            right.append(QStringLiteral("right %1").arg(i));
        }
        QElapsedTimer timer;
        timer.start();
        const LineDiff diff = diffLines(left, right);
        qInfo("diffLines: 3000 vs 3000 lines with nothing in common, %lld ms", timer.elapsed());
        QCOMPARE(diff.changed, 3000);
        QCOMPARE(diff.hunks.size(), 1);
        QCOMPARE(applyHunks(left, diff.hunks), right);
    }
};

QTEST_GUILESS_MAIN(LineDiffTest)
#include "LineDiffTest.moc"
