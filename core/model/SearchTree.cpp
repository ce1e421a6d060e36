#include "model/SearchTree.h"

#include "model/TextBounds.h"

#include <cmath>

namespace kforge::core {
namespace {

bool finitePositive(double v)
{
    return std::isfinite(v) && v > 0;
}

// The report as a node keeps it: every string in it at most kMaxDetailStringBytes (e.g. the
// compiler log). Read again only when something was cut.
EvaluationReport boundedReport(const EvaluationReport& report)
{
    nlohmann::json document = report.document();
    boundStrings(document, kMaxDetailStringBytes);
    return document == report.document() ? report : EvaluationReport::fromJson(document);
}

} // namespace

SearchTree::SearchTree(std::string cardId, std::uint64_t seed) : m_cardId(std::move(cardId)), m_seed(seed)
{
}

const SearchNode* SearchTree::find(const std::string& id) const
{
    auto it = m_index.find(id);
    return it == m_index.end() ? nullptr : &m_nodes[it->second];
}

SearchNode* SearchTree::findMutable(const std::string& id)
{
    auto it = m_index.find(id);
    return it == m_index.end() ? nullptr : &m_nodes[it->second];
}

std::string SearchTree::appendNode(SearchNode node)
{
    node.id = "n" + std::to_string(m_nodes.size());
    node.iteration = nextIteration();
    node.status = NodeStatus::Pending;
    boundStrings(node.provenance.details, kMaxDetailStringBytes);
    if (node.provenance.model.size() > kMaxReasonBytes)
        node.provenance.model = std::string(utf8Prefix(node.provenance.model, kMaxReasonBytes)) + " [truncated]";
    m_index.emplace(node.id, m_nodes.size());
    m_nodes.push_back(std::move(node));
    return m_nodes.back().id;
}

Result<std::string> SearchTree::addRoot(Candidate candidate, Provenance provenance, std::int64_t createdUnixMs)
{
    if (!m_nodes.empty())
        return makeError(ErrorCode::AlreadyExists, "the search tree already has a root", m_cardId);
    SearchNode node;
    node.candidate = std::move(candidate);
    node.provenance = std::move(provenance);
    node.createdUnixMs = createdUnixMs;
    return appendNode(std::move(node));
}

Result<std::string> SearchTree::addChild(const std::string& parentId, Candidate candidate, Provenance provenance,
                                         std::int64_t createdUnixMs)
{
    const SearchNode* parent = find(parentId);
    if (!parent)
        return makeError(ErrorCode::NotFound, "no node '" + parentId + "' in the search tree", m_cardId);
    if (!isRevisable(parent->status))
        return makeError(ErrorCode::InvalidArgument,
                         std::string("node '") + parentId + "' is " + nodeStatusName(parent->status) +
                             " and cannot be revised",
                         m_cardId);
    SearchNode node;
    node.parentId = parentId;
    node.depth = parent->depth + 1;
    node.candidate = std::move(candidate);
    node.provenance = std::move(provenance);
    node.createdUnixMs = createdUnixMs;
    const std::string parentKey = parentId;       // `parentId` may refer into the node list appendNode grows
    std::string id = appendNode(std::move(node)); // invalidates `parent`
    findMutable(parentKey)->childIds.push_back(id);
    return id;
}

Result<void> SearchTree::recordEvaluation(const std::string& id, const Evaluation& evaluation)
{
    SearchNode* node = findMutable(id);
    if (!node)
        return makeError(ErrorCode::NotFound, "no node '" + id + "' in the search tree", m_cardId);
    const std::string where = m_cardId + " " + id;
    if (isInFlight(evaluation.status))
        return makeError(ErrorCode::InvalidArgument,
                         std::string("an evaluation cannot leave a node ") + nodeStatusName(evaluation.status), where);
    if (evaluation.eagerUs && !finitePositive(*evaluation.eagerUs))
        return makeError(ErrorCode::InvalidArgument, "eager latency must be finite and positive", where);
    if (evaluation.status == NodeStatus::Passed) {
        const auto& l = evaluation.latency;
        if (!l || !finitePositive(l->medianUs) || !std::isfinite(l->q1Us) || !std::isfinite(l->q3Us))
            return makeError(ErrorCode::InvalidArgument, "a passed evaluation needs a finite, positive median latency",
                             where);
    }

    node->status = evaluation.status;
    node->evaluation = boundedReport(evaluation.report);
    node->failureReason.clear();
    node->latency.reset();
    node->speedup.reset();
    node->eagerUs = evaluation.eagerUs;
    if (evaluation.status == NodeStatus::Passed) {
        node->latency = evaluation.latency;
        if (node->eagerUs)
            node->speedup = *node->eagerUs / node->latency->medianUs;
    } else if (isFailure(evaluation.status)) {
        node->failureReason = oneLineReason(evaluation.failureReason);
        if (node->failureReason.empty())
            node->failureReason = std::string(nodeStatusName(evaluation.status)) + " (no reason given)";
    }
    return {};
}

Result<void> SearchTree::addVisit(const std::string& id, double reward)
{
    SearchNode* node = findMutable(id);
    if (!node)
        return makeError(ErrorCode::NotFound, "no node '" + id + "' in the search tree", m_cardId);
    if (!std::isfinite(reward))
        return makeError(ErrorCode::InvalidArgument, "a reward must be finite", m_cardId + " " + id);
    node->visits += 1;
    node->valueSum += reward;
    return {};
}

std::vector<const SearchNode*> SearchTree::lineage(const std::string& id) const
{
    std::vector<const SearchNode*> path;
    for (const SearchNode* node = find(id); node; node = node->parentId ? find(*node->parentId) : nullptr)
        path.insert(path.begin(), node);
    return path;
}

std::vector<const SearchNode*> SearchTree::failedChildren(const std::string& id) const
{
    std::vector<const SearchNode*> failed;
    if (const SearchNode* node = find(id)) {
        for (const std::string& childId : node->childIds) {
            const SearchNode* child = find(childId);
            if (child && isFailure(child->status))
                failed.push_back(child);
        }
    }
    return failed;
}

std::vector<const SearchNode*> SearchTree::failedSiblings(const std::string& id) const
{
    const SearchNode* node = find(id);
    if (!node || !node->parentId)
        return {};
    std::vector<const SearchNode*> failed = failedChildren(*node->parentId);
    std::erase(failed, node);
    return failed;
}

bool SearchTree::rootFailed() const
{
    return m_nodes.size() == 1 && isFailure(m_nodes.front().status);
}

Result<void> SearchTree::retryRoot()
{
    if (!rootFailed())
        return makeError(ErrorCode::InvalidArgument, "only a tree that is a failed root can retry it", m_cardId);
    m_rootAttempts.push_back(std::move(m_nodes.front()));
    m_nodes.clear();
    m_index.clear();
    return {};
}

void SearchTree::setNodesUnchecked(std::vector<SearchNode> nodes)
{
    m_nodes = std::move(nodes);
    m_index.clear();
    for (std::size_t i = 0; i < m_nodes.size(); ++i)
        m_index.emplace(m_nodes[i].id, i);
}

bool SearchTree::operator==(const SearchTree& other) const
{
    return m_cardId == other.m_cardId && m_seed == other.m_seed && m_rngDraws == other.m_rngDraws &&
        m_rngState == other.m_rngState && m_rootAttempts == other.m_rootAttempts && m_nodes == other.m_nodes;
}

} // namespace kforge::core
