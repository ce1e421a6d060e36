#include "model/SearchTreeJson.h"

#include "model/SearchRng.h"
#include "util/BoundedJson.h"
#include "util/FailureText.h"
#include "util/Utf8Text.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace kforge::core {
namespace {

using nlohmann::json;

// A string read from the file, quoted in a one-line error (it may hold anything, a line end included).
std::string quotedFromFile(std::string_view text)
{
    return "'" + excerptForMessage(text, 80) + "'";
}

// Reads required fields of one JSON object; the first problem is kept, naming "<where>.<field>".
class FieldReader {
public:
    FieldReader(const json& object, std::string where) : m_object(object), m_where(std::move(where))
    {
        if (!m_object.is_object())
            m_error = makeError(ErrorCode::InvalidArgument, "expected an object", m_where);
    }

    template <class T>
    void get(const char* name, T& out)
    {
        const json* value = field(name);
        if (!value)
            return;
        try {
            out = value->get<T>();
        } catch (const json::exception&) {
            fail(name, "has the wrong type");
        }
    }

    void getString(const char* name, std::string& out)
    {
        const json* value = field(name);
        if (value && !value->is_string())
            fail(name, "must be a string");
        else if (value)
            out = value->get<std::string>();
    }

    void getNumber(const char* name, double& out)
    {
        const json* value = field(name);
        if (value && (!value->is_number() || !std::isfinite(value->get<double>())))
            fail(name, "must be a finite number");
        else if (value)
            out = value->get<double>();
    }

