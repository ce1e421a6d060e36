#include "views/charts/LatencyChartsPane.h"

#include "model/NodeRanking.h"
#include "models/SearchTreeModel.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QBoxPlotSeries>
#include <QBoxSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QGraphicsLayout>
#include <QHBoxLayout>
#include <QHorizontalStackedBarSeries>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QSet>
#include <QSplitter>
#include <QStringList>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace kforge::views {
namespace {

const QColor kFaster(0x2e, 0x9e, 0x4f);
const QColor kSlower(0xd0, 0x3b, 0x3b);
const QColor kEager(0x70, 0x70, 0x70);

QChartView* makeChartView(const QString& objectName, QWidget* parent)
{
    auto* chart = new QChart;
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(4, 4, 4, 4));
    // No frame of empty space around the plot (QChart's layout keeps one by default): at 1400x860
    // a chart has about 180 px of height for its title, axes, legend and data.
    chart->layout()->setContentsMargins(0, 0, 0, 0);
    chart->setBackgroundRoundness(0);
    auto* view = new QChartView(chart, parent); // the view owns the chart
    view->setObjectName(objectName);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumSize(160, 120);
    return view;
}

/// Fits the logarithmic latency axis to `lo`..`hi` µs: base 10 over wide ranges, base 2 over narrow
/// ones so there are labelled ticks inside, padded so the extreme points are not on the border.
void fitLatencyAxis(QLogValueAxis* axis, double lo, double hi)
{
    if (!(lo > 0) || !(hi > 0) || !std::isfinite(lo) || !std::isfinite(hi)) {
        lo = 1;
        hi = 100;
    }
    axis->setBase(hi / lo >= 50 ? 10.0 : 2.0);
    axis->setMinorTickCount(axis->base() == 10.0 ? 8 : 1);
    axis->setRange(lo / 1.25, hi * 1.25);
}

QString xAxisTitle(app::LatencyXAxis axis)
{
    switch (axis) {
    case app::LatencyXAxis::Iteration:
        return QObject::tr("iteration");
    case app::LatencyXAxis::Tokens:
        return QObject::tr("cumulative LLM tokens (input + output)");
    case app::LatencyXAxis::CostUsd:
        return QObject::tr("cumulative LLM cost (USD)");
    }
    return {};
}

} // namespace

LatencyChartsPane::LatencyChartsPane(QWidget* parent) : QWidget(parent), m_model(new app::LatencySeriesModel(this))
{
    setObjectName(QStringLiteral("latencyChartsPane"));

    m_xAxisCombo = new QComboBox(this);
    m_xAxisCombo->setObjectName(QStringLiteral("latencyXAxisCombo"));
    m_xAxisCombo->addItem(tr("Iteration"), static_cast<int>(app::LatencyXAxis::Iteration));
    m_xAxisCombo->addItem(tr("LLM tokens"), static_cast<int>(app::LatencyXAxis::Tokens));
    m_xAxisCombo->addItem(tr("LLM cost (USD)"), static_cast<int>(app::LatencyXAxis::CostUsd));
    m_xAxisCombo->setToolTip(tr("Plot the best-so-far latency against the iteration or against the "
                                "cumulative cost of the LLM calls"));
    m_note = new QLabel(this);
    m_note->setObjectName(QStringLiteral("latencyChartsNote"));
    m_note->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* label = new QLabel(tr("X axis:"), this);
    label->setBuddy(m_xAxisCombo);
    auto* controls = new QHBoxLayout;
    controls->addWidget(label);
    controls->addWidget(m_xAxisCombo);
    controls->addSpacing(12);
    controls->addWidget(m_note, 1);

    m_progressView = makeChartView(QStringLiteral("latencyProgressView"), this);
    m_nodeView = makeChartView(QStringLiteral("latencyNodeView"), this);
    m_speedupView = makeChartView(QStringLiteral("latencySpeedupView"), this);
    m_nodeView->chart()->legend()->hide();
    // The progress chart's two entries beside the plot: it has more width than height to spare.
    m_progressView->chart()->legend()->setAlignment(Qt::AlignRight);

    // The axes live as long as the charts; rebuilding replaces only the series (removing axes
    // from a chart leaves their items behind until the next deferred-delete pass).
    m_progressX = new QValueAxis(this);
    m_progressY = new QLogValueAxis(this);
    m_progressY->setTitleText(tr("latency (µs, log)"));
    m_progressY->setLabelFormat(QStringLiteral("%g"));
    m_progressView->chart()->addAxis(m_progressX, Qt::AlignBottom);
    m_progressView->chart()->addAxis(m_progressY, Qt::AlignLeft);
    m_nodeX = new QBarCategoryAxis(this);
    m_nodeY = new QValueAxis(this);
    m_nodeY->setTitleText(tr("latency (µs)"));
    m_nodeY->setLabelFormat(QStringLiteral("%.3g"));
    m_nodeView->chart()->addAxis(m_nodeX, Qt::AlignBottom);
    m_nodeView->chart()->addAxis(m_nodeY, Qt::AlignLeft);
    m_speedupY = new QBarCategoryAxis(this);
    m_speedupX = new QValueAxis(this);
    m_speedupX->setTitleText(tr("speedup (x eager)"));
    m_speedupX->setLabelFormat(QStringLiteral("%.2g"));
    m_speedupView->chart()->addAxis(m_speedupY, Qt::AlignLeft);
    m_speedupView->chart()->addAxis(m_speedupX, Qt::AlignBottom);
    m_speedupView->chart()->legend()->setAlignment(Qt::AlignBottom);

    auto* bottom = new QSplitter(Qt::Horizontal, this);
    bottom->addWidget(m_nodeView);
    bottom->addWidget(m_speedupView);
    // Sizes, not only stretch factors: those share out what is left after the charts' size hints,
    // which had left the speedup chart a third of the node chart's width.
    bottom->setSizes({1000, 1000});
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_progressView);
    split->addWidget(bottom);
    split->setSizes({1000, 1000}); // each row of charts half the height: plot areas above 80 px at 860

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(controls);
    layout->addWidget(split, 1);

    connect(m_xAxisCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index >= 0)
            setXAxis(static_cast<app::LatencyXAxis>(m_xAxisCombo->itemData(index).toInt()));
    });
    connect(m_model, &app::LatencySeriesModel::seriesChanged, this, [this] {
        rebuildProgress();
        rebuildNode();
    });

    rebuildProgress();
    rebuildNode();
    rebuildSpeedups();
}

