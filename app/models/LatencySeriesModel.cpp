#include "models/LatencySeriesModel.h"

#include "model/NodeRanking.h"
#include "models/SearchTreeModel.h"

#include <QThread>

#include <algorithm>
#include <cmath>
#include <utility>

namespace kforge::app {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Tokens and cost of one LLM node, as LlmUsage reads them (core/llm_proposer/LlmUsage.cpp): a
/// missing or mistyped field counts as unpriced.
struct NodeUsage {
    qint64 inputTokens = 0;
    qint64 outputTokens = 0;
    double costUsd = 0;
    bool costKnown = true;
};

NodeUsage usageOf(const core::SearchNode& node)
{
    NodeUsage usage;
    if (node.provenance.kind != core::ProvenanceKind::Llm)
        return usage;
    const nlohmann::json& d = node.provenance.details;
    if (!d.is_object()) {
        usage.costKnown = false;
        return usage;
    }
    try {
        usage.inputTokens = d.value("input_tokens", std::int64_t{0});
        usage.outputTokens = d.value("output_tokens", std::int64_t{0});
        usage.costUsd = d.value("cost_usd", 0.0);
        usage.costKnown = d.value("cost_known", false);
    } catch (const nlohmann::json::exception&) {
        usage = NodeUsage{};
        usage.costKnown = false;
    }
    return usage;
}

} // namespace

double LatencySeriesPoint::x(LatencyXAxis axis) const
{
    switch (axis) {
    case LatencyXAxis::Iteration:
        return iteration;
    case LatencyXAxis::Tokens:
        return static_cast<double>(cumulativeTokens());
    case LatencyXAxis::CostUsd:
        return cumulativeCostUsd;
    }
    return iteration;
}

double LatencySeries::finalBestUs() const
{
    return points.isEmpty() ? kNaN : points.last().bestUs;
}

qint64 LatencySeries::totalTokens() const
{
    return points.isEmpty() ? 0 : points.last().cumulativeTokens();
}

double LatencySeries::totalCostUsd() const
{
    return points.isEmpty() ? 0 : points.last().cumulativeCostUsd;
}

bool LatencySeries::costKnown() const
{
    return points.isEmpty() || points.last().costKnown;
}

QList<QPointF> LatencySeries::bestCurve(LatencyXAxis axis) const
{
    QList<QPointF> curve;
    curve.reserve(points.size() + 16);
    double previous = kNaN;
    for (const LatencySeriesPoint& p : points) {
        if (std::isnan(p.bestUs))
            continue;
        const double x = p.x(axis);
        if (!std::isnan(previous) && p.bestUs != previous)
            curve.append(QPointF(x, previous));
        curve.append(QPointF(x, p.bestUs));
        previous = p.bestUs;
    }
    return curve;
}

QList<QPointF> LatencySeries::failureMarks(LatencyXAxis axis, double fallbackY) const
{
    QList<QPointF> marks;
    for (const LatencySeriesPoint& p : points) {
        if (!core::isFailure(p.status))
            continue;
        const double y = std::isnan(p.bestUs) ? fallbackY : p.bestUs;
        if (!std::isnan(y))
            marks.append(QPointF(p.x(axis), y));
    }
    return marks;
}

LatencySeriesModel::LatencySeriesModel(QObject* parent) : QAbstractTableModel(parent)
{
}

void LatencySeriesModel::setRuns(QList<NamedRun> runs)
{
    Q_ASSERT(QThread::currentThread() == thread());
    beginResetModel();
    m_runs = std::move(runs);
    recompute();
    endResetModel();
    Q_EMIT seriesChanged();
}

void LatencySeriesModel::setTree(const core::SearchTree& tree, const QString& name)
{
    setRuns({NamedRun{name.isEmpty() ? tr("best so far") : name, tree}});
}

void LatencySeriesModel::clear()
{
    setRuns({});
}

void LatencySeriesModel::setEagerBaselineUs(std::optional<double> eagerUs)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (eagerUs && !(*eagerUs > 0))
        eagerUs.reset();
    if (eagerUs == m_eagerOverride)
        return;
    m_eagerOverride = eagerUs;
    // Only the baseline changes, which no cell shows: no reset needed.
    Q_EMIT seriesChanged();
}

double LatencySeriesModel::eagerBaselineUs() const
{
    return m_eagerOverride ? *m_eagerOverride : m_nodesEagerUs;
}

void LatencySeriesModel::recompute()
{
    m_series.clear();
    m_rowStart.clear();
    m_rowCount = 0;
    QVector<double> eager;
    for (const NamedRun& run : std::as_const(m_runs)) {
        m_series.append(computeSeries(run.name, run.tree, run.proposer));
        m_rowStart.append(m_rowCount);
        m_rowCount += static_cast<int>(m_series.last().points.size());
        for (const core::SearchNode& node : run.tree.nodes()) {
            if (const std::optional<double> eagerUs = core::nodeEagerUs(node))
                eager.append(*eagerUs);
        }
    }
    m_nodesEagerUs = median(std::move(eager));
}