    void getInteger(const char* name, std::int64_t& out, std::int64_t min,
                    std::int64_t max = std::numeric_limits<std::int64_t>::max())
    {
        const json* value = field(name);
        const bool inRange = value && value->is_number_integer() &&
            (value->is_number_unsigned() ? value->get<std::uint64_t>() <= static_cast<std::uint64_t>(max)
                                         : value->get<std::int64_t>() >= min && value->get<std::int64_t>() <= max);
        if (value && !inRange)
            fail(name,
                 max == std::numeric_limits<std::int64_t>::max()
                     ? "must be an integer >= " + std::to_string(min)
                     : "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
        else if (value)
            out = value->get<std::int64_t>();
    }

    /// A required field that may be null: returns nullptr for null (or after an error).
    const json* nullable(const char* name, json::value_t type)
    {
        const json* value = field(name);
        if (!value || value->is_null())
            return nullptr;
        if (value->type() != type && !(type == json::value_t::number_float && value->is_number())) {
            fail(name, "has the wrong type");
            return nullptr;
        }
        return value;
    }

    const json* child(const char* name, json::value_t type)
    {
        const json* value = field(name);
        if (value && value->type() != type) {
            fail(name, "has the wrong type");
            return nullptr;
        }
        return value;
    }

    void fail(const std::string& name, const std::string& message)
    {
        if (!m_error)
            m_error = makeError(ErrorCode::InvalidArgument, message, path(name));
    }
    void failHere(const std::string& message)
    {
        if (!m_error)
            m_error = makeError(ErrorCode::InvalidArgument, message, m_where);
    }
    std::string path(const std::string& name) const { return m_where.empty() ? name : m_where + "." + name; }
    const std::optional<Error>& error() const { return m_error; }

private:
    const json* field(const char* name)
    {
        if (m_error)
            return nullptr;
        if (!m_object.contains(name)) {
            fail(name, "is missing");
            return nullptr;
        }
        return &m_object.at(name);
    }

    const json& m_object;
    std::string m_where;
    std::optional<Error> m_error;
};

json optionalNumber(const std::optional<double>& value)
{
    return value ? json(*value) : json(nullptr);
}

json nodeToJson(const SearchNode& node)
{
    json latency = nullptr;
    if (node.latency)
        latency =
            json{{"median_us", node.latency->medianUs}, {"q1_us", node.latency->q1Us}, {"q3_us", node.latency->q3Us}};
    return json{
        {"id", node.id},
        {"parent", node.parentId ? json(*node.parentId) : json(nullptr)},
        {"children", node.childIds},
        {"depth", node.depth},
        {"iteration", node.iteration},
        {"created_unix_ms", node.createdUnixMs},
        {"status", nodeStatusName(node.status)},
        {"failure_reason", node.failureReason},
        {"candidate", json{{"source", node.candidate.source}, {"launch_plan", node.candidate.launchPlan}}},
        {"provenance",
         json{{"kind", provenanceKindName(node.provenance.kind)},
              {"transformation", node.provenance.transformation},
              {"provider", node.provenance.provider},
              {"model", node.provenance.model},
              {"details", node.provenance.details}}},
        {"evaluation_details", node.evaluation.document()},
        {"latency", latency},
        {"eager_us", optionalNumber(node.eagerUs)},
        {"speedup", optionalNumber(node.speedup)},
        {"visits", node.visits},
        {"value_sum", node.valueSum},
    };
}

Result<SearchNode> nodeFromJson(const json& j, const std::string& where)
{
    FieldReader r(j, where);
    SearchNode node;
    std::int64_t depth = 0, iteration = 0, visits = 0;
    std::string status, kind;
    r.getString("id", node.id);
    if (const json* parent = r.nullable("parent", json::value_t::string))
        node.parentId = parent->get<std::string>();
    if (const json* children = r.child("children", json::value_t::array)) {
        for (std::size_t i = 0; i < children->size(); ++i) {
            if (!(*children)[i].is_string()) {
                r.fail("children[" + std::to_string(i) + "]", "must be a string");
                break;
            }
            node.childIds.push_back((*children)[i].get<std::string>());
        }
    }
    constexpr std::int64_t intMax = std::numeric_limits<int>::max();
    r.getInteger("depth", depth, 0, intMax);
    r.getInteger("iteration", iteration, 0, intMax);
    r.getInteger("created_unix_ms", node.createdUnixMs, 0);
    r.getString("status", status);
    if (!r.error() && !nodeStatusFromName(status, node.status))
        r.fail("status", "unknown status " + quotedFromFile(status));
    r.getString("failure_reason", node.failureReason);
    if (!isOneLine(node.failureReason)) // a reason is one line (a file from elsewhere may hold more)
        node.failureReason = oneLineReason(node.failureReason);
    if (const json* candidate = r.child("candidate", json::value_t::object)) {
        FieldReader c(*candidate, r.path("candidate"));
        c.getString("source", node.candidate.source);
        if (const json* plan = c.child("launch_plan", json::value_t::object))
            node.candidate.launchPlan = *plan;
        if (c.error())
            return *c.error();
    }
    if (const json* provenance = r.child("provenance", json::value_t::object)) {
        FieldReader p(*provenance, r.path("provenance"));
        p.getString("kind", kind);
        if (!p.error() && !provenanceKindFromName(kind, node.provenance.kind))
            p.fail("kind", "unknown provenance kind " + quotedFromFile(kind));
        p.getString("transformation", node.provenance.transformation);
        p.getString("provider", node.provenance.provider);
        p.getString("model", node.provenance.model);
        if (const json* details = p.child("details", json::value_t::object))
            node.provenance.details = *details;
        if (p.error())
            return *p.error();
    }
    if (const json* details = r.child("evaluation_details", json::value_t::object))
        node.evaluation = EvaluationReport::fromJson(*details);
    if (const json* latency = r.nullable("latency", json::value_t::object)) {
        FieldReader l(*latency, r.path("latency"));
        LatencyStats stats;
        l.getNumber("median_us", stats.medianUs);
        l.getNumber("q1_us", stats.q1Us);
        l.getNumber("q3_us", stats.q3Us);
        if (l.error())
            return *l.error();
        node.latency = stats;
    }
    if (const json* eager = r.nullable("eager_us", json::value_t::number_float))
        node.eagerUs = eager->get<double>();
    if (const json* speedup = r.nullable("speedup", json::value_t::number_float))
        node.speedup = speedup->get<double>();
    r.getInteger("visits", visits, 0, intMax);
    r.getNumber("value_sum", node.valueSum);
    if (r.error())
        return *r.error();

    node.depth = static_cast<int>(depth);
    node.iteration = static_cast<int>(iteration);
    node.visits = static_cast<int>(visits);
    if (node.status == NodeStatus::Passed && (!node.latency || !(node.latency->medianUs > 0)))
        r.fail("latency", "a passed node needs a positive median latency");
    else if (isFailure(node.status) && node.failureReason.empty())
        r.fail("failure_reason", "a failed node needs a reason");
    if (r.error())
        return *r.error();
    return node;
}

// Checks ids, parent/child links, depths and iterations against each other.
Result<void> validateStructure(const std::vector<SearchNode>& nodes, const std::string& where)
{
    auto at = [&](std::size_t i, const char* field) {
        return (where.empty() ? std::string() : where + ".") + "nodes[" + std::to_string(i) + "]." + field;
    };
    auto indexOf = [&](const std::string& id) -> std::optional<std::size_t> {
        if (id.size() < 2 || id.size() > 12 || id[0] != 'n' ||
            id.find_first_not_of("0123456789", 1) != std::string::npos)
            return std::nullopt;
        std::size_t index = std::stoull(id.substr(1));
        if (index >= nodes.size() || nodes[index].id != id)
            return std::nullopt;
        return index;
    };
    // Which nodes their parent's child list names, in one pass over the lists (a file may hold many
    // nodes: every check here stays linear).
    std::vector<bool> listedByParent(nodes.size(), false);
    for (const SearchNode& node : nodes) {
        for (const std::string& childId : node.childIds) {
            const auto child = indexOf(childId);
            if (child && nodes[*child].parentId && *nodes[*child].parentId == node.id)
                listedByParent[*child] = true;
        }
    }
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const SearchNode& node = nodes[i];
        if (node.id != "n" + std::to_string(i))
            return makeError(ErrorCode::InvalidArgument,
                             "expected 'n" + std::to_string(i) + "', found " + quotedFromFile(node.id), at(i, "id"));
        if ((i == 0) != !node.parentId)
            return makeError(ErrorCode::InvalidArgument,
                             i == 0 ? "the first node is the root and has no parent"
                                    : "only the first node may lack a parent",
                             at(i, "parent"));
        if (node.parentId) {
            auto parent = indexOf(*node.parentId);
            if (!parent || *parent >= i)
                return makeError(ErrorCode::InvalidArgument,
                                 "unknown or later parent " + quotedFromFile(*node.parentId), at(i, "parent"));
            if (!listedByParent[i])
                return makeError(ErrorCode::InvalidArgument,
                                 "parent " + quotedFromFile(*node.parentId) + " does not list this node",
                                 at(i, "parent"));
            if (node.depth != nodes[*parent].depth + 1)
                return makeError(ErrorCode::InvalidArgument, "depth does not match the parent's", at(i, "depth"));
        } else if (node.depth != 0) {
            return makeError(ErrorCode::InvalidArgument, "the root has depth 0", at(i, "depth"));
        }
        if (node.iteration != static_cast<int>(i))
            return makeError(ErrorCode::InvalidArgument, "expected iteration " + std::to_string(i), at(i, "iteration"));
    }
    // Parents are consistent now; a child list may still name nodes that are not its children.
    std::vector<std::size_t> childCounts(nodes.size(), 0);
    for (std::size_t i = 1; i < nodes.size(); ++i)
        ++childCounts[*indexOf(*nodes[i].parentId)];
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const SearchNode& node = nodes[i];
        const std::size_t expected = childCounts[i];
        if (node.childIds.size() != expected)
            return makeError(ErrorCode::InvalidArgument,
                             "lists " + std::to_string(node.childIds.size()) + " children, but " +
                                 std::to_string(expected) + " nodes name it as parent",
                             at(i, "children"));
        for (const std::string& childId : node.childIds) {
            auto child = indexOf(childId);
            if (!child || !nodes[*child].parentId || *nodes[*child].parentId != node.id)
                return makeError(ErrorCode::InvalidArgument,
                                 "child " + quotedFromFile(childId) + " is not a child of this node",
                                 at(i, "children"));
        }
    }
    return {};
}

