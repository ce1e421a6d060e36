#include "views/editor/SideBySideDiffView.h"

#include "views/editor/CudaLexer.h"
#include "views/editor/QsciHeaders.h"

#include <QColor>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollBar>
#include <QShortcut>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

namespace kforge::views {
namespace {

const QColor kAddedBackground(0xd6, 0xf5, 0xd6);
const QColor kRemovedBackground(0xfb, 0xd9, 0xd9);
const QColor kChangedBackground(0xfc, 0xee, 0xc4);
const QColor kFillerBackground(0xec, 0xec, 0xec);
const QColor kChangedText(0xe0, 0x8a, 0x00);
constexpr int kLinesAboveAChange = 3; // context kept above a change scrolled to

} // namespace

SideBySideDiffView::SideBySideDiffView(QWidget* parent)
    : QWidget(parent), m_previous(new QPushButton(tr("Previous change"), this)),
      m_next(new QPushButton(tr("Next change"), this)), m_leftTitle(new QLabel(this)), m_rightTitle(new QLabel(this)),
      m_summary(new QLabel(this)), m_left(makeView(QStringLiteral("diffLeft"))),
      m_right(makeView(QStringLiteral("diffRight")))
{
    m_previous->setObjectName(QStringLiteral("diffPreviousChange"));
    m_next->setObjectName(QStringLiteral("diffNextChange"));
    m_previous->setToolTip(tr("Alt+Up"));
    m_next->setToolTip(tr("Alt+Down"));
    connect(m_previous, &QPushButton::clicked, this, [this] { goToChange(false); });
    connect(m_next, &QPushButton::clicked, this, [this] { goToChange(true); });
    for (const auto& [key, forward] : {std::pair{Qt::Key_Down, true}, std::pair{Qt::Key_Up, false}}) {
        auto* shortcut = new QShortcut(QKeySequence(Qt::ALT | key), this);
        shortcut->setContext(Qt::WidgetWithChildrenShortcut);
        connect(shortcut, &QShortcut::activated, this, [this, forward = forward] { goToChange(forward); });
    }
    m_leftTitle->setObjectName(QStringLiteral("diffLeftTitle"));
    m_rightTitle->setObjectName(QStringLiteral("diffRightTitle"));
    m_summary->setObjectName(QStringLiteral("diffSummary"));

    auto* leftBox = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(leftBox);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(m_leftTitle);
    leftLayout->addWidget(m_left, 1);
    auto* rightBox = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(rightBox);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addWidget(m_rightTitle);
    rightLayout->addWidget(m_right, 1);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(leftBox);
    splitter->addWidget(rightBox);
    splitter->setChildrenCollapsible(false);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(splitter, 1);
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(m_summary, 1);
    bottom->addWidget(m_previous);
    bottom->addWidget(m_next);
    layout->addLayout(bottom);

    // Both views always have the same number of lines, so they share the first visible line and
    // the horizontal offset. Scintilla reports scrolling (wheel, keys, scroll bar, API) through
    // SCN_UPDATEUI after it repaints; a view that was just scrolled to follow the other reports
    // that too, and is not followed back (it may lag behind the user's next scroll).
    connect(m_left, &QsciScintillaBase::SCN_UPDATEUI, this, [this](int updated) { follow(m_left, m_right, updated); });
    connect(m_right, &QsciScintillaBase::SCN_UPDATEUI, this, [this](int updated) { follow(m_right, m_left, updated); });
    connect(m_left->verticalScrollBar(), &QScrollBar::valueChanged, this,
            [this] { follow(m_left, m_right, QsciScintillaBase::SC_UPDATE_V_SCROLL); });
    connect(m_right->verticalScrollBar(), &QScrollBar::valueChanged, this,
            [this] { follow(m_right, m_left, QsciScintillaBase::SC_UPDATE_V_SCROLL); });
    clear();
}

void SideBySideDiffView::follow(QsciScintilla* from, QsciScintilla* to, int updated)
{
    Follow& fromState = from == m_left ? m_leftFollow : m_rightFollow;
    Follow& toState = to == m_left ? m_leftFollow : m_rightFollow;
    if (updated & QsciScintillaBase::SC_UPDATE_V_SCROLL) {
        const int line = from->firstVisibleLine();
        if (line == fromState.firstLine) {
            fromState.firstLine = -1; // the echo of following `to`
        } else if (to->firstVisibleLine() != line) {
            toState.firstLine = line;
            to->setFirstVisibleLine(line);
        }
    }
    if (updated & QsciScintillaBase::SC_UPDATE_H_SCROLL) {
        const long offset = from->SendScintilla(QsciScintillaBase::SCI_GETXOFFSET);
        if (offset == fromState.xOffset) {
            fromState.xOffset = -1;
        } else if (to->SendScintilla(QsciScintillaBase::SCI_GETXOFFSET) != offset) {
            toState.xOffset = offset;
            to->SendScintilla(QsciScintillaBase::SCI_SETXOFFSET, offset);
        }
    }
}

QsciScintilla* SideBySideDiffView::makeView(const QString& objectName)
{
    auto* view = new QsciScintilla(this);
    view->setObjectName(objectName);
    view->setUtf8(true);
    view->setLexer(new CudaLexer(view));
    view->setWrapMode(QsciScintilla::WrapNone);
    view->SendScintilla(QsciScintillaBase::SCI_SETSCROLLWIDTH, 1);
    view->SendScintilla(QsciScintillaBase::SCI_SETSCROLLWIDTHTRACKING, 1);
    view->setMarginsFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    view->setMarginType(0, QsciScintilla::TextMarginRightJustified);
    view->setMarginWidth(1, 0);
    view->setMarginWidth(2, 0);
    view->setCaretLineVisible(false);
    view->markerDefine(QsciScintilla::Background, AddedMarker);
    view->setMarkerBackgroundColor(kAddedBackground, AddedMarker);
    view->markerDefine(QsciScintilla::Background, RemovedMarker);
    view->setMarkerBackgroundColor(kRemovedBackground, RemovedMarker);
    view->markerDefine(QsciScintilla::Background, ChangedMarker);
    view->setMarkerBackgroundColor(kChangedBackground, ChangedMarker);
    view->markerDefine(QsciScintilla::Background, FillerMarker);
    view->setMarkerBackgroundColor(kFillerBackground, FillerMarker);
    view->indicatorDefine(QsciScintilla::FullBoxIndicator, ChangedTextIndicator);
    view->setIndicatorForegroundColor(kChangedText, ChangedTextIndicator);
    return view;
}

void SideBySideDiffView::setTexts(const QString& leftTitle, const QString& leftSource, const QString& rightTitle,
                                  const QString& rightSource)
{
    const QStringList left = splitLines(leftSource);
    const QStringList right = splitLines(rightSource);
    m_diff = diffLines(left, right);
    m_leftTitle->setText(leftTitle);
    m_rightTitle->setText(rightTitle);
    m_summary->setText(summary());
    fill(m_left, left, true);
    fill(m_right, right, false);
    markChangedText(left, right);
    m_leftFollow = {};
    m_rightFollow = {};
    m_changeStarts = changeStarts(m_diff);
    m_currentChange = -1;
    m_previous->setEnabled(!m_changeStarts.isEmpty());
    m_next->setEnabled(!m_changeStarts.isEmpty());
}

void SideBySideDiffView::markChangedText(const QStringList& left, const QStringList& right)
{
    for (int i = 0; i < m_diff.rows.size(); ++i) {
        const DiffRow& row = m_diff.rows.at(i);
        if (row.kind != DiffKind::Changed)
            continue;
        const CharSpan span = changedSpan(left.at(row.leftLine), right.at(row.rightLine));
        if (span.leftLength > 0)
            m_left->fillIndicatorRange(i, span.start, i, span.start + span.leftLength, ChangedTextIndicator);
        if (span.rightLength > 0)
            m_right->fillIndicatorRange(i, span.start, i, span.start + span.rightLength, ChangedTextIndicator);
    }
}

bool SideBySideDiffView::goToChange(bool forward)
{
    if (m_changeStarts.isEmpty())
        return false;
    const int count = static_cast<int>(m_changeStarts.size());
    m_currentChange =
        m_currentChange < 0 ? (forward ? 0 : count - 1) : (m_currentChange + (forward ? 1 : count - 1)) % count;
    const int row = m_changeStarts.at(m_currentChange);
    m_left->setFirstVisibleLine(std::max(0, row - kLinesAboveAChange));
    m_right->setFirstVisibleLine(std::max(0, row - kLinesAboveAChange));
    m_summary->setText(summary() + tr(" \u2014 change %1 of %2").arg(m_currentChange + 1).arg(count));
    return true;
}

void SideBySideDiffView::clear()
{
    setTexts(QString(), QString(), QString(), QString());
    m_summary->clear();
}

QString SideBySideDiffView::summary() const
{
    if (m_diff.hunks.isEmpty())
        return tr("identical");
    return tr("%1 changed, %2 added, %3 removed").arg(m_diff.changed).arg(m_diff.added).arg(m_diff.removed);
}

void SideBySideDiffView::fill(QsciScintilla* view, const QStringList& lines, bool leftSide)
{
    QStringList shown;
    shown.reserve(m_diff.rows.size());
    for (const DiffRow& row : m_diff.rows) {
        const int line = leftSide ? row.leftLine : row.rightLine;
        shown.append(line >= 0 ? lines.at(line) : QString());
    }
    view->setReadOnly(false);
    view->setText(shown.join(QLatin1Char('\n')));
    view->setReadOnly(true);
    view->markerDeleteAll();
    view->clearMarginText();

    const int digits = static_cast<int>(QString::number(std::max<qsizetype>(lines.size(), 1)).size());
    view->setMarginWidth(0, QString(digits + 1, QLatin1Char('9')));
    for (int i = 0; i < m_diff.rows.size(); ++i) {
        const DiffRow& row = m_diff.rows.at(i);
        const int line = leftSide ? row.leftLine : row.rightLine;
        if (line >= 0)
            view->setMarginText(i, QString::number(line + 1), QsciScintillaBase::STYLE_LINENUMBER);
        switch (row.kind) {
        case DiffKind::Same:
            break;
        case DiffKind::Changed:
            view->markerAdd(i, ChangedMarker);
            break;
        case DiffKind::Added:
            view->markerAdd(i, leftSide ? FillerMarker : AddedMarker);
            break;
        case DiffKind::Removed:
            view->markerAdd(i, leftSide ? RemovedMarker : FillerMarker);
            break;
        }
    }
    view->setFirstVisibleLine(0);
}

} // namespace kforge::views