LatencyChartsPane::~LatencyChartsPane() = default;

void LatencyChartsPane::setTree(const core::SearchTree& tree)
{
    m_model->setTree(tree);
}

void LatencyChartsPane::setRuns(QList<app::NamedRun> runs)
{
    m_model->setRuns(std::move(runs));
}

void LatencyChartsPane::setEagerBaselineUs(std::optional<double> eagerUs)
{
    m_model->setEagerBaselineUs(eagerUs);
}

void LatencyChartsPane::clear()
{
    m_nodeId.clear();
    m_model->clear();
}

void LatencyChartsPane::showNode(const QString& id)
{
    m_nodeId = id;
    rebuildNode();
}

void LatencyChartsPane::setCardSpeedups(const QList<QPair<QString, double>>& speedups)
{
    m_speedups = speedups;
    rebuildSpeedups();
}

void LatencyChartsPane::setXAxis(app::LatencyXAxis axis)
{
    if (axis == m_xAxis)
        return;
    m_xAxis = axis;
    const int index = m_xAxisCombo->findData(static_cast<int>(axis));
    if (index != m_xAxisCombo->currentIndex()) {
        const QSignalBlocker blocker(m_xAxisCombo);
        m_xAxisCombo->setCurrentIndex(index);
    }
    rebuildProgress();
    Q_EMIT xAxisChanged(axis);
}

QChart* LatencyChartsPane::progressChart() const
{
    return m_progressView->chart();
}

QChart* LatencyChartsPane::nodeChart() const
{
    return m_nodeView->chart();
}

QChart* LatencyChartsPane::speedupChart() const
{
    return m_speedupView->chart();
}

