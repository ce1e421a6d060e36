#pragma once
// The latency charts of the current card and the whole model (docs/gui.md, "Latency charts"):
//
// - Progress: best-so-far latency of each run (one staircase line per run, named after it) with
//   the run's failures as red crosses on its line, and the eager baseline as a dashed horizontal
//   line. The latency axis is logarithmic; the x axis is the iteration, or (the "x axis" combo,
//   setXAxis) the cumulative LLM tokens or USD, so runs of different proposers compare by cost.
// - Node: the latency spread of the node given to showNode() as a box (q1, median, q3; no
//   whiskers: only the quartiles are stored), beside its parent's when that was measured, or beside
//   the baseline node's (setBaselineNode) with the ratio of their medians.
// - Cards: the speedup over eager of every card of the model (setCardSpeedups), as horizontal
//   bars: green where the card got faster, red where the best kernel is slower than eager.
//
// The series come from a LatencySeriesModel the pane owns (seriesModel()); setTree/setRuns feed
// it. Live runs: call setTree/setRuns with each new snapshot; the node shown stays shown.
//
// Thread: GUI thread only. Does no engine work.

#include "models/LatencySeriesModel.h"

#include <QList>
#include <QPair>
#include <QString>
#include <QWidget>

#include <optional>

class QBarCategoryAxis;
class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QLogValueAxis;
class QValueAxis;

namespace kforge::views {

class LatencyChartsPane : public QWidget {
    Q_OBJECT
public:
    explicit LatencyChartsPane(QWidget* parent = nullptr);
    ~LatencyChartsPane() override;

    /// One run (the common case): the progress chart of `tree`.
    void setTree(const core::SearchTree& tree);
    /// Several runs of the same card overlaid, one line each, named by NamedRun::name.
    void setRuns(QList<app::NamedRun> runs);
    /// The card's eager median as the baseline (instead of the median of the nodes' eager times);
    /// std::nullopt returns to the nodes' value.
    void setEagerBaselineUs(std::optional<double> eagerUs);
    /// Empties the progress and node charts (the card speedups stay: they are per model).
    void clear();

    /// Shows the latency spread of node `id` of the first run that has it (empty id: none).
    void showNode(const QString& id);
    /// The node the shown node is compared with in the node chart (its box, and the title's
    /// "1.23x vs nX", medians), instead of its parent; empty (or a node not in the runs): the parent.
    void setBaselineNode(const QString& id);
    QString baselineNodeId() const { return m_baselineId; }
    QString shownNodeId() const { return m_nodeId; }

    /// One bar per card: label and speedup over eager (eager / best median; 1 = as fast as eager).
    void setCardSpeedups(const QList<QPair<QString, double>>& speedups);

    void setXAxis(app::LatencyXAxis axis);
    app::LatencyXAxis xAxis() const { return m_xAxis; }

    const app::LatencySeriesModel* seriesModel() const { return m_model; }
    QChart* progressChart() const;
    QChart* nodeChart() const;
    QChart* speedupChart() const;

Q_SIGNALS:
    void xAxisChanged(kforge::app::LatencyXAxis axis);

private:
    void rebuildProgress();
    void rebuildNode();
    void rebuildSpeedups();

    app::LatencySeriesModel* m_model = nullptr;
    app::LatencyXAxis m_xAxis = app::LatencyXAxis::Iteration;
    QString m_nodeId;
    QString m_baselineId;
    QList<QPair<QString, double>> m_speedups;

    QComboBox* m_xAxisCombo = nullptr;
    QLabel* m_note = nullptr;
    QChartView* m_progressView = nullptr;
    QChartView* m_nodeView = nullptr;
    QChartView* m_speedupView = nullptr;
    QValueAxis* m_progressX = nullptr;
    QLogValueAxis* m_progressY = nullptr;
    QBarCategoryAxis* m_nodeX = nullptr;
    QValueAxis* m_nodeY = nullptr;
    QBarCategoryAxis* m_speedupY = nullptr;
    QValueAxis* m_speedupX = nullptr;
};

} // namespace kforge::views