// The earlier root attempts (SearchTree::rootAttempts): each a failed root, alone.
Result<std::vector<SearchNode>> rootAttemptsFromJson(const json& attempts, const std::string& where)
{
    std::vector<SearchNode> out;
    for (std::size_t i = 0; i < attempts.size(); ++i) {
        const std::string path = where + "[" + std::to_string(i) + "]";
        auto node = nodeFromJson(attempts[i], path);
        if (!node)
            return node.error();
        if (node->id != "n0" || node->parentId || !node->childIds.empty() || node->depth != 0 || node->iteration != 0)
            return makeError(ErrorCode::InvalidArgument, "an earlier root attempt is a root 'n0' without children",
                             path);
        if (!isFailure(node->status))
            return makeError(ErrorCode::InvalidArgument, "an earlier root attempt must have failed", path + ".status");
        out.push_back(std::move(node.value()));
    }
    return out;
}

Result<SearchTree> searchTreeFromJsonUnguarded(const json& j, const std::string& where)
{
    FieldReader r(j, where);
    std::string format, cardId;
    std::int64_t version = 0;
    r.getString("format", format);
    if (!r.error() && format != kSearchTreeFormat)
        r.fail("format", "expected '" + std::string(kSearchTreeFormat) + "', found " + quotedFromFile(format));
    r.getInteger("version", version, 1);
    if (!r.error() && version > kSearchTreeVersion)
        return makeError(ErrorCode::Unsupported,
                         "format version " + std::to_string(version) + " is newer than this build reads (" +
                             std::to_string(kSearchTreeVersion) + ")",
                         r.path("version"));
    r.getString("card_id", cardId);
    std::uint64_t seed = 0, draws = 0;
    for (auto [name, out] : {std::pair{"seed", &seed}, std::pair{"rng_draws", &draws}}) {
        if (r.error())
            break;
        if (!j.contains(name) || !j.at(name).is_number_unsigned())
            r.fail(name, "must be an unsigned integer");
        else
            *out = j.at(name).get<std::uint64_t>();
    }
    std::string rngState;
    if (!r.error() && j.contains("rng_state")) {
        const json& state = j.at("rng_state");
        if (!state.is_string() || !SearchRng::restore(state.get<std::string>(), draws))
            r.fail("rng_state", "is not a saved generator state");
        else
            rngState = state.get<std::string>();
    }
    if (!r.error() && rngState.empty() && draws > SearchRng::kMaxReplayDraws)
        r.fail("rng_draws",
               std::to_string(draws) +
                   " draws without an rng_state is implausible (a tree without rng_state is resumed by "
                   "replaying its draws, at most " +
                   std::to_string(SearchRng::kMaxReplayDraws) + ")");
    const json* attemptsJson = nullptr;
    if (!r.error() && j.contains("root_attempts"))
        attemptsJson = r.child("root_attempts", json::value_t::array);
    const json* nodesJson = r.child("nodes", json::value_t::array);
    if (r.error())
        return *r.error();
    std::vector<SearchNode> attempts;
    if (attemptsJson) {
        auto read = rootAttemptsFromJson(*attemptsJson, r.path("root_attempts"));
        if (!read)
            return read.error();
        attempts = std::move(read.value());
    }

    std::vector<SearchNode> nodes;
    nodes.reserve(nodesJson->size());
    for (std::size_t i = 0; i < nodesJson->size(); ++i) {
        auto node = nodeFromJson((*nodesJson)[i], r.path("nodes[" + std::to_string(i) + "]"));
        if (!node)
            return node.error();
        nodes.push_back(std::move(node.value()));
    }
    if (auto valid = validateStructure(nodes, where); !valid)
        return valid.error();

    SearchTree tree(cardId, seed);
    tree.setRngDraws(draws);
    tree.setRngState(std::move(rngState));
    tree.setRootAttemptsUnchecked(std::move(attempts));
    tree.setNodesUnchecked(std::move(nodes));
    return tree;
}

} // namespace

json toJson(const SearchTree& tree)
{
    json nodes = json::array();
    for (const SearchNode& node : tree.nodes())
        nodes.push_back(nodeToJson(node));
    json out{{"format", kSearchTreeFormat},
             {"version", kSearchTreeVersion},
             {"card_id", tree.cardId()},
             {"seed", tree.seed()},
             {"rng_draws", tree.rngDraws()}};
    if (!tree.rngState().empty())
        out["rng_state"] = tree.rngState();
    if (!tree.rootAttempts().empty()) {
        json attempts = json::array();
        for (const SearchNode& node : tree.rootAttempts())
            attempts.push_back(nodeToJson(node));
        out["root_attempts"] = attempts;
    }
    out["nodes"] = nodes;
    return out;
}

std::string dumpSearchTreeJson(const json& value, int indent)
{
    return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

Result<SearchTree> searchTreeFromJson(const json& j, const std::string& where)
{
    // The reader checks types before every access; this is the net under it, so that no JSON
    // exception ever reaches a caller.
    try {
        return searchTreeFromJsonUnguarded(j, where);
    } catch (const json::exception& e) {
        return makeError(ErrorCode::InvalidArgument, "unexpected content: " + jsonExceptionText(e), where);
    }
}

} // namespace kforge::core
