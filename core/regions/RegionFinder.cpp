#include "regions/RegionFinder.h"

#include "pointwise/PointwiseOpTable.h"
#include "regions/FusibleOps.h"
#include "util/Hash.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

namespace kforge::core {
namespace {

class UnionFind {
public:
    explicit UnionFind(size_t n) : m_parent(n) { std::iota(m_parent.begin(), m_parent.end(), 0); }
    std::int32_t find(std::int32_t x)
    {
        while (m_parent[static_cast<size_t>(x)] != x) {
            m_parent[static_cast<size_t>(x)] = m_parent[static_cast<size_t>(m_parent[static_cast<size_t>(x)])];
            x = m_parent[static_cast<size_t>(x)];
        }
        return x;
    }
    void unite(std::int32_t a, std::int32_t b)
    {
        a = find(a);
        b = find(b);
        if (a != b)
            m_parent[static_cast<size_t>(std::max(a, b))] = std::min(a, b);
    }

private:
    std::vector<std::int32_t> m_parent;
};

// Producers of the values a call reads (each once, in argument order).
template <typename Visit>
void forEachProducer(const CallGraph& graph, std::int32_t call, Visit visit)
{
    for (const std::vector<std::int32_t>& arg : graph.calls[static_cast<size_t>(call)].inputs)
        for (std::int32_t value : arg) {
            const std::int32_t producer = graph.valueProducers[static_cast<size_t>(value)];
            if (producer >= 0)
                visit(producer);
        }
}

// Splits the connected group `members` (ascending call indices) into convex pieces. Along any path
// from the group, `level` counts the times it left the group; a member's level is the most over
// all paths into it. A path that leaves and comes back raises the level, so members of one level
// joined by edges between them form a convex piece.
std::vector<std::vector<std::int32_t>> convexPieces(const CallGraph& graph, const std::vector<std::int32_t>& members)
{
    const std::int32_t lo = members.front();
    const std::int32_t hi = members.back();
    const size_t span = static_cast<size_t>(hi - lo + 1);
    std::vector<char> isMember(span, 0);
    for (std::int32_t m : members)
        isMember[static_cast<size_t>(m - lo)] = 1;
    std::vector<int> level(span, -1); // members: their level; others: levels of paths reaching them
    for (std::int32_t call = lo; call <= hi; ++call) {
        const size_t at = static_cast<size_t>(call - lo);
        int best = isMember[at] ? 0 : -1;
        forEachProducer(graph, call, [&](std::int32_t producer) {
            if (producer < lo)
                return;
            const size_t p = static_cast<size_t>(producer - lo);
            if (level[p] < 0)
                return;
            const int via = level[p] + (isMember[p] && !isMember[at] ? 1 : 0);
            best = std::max(best, via);
        });
        level[at] = best;
    }
    UnionFind pieces(span);
    for (std::int32_t m : members)
        forEachProducer(graph, m, [&](std::int32_t producer) {
            if (producer >= lo && isMember[static_cast<size_t>(producer - lo)] &&
                level[static_cast<size_t>(producer - lo)] == level[static_cast<size_t>(m - lo)])
                pieces.unite(producer - lo, m - lo);
        });
    std::map<std::int32_t, std::vector<std::int32_t>> byRoot;
    for (std::int32_t m : members)
        byRoot[pieces.find(m - lo)].push_back(m);
    std::vector<std::vector<std::int32_t>> result;
    for (auto& [root, piece] : byRoot)
        if (piece.size() >= 2)
            result.push_back(std::move(piece));
    return result;
}

// Consumers of every value, as offsets into one array (CSR): ids and indices only.
struct Consumers {
    std::vector<std::int32_t> start; // per value, size values + 1
    std::vector<std::int32_t> calls;
};

Consumers consumersOf(const CallGraph& graph)
{
    Consumers c;
    c.start.assign(graph.valueProducers.size() + 1, 0);
    for (const GraphCall& call : graph.calls)
        for (const auto& arg : call.inputs)
            for (std::int32_t v : arg)
                ++c.start[static_cast<size_t>(v) + 1];
    std::partial_sum(c.start.begin(), c.start.end(), c.start.begin());
    c.calls.resize(static_cast<size_t>(c.start.back()));
    std::vector<std::int32_t> fill(c.start.begin(), c.start.end() - 1);
    for (size_t i = 0; i < graph.calls.size(); ++i)
        for (const auto& arg : graph.calls[i].inputs)
            for (std::int32_t v : arg)
                c.calls[static_cast<size_t>(fill[static_cast<size_t>(v)]++)] = static_cast<std::int32_t>(i);
    return c;
}

RegionCard describe(const CallGraph& graph, const std::vector<OperatorCard>& cards, const Consumers& consumers,
                    const std::vector<char>& isModelOutput, const std::vector<std::int32_t>& piece)
{
    RegionCard region;
    std::unordered_map<std::int32_t, int> local; // call -> member index
    for (size_t i = 0; i < piece.size(); ++i)
        local.emplace(piece[i], static_cast<int>(i));
    std::unordered_map<std::int32_t, int> inputIndex; // value -> region input
    std::string key;
    region.eagerEstimateComplete = true;
    std::vector<std::int64_t> positions;
    for (size_t m = 0; m < piece.size(); ++m) {
        const GraphCall& call = graph.calls[static_cast<size_t>(piece[m])];
        const OperatorCard& card = cards[static_cast<size_t>(call.card)];
        region.members.push_back(RegionMember{card.op, card.overload, card.id, call.card});
        positions.push_back(piece[m]);
        if (card.eager)
            region.eagerUsEstimate += card.eager->medianUs;
        else
            region.eagerEstimateComplete = false;
        key += "m" + std::to_string(m) + "=" + card.key + " <-";
        for (size_t a = 0; a < call.inputs.size(); ++a) {
            for (size_t e = 0; e < call.inputs[a].size(); ++e) {
                const std::int32_t value = call.inputs[a][e];
                const std::int32_t producer = graph.valueProducers[static_cast<size_t>(value)];
                const auto inside = producer >= 0 ? local.find(producer) : local.end();
                key += " a" + std::to_string(a) + "." + std::to_string(e) + ":";
                if (inside != local.end()) {
                    const auto& outs = graph.calls[static_cast<size_t>(producer)].outputs;
                    const int output = static_cast<int>(std::find(outs.begin(), outs.end(), value) - outs.begin());
                    region.edges.push_back(RegionEdge{inside->second, output, static_cast<int>(m), static_cast<int>(a),
                                                      static_cast<int>(e)});
                    key += "m" + std::to_string(inside->second) + ".o" + std::to_string(output);
                } else {
                    auto [slot, fresh] = inputIndex.try_emplace(value, static_cast<int>(region.inputs.size()));
                    if (fresh)
                        region.inputs.push_back(RegionInput{card.args[a].tensors[e], {}});
                    region.inputs[static_cast<size_t>(slot->second)].uses.push_back(
                        RegionUse{static_cast<int>(m), static_cast<int>(a), static_cast<int>(e)});
                    key += "x" + std::to_string(slot->second);
                }
            }
        }
        key += ";\n";
    }
    key += "out:";
    for (size_t m = 0; m < piece.size(); ++m) {
        const GraphCall& call = graph.calls[static_cast<size_t>(piece[m])];
        for (size_t o = 0; o < call.outputs.size(); ++o) {
            const std::int32_t value = call.outputs[o];
            bool usedOutside = isModelOutput[static_cast<size_t>(value)] != 0;
            for (std::int32_t c = consumers.start[static_cast<size_t>(value)];
                 !usedOutside && c < consumers.start[static_cast<size_t>(value) + 1]; ++c)
                usedOutside = !local.contains(consumers.calls[static_cast<size_t>(c)]);
            if (!usedOutside)
                continue;
            region.outputs.push_back(RegionOutput{static_cast<int>(m), static_cast<int>(o),
                                                  cards[static_cast<size_t>(call.card)].outputs[o]});
            key += " m" + std::to_string(m) + ".o" + std::to_string(o);
        }
    }
    if (!region.eagerEstimateComplete)
        region.eagerUsEstimate = 0;
    region.key = std::move(key);
    region.id = fnv1a64Hex(region.key);
    region.occurrences.push_back(std::move(positions));
    return region;
}

} // namespace

std::vector<RegionCard> findRegions(const CallGraph& graph, const std::vector<OperatorCard>& cards)
{
    if (graph.calls.empty())
        return {};
    const bool gpuCapture =
        std::any_of(cards.begin(), cards.end(), [](const OperatorCard& c) { return !c.runsOnHost(); });
    std::vector<char> fusibleCard(cards.size());
    for (size_t c = 0; c < cards.size(); ++c)
        fusibleCard[c] = isFusibleCard(cards[c], gpuCapture) ? 1 : 0;
    const size_t n = graph.calls.size();
    std::vector<char> fusible(n);
    for (size_t i = 0; i < n; ++i)
        fusible[i] = !graph.calls[i].aliasing && fusibleCard[static_cast<size_t>(graph.calls[i].card)];

    const auto cardOf = [&](std::int32_t call) -> const OperatorCard& {
        return cards[static_cast<size_t>(graph.calls[static_cast<size_t>(call)].card)];
    };
    // A member the pointwise generator computes: an op of its table (batch_norm in inference among
    // them), or a cat.
    const auto pointwise = [&](std::int32_t call) {
        const OperatorCard& card = cardOf(call);
        return isConcatenationOp(card.op) || findPointwiseOp(card.op, card.overload, card.args).ok();
    };
    // The connected groups of fusible calls, ordered by their first call.
    const auto groupsOf = [&graph, n](const std::vector<char>& member) {
        UnionFind groups(n);
        for (size_t i = 0; i < n; ++i) {
            if (!member[i])
                continue;
            forEachProducer(graph, static_cast<std::int32_t>(i), [&](std::int32_t producer) {
                if (member[static_cast<size_t>(producer)])
                    groups.unite(producer, static_cast<std::int32_t>(i));
            });
        }
        std::map<std::int32_t, std::vector<std::int32_t>> byRoot;
        for (size_t i = 0; i < n; ++i)
            if (member[i])
                byRoot[groups.find(static_cast<std::int32_t>(i))].push_back(static_cast<std::int32_t>(i));
        return byRoot;
    };
    std::map<std::int32_t, std::vector<std::int32_t>> byRoot = groupsOf(fusible);
    // A cat joins regions of pointwise ops only (the row-reduction kernels read no branches): out of
    // a group with a softmax, norm, reduction or any other member, and the groups found again without it.
    bool catsTakenOut = false;
    for (const auto& [root, members] : byRoot) {
        if (std::all_of(members.begin(), members.end(), pointwise))
            continue;
        for (std::int32_t m : members)
            if (isConcatenationOp(cardOf(m).op)) {
                fusible[static_cast<size_t>(m)] = 0;
                catsTakenOut = true;
            }
    }
    if (catsTakenOut)
        byRoot = groupsOf(fusible);

    const Consumers consumers = consumersOf(graph);
    std::vector<char> isModelOutput(graph.valueProducers.size(), 0);
    for (std::int32_t v : graph.modelOutputs)
        isModelOutput[static_cast<size_t>(v)] = 1;

    std::vector<RegionCard> regions;
    std::unordered_map<std::string, size_t> byId;
    for (const auto& [root, members] : byRoot) {
        if (members.size() < 2)
            continue;
        auto pieces = convexPieces(graph, members);
        std::sort(pieces.begin(), pieces.end()); // by first call: a stable order
        for (const auto& piece : pieces) {
            RegionCard region = describe(graph, cards, consumers, isModelOutput, piece);
            auto [slot, fresh] = byId.try_emplace(region.id, regions.size());
            if (fresh)
                regions.push_back(std::move(region));
            else
                regions[slot->second].occurrences.push_back(std::move(region.occurrences.front()));
        }
    }
    std::stable_sort(regions.begin(), regions.end(), [](const RegionCard& a, const RegionCard& b) {
        return a.occurrences.front().front() < b.occurrences.front().front();
    });
    return regions;
}

} // namespace kforge::core