LatencySeries LatencySeriesModel::computeSeries(const QString& name, const core::SearchTree& tree,
                                                const QString& proposer)
{
    LatencySeries series;
    series.name = name;
    series.cardId = QString::fromStdString(tree.cardId());

    std::vector<const core::SearchNode*> nodes;
    nodes.reserve(tree.size());
    for (const core::SearchNode& node : tree.nodes())
        if (proposer.isEmpty() || proposerOf(node) == proposer)
            nodes.push_back(&node);
    // Creation order is iteration order in a well-formed tree; sort anyway (stable: ties keep it).
    std::stable_sort(nodes.begin(), nodes.end(),
                     [](const core::SearchNode* a, const core::SearchNode* b) { return a->iteration < b->iteration; });

    QVector<double> eager;
    LatencySeriesPoint state;
    series.points.reserve(static_cast<int>(nodes.size()));
    int index = 0;
    // Best so far is core's best (model/NodeRanking.h) over the nodes up to here: the GPU model
    // the tree's best is chosen on, then ranksAbove.
    const std::string gpuModel = core::rankedGpuModel(tree);
    const core::SearchNode* best = nullptr;
    for (const core::SearchNode* node : nodes) {
        // One proposer's nodes count their own candidates: 0, 1, 2, ...
        state.iteration = proposer.isEmpty() ? node->iteration : index++;
        state.nodeId = QString::fromStdString(node->id);
        state.status = node->status;
        state.medianUs = kNaN;
        if (node->status == core::NodeStatus::Passed && node->latency && node->latency->medianUs > 0) {
            state.medianUs = node->latency->medianUs;
            if (node->evaluation.gpuModel == gpuModel && (!best || core::ranksAbove(*node, *best))) {
                best = node;
                state.bestUs = state.medianUs;
                state.bestNodeId = state.nodeId;
            }
        }
        const NodeUsage usage = usageOf(*node);
        state.cumulativeInputTokens += usage.inputTokens;
        state.cumulativeOutputTokens += usage.outputTokens;
        state.cumulativeCostUsd += usage.costUsd;
        state.costKnown = state.costKnown && usage.costKnown;
        if (core::isFailure(node->status))
            series.failedIterations.append(state.iteration);
        if (const std::optional<double> eagerUs = core::nodeEagerUs(*node))
            eager.append(*eagerUs);
        series.points.append(state);
    }
    series.eagerUs = median(std::move(eager));
    return series;
}

double LatencySeriesModel::median(QVector<double> values)
{
    if (values.isEmpty())
        return kNaN;
    std::sort(values.begin(), values.end());
    const qsizetype n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

std::pair<int, int> LatencySeriesModel::locate(int row) const
{
    const auto it = std::upper_bound(m_rowStart.cbegin(), m_rowStart.cend(), row);
    const int run = static_cast<int>(it - m_rowStart.cbegin()) - 1;
    return {run, row - m_rowStart[run]};
}

int LatencySeriesModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : m_rowCount;
}

int LatencySeriesModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LatencySeriesModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto [run, pointIndex] = locate(index.row());
    const LatencySeries& series = m_series[run];
    const LatencySeriesPoint& p = series.points[pointIndex];
    if (role == RunIndexRole)
        return run;
    if (role == ValueRole) {
        switch (index.column()) {
        case RunColumn:
            return series.name;
        case IterationColumn:
            return p.iteration;
        case NodeColumn:
            return p.nodeId;
        case StatusColumn:
            return static_cast<int>(p.status);
        case MedianColumn:
            return std::isnan(p.medianUs) ? QVariant() : QVariant(p.medianUs);
        case BestColumn:
            return std::isnan(p.bestUs) ? QVariant() : QVariant(p.bestUs);
        case TokensColumn:
            return QVariant::fromValue<qlonglong>(p.cumulativeTokens());
        case CostColumn:
            return p.cumulativeCostUsd;
        default:
            return {};
        }
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case RunColumn:
            return series.name;
        case IterationColumn:
            return QString::number(p.iteration);
        case NodeColumn:
            return p.nodeId;
        case StatusColumn:
            return SearchTreeModel::statusText(p.status);
        case MedianColumn:
            return std::isnan(p.medianUs) ? QString() : SearchTreeModel::latencyText(p.medianUs);
        case BestColumn:
            return std::isnan(p.bestUs) ? QString() : SearchTreeModel::latencyText(p.bestUs);
        case TokensColumn:
            return QString::number(p.cumulativeTokens());
        case CostColumn:
            return QStringLiteral("$%1%2").arg(QString::number(p.cumulativeCostUsd, 'f', 4),
                                               p.costKnown ? QString() : tr(" (part unknown)"));
        default:
            return {};
        }
    }
    if (role == Qt::TextAlignmentRole && index.column() != RunColumn && index.column() != NodeColumn &&
        index.column() != StatusColumn)
        return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    return {};
}

QVariant LatencySeriesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case RunColumn:
        return tr("Run");
    case IterationColumn:
        return tr("Iteration");
    case NodeColumn:
        return tr("Node");
    case StatusColumn:
        return tr("Status");
    case MedianColumn:
        return tr("Median");
    case BestColumn:
        return tr("Best so far");
    case TokensColumn:
        return tr("Tokens");
    case CostColumn:
        return tr("Cost");
    default:
        return {};
    }
}

QString LatencySeriesModel::proposerOf(const core::SearchNode& node)
{
    if (node.provenance.kind != core::ProvenanceKind::Llm)
        return QStringLiteral("built-in");
    return QString::fromStdString(node.provenance.provider + " " + node.provenance.model).trimmed();
}

QList<NamedRun> LatencySeriesModel::runsByProposer(const core::SearchTree& tree)
{
    QList<NamedRun> runs;
    for (const core::SearchNode& node : tree.nodes()) {
        const QString proposer = proposerOf(node);
        const bool known =
            std::any_of(runs.begin(), runs.end(), [&](const NamedRun& r) { return r.proposer == proposer; });
        if (!known)
            runs.append(NamedRun{proposer, tree, proposer});
    }
    return runs;
}

} // namespace kforge::app
