#pragma once
// The series the latency charts draw (docs/gui.md, "Latency charts"), computed from one or more
// search trees of the same card ("runs": e.g. the built-in proposer and an LLM provider).
//
// Per run, one point per node in iteration order (docs/search.md: one node per iteration) with the
// run's state after that node:
// - best so far: the median latency of the best node (core::bestNode's rule, model/NodeRanking.h:
//   the highest speedup, ties to the lower median, on the tree's ranked GPU model) among the
//   *passed* nodes of iterations <= this one (failed, compiled-only and in-flight nodes never
//   count); undefined (NaN) before the first passed node. With one eager time it never increases;
//   a faster node measured against a slower eager may rank below a slower one.
// - failures: the iterations whose node failed (any failure status).
// - cumulative LLM usage: input + output tokens and USD of the LLM nodes of iterations <= this one,
//   read from the provenance details the LLM proposer records ("input_tokens", "output_tokens",
//   "cost_usd", "cost_known"; core/llm_proposer/LlmUsage.h counts the same way).
// The eager baseline is the one given (setEagerBaselineUs: the main window gives the eager its best
// node's speedup was measured against), else the median of the eager times the nodes of all runs
// were measured against (core::nodeEagerUs).
//
// The computation is pure (computeSeries, bestCurve, failureMarks) and usable without a model.
// The model is also a flat table for list views and tests: one row per node of every run, run
// after run, columns below. Every change is a model reset followed by seriesChanged().
//
// Thread: GUI thread only (asserted). The pure functions may be called from any thread.

#include "model/SearchTree.h"

#include <QAbstractTableModel>
#include <QList>
#include <QPointF>
#include <QString>
#include <QVector>

#include <limits>
#include <optional>

namespace kforge::app {

/// One search of a card, named for the legend ("built-in", "openai/gpt-4o", ...).
struct NamedRun {
    QString name;
    core::SearchTree tree;
    /// Non-empty: only the nodes this proposer produced (LatencySeriesModel::proposerOf), their
    /// iterations renumbered from 0, so several proposers that grew one tree compare as runs.
    QString proposer{};
};

/// What the latency charts put on the x axis.
enum class LatencyXAxis {
    Iteration, // the node's iteration
    Tokens,    // cumulative LLM tokens (input + output)
    CostUsd,   // cumulative LLM cost in USD (the priced calls)
};

/// One node of a run and the run's state after it.
struct LatencySeriesPoint {
    int iteration = 0;
    QString nodeId;
    core::NodeStatus status = core::NodeStatus::Pending;
    /// The node's measured median (passed nodes), NaN otherwise.
    double medianUs = std::numeric_limits<double>::quiet_NaN();
    /// Best so far (see the file comment); NaN before the first passed node.
    double bestUs = std::numeric_limits<double>::quiet_NaN();
    /// The node holding bestUs (empty while bestUs is NaN).
    QString bestNodeId;
    qint64 cumulativeInputTokens = 0;
    qint64 cumulativeOutputTokens = 0;
    double cumulativeCostUsd = 0;
    /// False once any LLM call up to here had no known price (cumulativeCostUsd is then the priced part).
    bool costKnown = true;

    qint64 cumulativeTokens() const { return cumulativeInputTokens + cumulativeOutputTokens; }
    /// The x coordinate of this point on `axis`.
    double x(LatencyXAxis axis) const;
};

/// The series of one run.
struct LatencySeries {
    QString name;
    QString cardId;
    /// One point per node, ordered by iteration.
    QVector<LatencySeriesPoint> points;
    /// Median of the eager times the run's nodes were measured against; NaN when none was.
    double eagerUs = std::numeric_limits<double>::quiet_NaN();
    /// Iterations whose node failed, ascending.
    QVector<int> failedIterations;

    /// The best so far after the last node (NaN when nothing passed).
    double finalBestUs() const;
    qint64 totalTokens() const;
    double totalCostUsd() const;
    bool costKnown() const;
    /// The best-so-far curve on `axis` as a staircase: a point for every node from the first passed
    /// one on, plus, where the best changes, a point at the same x with the previous best (so a
    /// line through the points is horizontal until the improvement, then vertical).
    QList<QPointF> bestCurve(LatencyXAxis axis) const;
    /// One point per failed node: x on `axis`, y the best so far at that iteration (the eager
    /// baseline `fallbackY` before the first passed node; the failure is left out when that is NaN).
    QList<QPointF> failureMarks(LatencyXAxis axis, double fallbackY) const;
};

class LatencySeriesModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        RunColumn,
        IterationColumn,
        NodeColumn,
        StatusColumn,
        MedianColumn,
        BestColumn,
        TokensColumn,
        CostColumn,
        ColumnCount
    };
    enum Role {
        /// The raw value of a cell: int iteration, double µs / USD, qlonglong tokens; an invalid
        /// QVariant for an undefined latency.
        ValueRole = Qt::UserRole + 1,
        /// The index of the row's run in runs() (int), in every column.
        RunIndexRole,
    };

    explicit LatencySeriesModel(QObject* parent = nullptr);

    /// Replaces the runs (all for the same card; not checked: the names tell them apart).
    void setRuns(QList<NamedRun> runs);
    /// The common single-run case: one run named `name` (default "best so far").
    void setTree(const core::SearchTree& tree, const QString& name = {});
    /// Removes every run (the eager override stays).
    void clear();
    /// The eager baseline to draw instead of the nodes' eager medians; std::nullopt returns to the
    /// nodes' values.
    void setEagerBaselineUs(std::optional<double> eagerUs);

    int runCount() const { return static_cast<int>(m_runs.size()); }
    const QList<NamedRun>& runs() const { return m_runs; }
    /// One entry per run, in the order given.
    const QVector<LatencySeries>& series() const { return m_series; }
    /// The eager baseline (see the file comment); NaN when unknown.
    double eagerBaselineUs() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// The series of one tree (see the file comment). Pure.
    static LatencySeries computeSeries(const QString& name, const core::SearchTree& tree, const QString& proposer = {});
    /// "built-in" (root, built-in transformations, manual edits) or "PROVIDER MODEL" for an LLM node.
    static QString proposerOf(const core::SearchNode& node);
    /// One run per proposer that grew `tree` (NamedRun::proposer set), in order of first appearance,
    /// so the charts compare proposers on the same card. A tree grown by one proposer gives one run.
    static QList<NamedRun> runsByProposer(const core::SearchTree& tree);
    /// The median of `values` (mean of the middle two for an even count); NaN when empty.
    static double median(QVector<double> values);

Q_SIGNALS:
    /// After every change (setRuns, setTree, clear, setEagerBaselineUs).
    void seriesChanged();

private:
    void recompute();
    /// (run, point) of a row.
    std::pair<int, int> locate(int row) const;

    QList<NamedRun> m_runs;
    QVector<LatencySeries> m_series;
    QVector<int> m_rowStart; // first row of each run
    int m_rowCount = 0;
    std::optional<double> m_eagerOverride;
    double m_nodesEagerUs = std::numeric_limits<double>::quiet_NaN();
};

} // namespace kforge::app