void LatencyChartsPane::rebuildProgress()
{
    QChart* chart = m_progressView->chart();
    chart->removeAllSeries();

    const QVector<app::LatencySeries>& all = m_model->series();
    const double eager = m_model->eagerBaselineUs();
    QString card;
    for (const app::LatencySeries& s : all) {
        if (!s.cardId.isEmpty()) {
            card = s.cardId;
            break;
        }
    }
    chart->setTitle(card.isEmpty() ? tr("Best-so-far latency") : tr("Best-so-far latency: %1").arg(card));

    double xMax = 0;
    double yLo = std::numeric_limits<double>::infinity();
    double yHi = 0;
    const auto widen = [&](const QList<QPointF>& points) {
        for (const QPointF& p : points) {
            xMax = std::max(xMax, p.x());
            yLo = std::min(yLo, p.y());
            yHi = std::max(yHi, p.y());
        }
    };

    QList<QAbstractSeries*> added;
    QList<QAbstractSeries*> unlisted; // kept out of the legend
    QList<QLineSeries*> lines;        // the runs' best-so-far lines
    QStringList notes;
    for (const app::LatencySeries& s : all) {
        auto* line = new QLineSeries;
        line->setName(s.name);
        const QList<QPointF> curve = s.bestCurve(m_xAxis);
        line->replace(curve);
        widen(curve);
        added.append(line);
        lines.append(line);

        // Failures sit on their run's line, drawn under it (added first) and translucent, so a
        // long run's many failures do not hide the line.
        auto* failures = new QScatterSeries;
        failures->setName(tr("%1: failed nodes").arg(s.name));
        failures->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
        failures->setMarkerSize(5);
        QColor failureColor = kSlower;
        failureColor.setAlpha(150);
        failures->setColor(failureColor);
        failures->setBorderColor(Qt::transparent);
        const QList<QPointF> marks = s.failureMarks(m_xAxis, eager);
        failures->replace(marks);
        widen(marks);
        added.insert(added.size() - 1, failures);
        unlisted.append(failures);
        for (const app::LatencySeriesPoint& p : s.points)
            xMax = std::max(xMax, p.x(m_xAxis));

        if (m_xAxis != app::LatencyXAxis::Iteration && s.totalTokens() == 0)
            notes.append(tr("%1 made no LLM calls (all at 0)").arg(s.name));
        else if (m_xAxis == app::LatencyXAxis::CostUsd && !s.costKnown())
            notes.append(tr("%1: some calls had no price (priced part shown)").arg(s.name));
    }
    QValueAxis* x = m_progressX;
    x->setTitleText(xAxisTitle(m_xAxis));
    x->setLabelFormat(m_xAxis == app::LatencyXAxis::CostUsd ? QStringLiteral("$%.3g") : QStringLiteral("%.0f"));
    if (m_xAxis == app::LatencyXAxis::Iteration && xMax < 10) {
        x->setRange(0, xMax > 0 ? xMax : 1);
        x->setTickCount(xMax >= 1 ? static_cast<int>(xMax) + 1 : 2);
    } else {
        x->setRange(0, xMax > 0 ? xMax : 1);
        x->setTickCount(6);
        x->applyNiceNumbers();
    }
    if (!all.isEmpty() && !std::isnan(eager)) {
        auto* baseline = new QLineSeries;
        baseline->setName(tr("eager %1").arg(app::SearchTreeModel::latencyText(eager)));
        QPen pen(kEager);
        pen.setStyle(Qt::DashLine);
        pen.setWidthF(1.5);
        baseline->setPen(pen);
        baseline->replace(QList<QPointF>{QPointF(x->min(), eager), QPointF(x->max(), eager)});
        yLo = std::min(yLo, eager);
        yHi = std::max(yHi, eager);
        added.append(baseline);
    }
    if (!all.isEmpty())
        notes.prepend(tr("red squares: failed nodes"));
    m_note->setText(notes.join(QStringLiteral("; ")));

    fitLatencyAxis(m_progressY, yHi > 0 ? yLo : 0, yHi);
    for (QAbstractSeries* series : std::as_const(added)) {
        chart->addSeries(series);
        series->attachAxis(x);
        series->attachAxis(m_progressY);
    }
    // Widen the runs' lines after addSeries, which gives each its theme colour.
    for (QLineSeries* line : std::as_const(lines)) {
        QPen pen = line->pen();
        pen.setWidthF(2);
        line->setPen(pen);
    }
    for (QAbstractSeries* series : std::as_const(unlisted)) {
        const QList<QLegendMarker*> markers = chart->legend()->markers(series);
        for (QLegendMarker* marker : markers)
            marker->setVisible(false);
    }
}

void LatencyChartsPane::setBaselineNode(const QString& id)
{
    if (id == m_baselineId)
        return;
    m_baselineId = id;
    rebuildNode();
}

