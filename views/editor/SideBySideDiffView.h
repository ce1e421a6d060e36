#pragma once
// Two read-only, line-aligned source views of a diff (LineDiff): the left text on the left, the
// right text on the right, one display line per DiffRow. A side without a line on a row shows an
// empty filler line, so both views have the same number of lines and scroll together (vertical and
// horizontal). The margins show the original 1-based line numbers (blank on fillers); line
// backgrounds mark removed (left), added (right), changed (both) and filler lines, and inside a
// changed line the characters that differ are boxed. Previous / Next change (Alt+Up / Alt+Down)
// scroll both views from one run of changed lines to the next.
//
// Thread: GUI thread only.

#include "views/editor/LineDiff.h"

#include <QWidget>

class QLabel;
class QPushButton;
class QsciScintilla;

namespace kforge::views {

class SideBySideDiffView : public QWidget {
    Q_OBJECT
public:
    /// Background marker numbers on the display lines (markersAtLine(line) & (1 << marker)).
    static constexpr int AddedMarker = 0;   // right view: a line only the right text has
    static constexpr int RemovedMarker = 1; // left view: a line only the left text has
    static constexpr int ChangedMarker = 2; // both views: a left line replaced by a right line
    static constexpr int FillerMarker = 3;  // the side without a line on an Added/Removed row
    /// The indicator over the characters that differ inside a Changed row (changedSpan).
    static constexpr int ChangedTextIndicator = 8;

    explicit SideBySideDiffView(QWidget* parent = nullptr);

    /// Shows the diff of `leftSource` against `rightSource`; the titles name the two sides.
    void setTexts(const QString& leftTitle, const QString& leftSource, const QString& rightTitle,
                  const QString& rightSource);
    void clear();

    const LineDiff& diff() const { return m_diff; }
    /// "3 changed, 1 added, 2 removed" or "identical".
    QString summary() const;

    /// Scrolls both views to the next (`forward`) or previous run of changed rows, wrapping around;
    /// false when there is none. The buttons under the views and Alt+Down / Alt+Up do this.
    bool goToChange(bool forward);
    /// The display row of the change last gone to; -1 before any.
    int currentChangeRow() const { return m_currentChange < 0 ? -1 : m_changeStarts.value(m_currentChange, -1); }

    QsciScintilla* leftView() const { return m_left; }
    QsciScintilla* rightView() const { return m_right; }

private:
    QsciScintilla* makeView(const QString& objectName);
    void fill(QsciScintilla* view, const QStringList& lines, bool leftSide);
    void markChangedText(const QStringList& left, const QStringList& right);
    void follow(QsciScintilla* from, QsciScintilla* to, int updated);

    // Where a view was scrolled to follow the other one (-1: nowhere pending).
    struct Follow {
        int firstLine = -1;
        long xOffset = -1;
    };

    LineDiff m_diff;
    QList<int> m_changeStarts; // changeStarts(m_diff)
    int m_currentChange = -1;  // index into m_changeStarts
    QPushButton* m_previous;
    QPushButton* m_next;
    QLabel* m_leftTitle;
    QLabel* m_rightTitle;
    QLabel* m_summary;
    QsciScintilla* m_left;
    QsciScintilla* m_right;
    Follow m_leftFollow;
    Follow m_rightFollow;
};

} // namespace kforge::views
