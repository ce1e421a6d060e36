#include "views/editor/LineDiff.h"

#include <QHash>

#include <algorithm>
#include <vector>

namespace kforge::views {
namespace {

// Myers' linear-space diff over line ids, after "An O(ND) Difference Algorithm and Its
// Variations" (1986), section 4b: find the middle snake of an optimal path, recurse on both sides.
// Marks every left line that is removed and every right line that is inserted; the unmarked lines
// of both sides form a longest common subsequence, in order.
class MyersDiff {
public:
    MyersDiff(const std::vector<int>& a, const std::vector<int>& b)
        : m_a(a), m_b(b), m_removed(a.size(), false), m_added(b.size(), false)
    {
        const std::size_t size = 2 * (a.size() + b.size()) + 3;
        m_forward.assign(size, 0);
        m_backward.assign(size, 0);
        m_offset = static_cast<int>(a.size() + b.size()) + 1;
    }

    void run() { compare(0, static_cast<int>(m_a.size()), 0, static_cast<int>(m_b.size())); }
    const std::vector<bool>& removed() const { return m_removed; }
    const std::vector<bool>& added() const { return m_added; }

private:
    struct Snake {
        int x0, y0, x1, y1; // relative to the sub-problem: from (x0, y0) diagonally to (x1, y1)
    };

    void compare(int a0, int a1, int b0, int b1)
    {
        // Explicit loop on the second half keeps the recursion depth at O(log) in common cases.
        for (;;) {
            while (a0 < a1 && b0 < b1 && m_a[a0] == m_b[b0]) {
                ++a0;
                ++b0;
            }
            while (a0 < a1 && b0 < b1 && m_a[a1 - 1] == m_b[b1 - 1]) {
                --a1;
                --b1;
            }
            if (a0 == a1) {
                for (int j = b0; j < b1; ++j)
                    m_added[j] = true;
                return;
            }
            if (b0 == b1) {
                for (int i = a0; i < a1; ++i)
                    m_removed[i] = true;
                return;
            }
            const Snake s = middleSnake(a0, a1, b0, b1);
            compare(a0, a0 + s.x0, b0, b0 + s.y0);
            const int na0 = a0 + s.x1;
            const int nb0 = b0 + s.y1;
            a0 = na0;
            b0 = nb0;
        }
    }

    // Both ranges non-empty and their first and last lines differ, so D >= 2 and the snake splits
    // the problem into two strictly smaller ones.
    Snake middleSnake(int a0, int a1, int b0, int b1)
    {
        const int n = a1 - a0;
        const int m = b1 - b0;
        const int delta = n - m;
        const bool odd = (delta & 1) != 0;
        const int maxD = (n + m + 1) / 2;
        int* vf = m_forward.data() + m_offset;  // furthest x on forward diagonal k = x - y
        int* vb = m_backward.data() + m_offset; // furthest x' on reverse diagonal k = x' - y',
                                                // where x' = n - x, y' = m - y
        vf[1] = 0;
        vb[1] = 0;
        for (int d = 0; d <= maxD; ++d) {
            for (int k = -d; k <= d; k += 2) {
                int x = (k == -d || (k != d && vf[k - 1] < vf[k + 1])) ? vf[k + 1] : vf[k - 1] + 1;
                int y = x - k;
                const int x0 = x;
                const int y0 = y;
                while (x < n && y < m && m_a[a0 + x] == m_b[b0 + y]) {
                    ++x;
                    ++y;
                }
                vf[k] = x;
                const int kr = delta - k;
                if (odd && kr >= -(d - 1) && kr <= d - 1 && x + vb[kr] >= n)
                    return {x0, y0, x, y};
            }
            for (int k = -d; k <= d; k += 2) {
                int x = (k == -d || (k != d && vb[k - 1] < vb[k + 1])) ? vb[k + 1] : vb[k - 1] + 1;
                int y = x - k;
                const int x0 = x;
                const int y0 = y;
                while (x < n && y < m && m_a[a1 - 1 - x] == m_b[b1 - 1 - y]) {
                    ++x;
                    ++y;
                }
                vb[k] = x;
                const int kf = delta - k;
                if (!odd && kf >= -d && kf <= d && x + vf[kf] >= n)
                    return {n - x, m - y, n - x0, m - y0};
            }
        }
        Q_UNREACHABLE(); // the paths overlap by d = ceil((n + m) / 2)
        return {0, 0, n, m};
    }