void LatencyChartsPane::rebuildNode()
{
    QChart* chart = m_nodeView->chart();
    chart->removeAllSeries();
    m_nodeX->clear();
    m_nodeX->setVisible(false);
    m_nodeY->setVisible(false);

    const core::SearchNode* node = nullptr;
    const core::SearchTree* tree = nullptr;
    if (!m_nodeId.isEmpty()) {
        const std::string id = m_nodeId.toStdString();
        for (const app::NamedRun& run : m_model->runs()) {
            if ((node = run.tree.find(id))) {
                tree = &run.tree;
                break;
            }
        }
    }
    if (!node) {
        chart->setTitle(m_nodeId.isEmpty() ? tr("No node selected") : tr("Node %1: not in this tree").arg(m_nodeId));
        return;
    }
    if (!node->latency) {
        chart->setTitle(tr("Node %1: %2 (not measured)").arg(m_nodeId, app::SearchTreeModel::statusText(node->status)));
        return;
    }

    // The node beside it: the baseline node when one is set and measured, else the parent.
    QList<const core::SearchNode*> shown;
    const core::SearchNode* baseline =
        m_baselineId.isEmpty() || m_baselineId == m_nodeId ? nullptr : tree->find(m_baselineId.toStdString());
    if (baseline && !baseline->latency)
        baseline = nullptr;
    if (baseline) {
        shown.append(baseline);
    } else if (node->parentId) {
        const core::SearchNode* parent = tree->find(*node->parentId);
        if (parent && parent->latency)
            shown.append(parent);
    }
    shown.append(node);

    auto* series = new QBoxPlotSeries;
    series->setName(tr("latency"));
    series->setBoxWidth(0.4);
    QStringList categories;
    double lo = std::numeric_limits<double>::infinity();
    double hi = 0;
    for (const core::SearchNode* n : std::as_const(shown)) {
        const core::LatencyStats& l = *n->latency;
        const QString category = n == node ? QString::fromStdString(n->id)
            : n == baseline                ? tr("%1 (baseline)").arg(QString::fromStdString(n->id))
                                           : tr("%1 (parent)").arg(QString::fromStdString(n->id));
        auto* box = new QBoxSet(category);
        box->setValue(QBoxSet::LowerExtreme, l.q1Us);
        box->setValue(QBoxSet::LowerQuartile, l.q1Us);
        box->setValue(QBoxSet::Median, l.medianUs);
        box->setValue(QBoxSet::UpperQuartile, l.q3Us);
        box->setValue(QBoxSet::UpperExtreme, l.q3Us);
        if (n == node)
            box->setBrush(QColor(0x9c, 0xd6, 0xa8));
        series->append(box);
        categories.append(category);
        lo = std::min({lo, l.q1Us, l.medianUs});
        hi = std::max({hi, l.q3Us, l.medianUs});
    }
    const core::LatencyStats& l = *node->latency;
    QString title = tr("Node %1: median %2 (q1 %3, q3 %4)")
                        .arg(m_nodeId, app::SearchTreeModel::latencyText(l.medianUs),
                             app::SearchTreeModel::latencyText(l.q1Us), app::SearchTreeModel::latencyText(l.q3Us));
    if (const std::optional<double> eager = core::nodeEagerUs(*node))
        title += tr(" · eager %1").arg(app::SearchTreeModel::latencyText(*eager));
    if (const std::optional<double> speedup = core::nodeSpeedup(*node))
        title += tr(" · %1").arg(app::SearchTreeModel::speedupText(*speedup));
    if (baseline)
        if (const std::optional<double> ratio = core::medianSpeedupOver(*node, *baseline))
            title += tr(" · %1 vs %2 (medians)")
                         .arg(app::SearchTreeModel::speedupText(*ratio), QString::fromStdString(baseline->id));
    chart->setTitle(title);

    m_nodeX->append(categories);
    const double pad = std::max((hi - lo) * 0.25, hi * 0.02);
    m_nodeY->setRange(std::max(0.0, lo - pad), hi + pad);
    m_nodeX->setVisible(true);
    m_nodeY->setVisible(true);
    chart->addSeries(series);
    series->attachAxis(m_nodeX);
    series->attachAxis(m_nodeY);
}

void LatencyChartsPane::rebuildSpeedups()
{
    QChart* chart = m_speedupView->chart();
    chart->removeAllSeries();
    m_speedupY->clear();
    chart->setTitle(m_speedups.isEmpty() ? tr("Speedup per card: no cards") : tr("Speedup per card over eager"));
    m_speedupX->setVisible(!m_speedups.isEmpty());
    m_speedupY->setVisible(!m_speedups.isEmpty());
    if (m_speedups.isEmpty())
        return;

    // Horizontal bars are drawn bottom-up: add the cards in reverse so the list reads top-down.
    // Category labels must be unique (QBarCategoryAxis drops duplicates).
    auto* faster = new QBarSet(tr("faster"));
    auto* slower = new QBarSet(tr("slower"));
    faster->setColor(kFaster);
    slower->setColor(kSlower);
    QStringList categories;
    QSet<QString> used;
    double maxSpeedup = 1;
    for (auto it = m_speedups.crbegin(); it != m_speedups.crend(); ++it) {
        QString label = it->first;
        for (int k = 2; used.contains(label); ++k)
            label = QStringLiteral("%1 (%2)").arg(it->first).arg(k);
        used.insert(label);
        categories.append(label);
        const double s = std::isfinite(it->second) && it->second > 0 ? it->second : 0;
        faster->append(s >= 1 ? s : 0);
        slower->append(s < 1 ? s : 0);
        maxSpeedup = std::max(maxSpeedup, s);
    }
    auto* series = new QHorizontalStackedBarSeries;
    series->append(faster);
    series->append(slower);
    series->setBarWidth(0.7);

    m_speedupY->append(categories);
    m_speedupX->setRange(0, maxSpeedup * 1.1);
    m_speedupX->applyNiceNumbers();
    chart->addSeries(series);
    series->attachAxis(m_speedupX);
    series->attachAxis(m_speedupY);
}

} // namespace kforge::views