    const std::vector<int>& m_a;
    const std::vector<int>& m_b;
    std::vector<bool> m_removed;
    std::vector<bool> m_added;
    std::vector<int> m_forward;
    std::vector<int> m_backward;
    int m_offset = 0;
};

} // namespace

QStringList splitLines(const QString& text)
{
    QStringList lines;
    if (text.isEmpty())
        return lines;
    qsizetype start = 0;
    for (;;) {
        const qsizetype end = text.indexOf(QLatin1Char('\n'), start);
        const qsizetype stop = end < 0 ? text.size() : end;
        qsizetype length = stop - start;
        if (length > 0 && text.at(stop - 1) == QLatin1Char('\r'))
            --length;
        lines.append(text.mid(start, length));
        if (end < 0 || end + 1 == text.size())
            break;
        start = end + 1;
    }
    return lines;
}

LineDiff diffLines(const QStringList& left, const QStringList& right)
{
    // Lines become small integers so the inner loops compare ints, not strings.
    QHash<QString, int> ids;
    ids.reserve(left.size() + right.size());
    auto toIds = [&ids](const QStringList& lines) {
        std::vector<int> out;
        out.reserve(static_cast<std::size_t>(lines.size()));
        for (const QString& line : lines) {
            auto it = ids.constFind(line);
            if (it == ids.cend())
                it = ids.insert(line, static_cast<int>(ids.size()));
            out.push_back(*it);
        }
        return out;
    };
    const std::vector<int> a = toIds(left);
    const std::vector<int> b = toIds(right);

    MyersDiff myers(a, b);
    myers.run();
    const std::vector<bool>& removed = myers.removed();
    const std::vector<bool>& added = myers.added();

    LineDiff diff;
    diff.rows.reserve(std::max(left.size(), right.size()) + 16);
    const int n = static_cast<int>(a.size());
    const int m = static_cast<int>(b.size());
    int i = 0;
    int j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && !removed[i] && !added[j]) {
            diff.rows.append({i, j, DiffKind::Same});
            ++i;
            ++j;
            continue;
        }
        DiffHunk hunk;
        hunk.leftStart = i;
        hunk.rightStart = j;
        while (i < n && removed[i])
            ++i;
        while (j < m && added[j])
            hunk.rightLines.append(right.at(j++));
        hunk.leftCount = i - hunk.leftStart;
        const int inserted = static_cast<int>(hunk.rightLines.size());
        const int paired = std::min(hunk.leftCount, inserted);
        for (int r = 0; r < paired; ++r)
            diff.rows.append({hunk.leftStart + r, hunk.rightStart + r, DiffKind::Changed});
        for (int r = paired; r < hunk.leftCount; ++r)
            diff.rows.append({hunk.leftStart + r, -1, DiffKind::Removed});
        for (int r = paired; r < inserted; ++r)
            diff.rows.append({-1, hunk.rightStart + r, DiffKind::Added});
        diff.changed += paired;
        diff.removed += hunk.leftCount - paired;
        diff.added += inserted - paired;
        diff.hunks.append(std::move(hunk));
    }
    return diff;
}

QStringList applyHunks(const QStringList& left, const QList<DiffHunk>& hunks)
{
    QStringList out;
    out.reserve(left.size());
    qsizetype next = 0;
    for (const DiffHunk& hunk : hunks) {
        for (; next < hunk.leftStart && next < left.size(); ++next)
            out.append(left.at(next));
        out.append(hunk.rightLines);
        next = hunk.leftStart + hunk.leftCount;
    }
    for (; next < left.size(); ++next)
        out.append(left.at(next));
    return out;
}

CharSpan changedSpan(const QString& left, const QString& right)
{
    const int shorter = static_cast<int>(std::min(left.size(), right.size()));
    int prefix = 0;
    while (prefix < shorter && left.at(prefix) == right.at(prefix))
        ++prefix;
    int suffix = 0;
    while (suffix < shorter - prefix && left.at(left.size() - 1 - suffix) == right.at(right.size() - 1 - suffix))
        ++suffix;
    return CharSpan{prefix, static_cast<int>(left.size()) - prefix - suffix,
                    static_cast<int>(right.size()) - prefix - suffix};
}

QList<int> changeStarts(const LineDiff& diff)
{
    QList<int> starts;
    for (int i = 0; i < diff.rows.size(); ++i)
        if (diff.rows.at(i).kind != DiffKind::Same && (i == 0 || diff.rows.at(i - 1).kind == DiffKind::Same))
            starts.append(i);
    return starts;
}

} // namespace kforge::views
