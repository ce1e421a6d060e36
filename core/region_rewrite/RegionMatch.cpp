#include "region_rewrite/RegionMatch.h"

#include "capture/TorchInterop.h"

#include <torch/csrc/jit/ir/constants.h>

#include <algorithm>
#include <unordered_set>

namespace kforge::core {
namespace {

using torch::jit::Block;
using torch::jit::Node;
using torch::jit::Value;

// Candidate nodes tried in one search before it gives up: real chains have a handful of members,
// each with a few candidates, so this is never reached on a model's graph.
constexpr int kMaxSteps = 200000;

bool isMemberOperator(const Node* node, const ChainMember& member)
{
    const c10::FunctionSchema* schema = node->maybeSchema();
    return schema && schema->name() == member.op && schema->overload_name() == member.overload;
}

/// The value of a graph value that is a constant, or a list built of constants (a trace writes
/// `dim=[-1]` as prim::ListConstruct of a constant); nullopt for anything computed.
std::optional<c10::IValue> constantValue(Value* value)
{
    if (std::optional<c10::IValue> constant = torch::jit::toIValue(value))
        return constant;
    const Node* list = value->node();
    if (list->kind() != c10::prim::ListConstruct)
        return std::nullopt;
    const auto type = value->type()->cast<c10::ListType>();
    if (!type)
        return std::nullopt;
    std::vector<c10::IValue> elements;
    for (const Value* element : list->inputs()) {
        std::optional<c10::IValue> constant = torch::jit::toIValue(element);
        if (!constant)
            return std::nullopt;
        elements.push_back(std::move(*constant));
    }
    const auto listOf = [&elements](auto convert) {
        c10::List<decltype(convert(c10::IValue()))> list;
        for (const c10::IValue& e : elements)
            list.push_back(convert(e));
        return c10::IValue(list);
    };
    switch (type->getElementType()->kind()) {
    case c10::TypeKind::IntType:
        return listOf([](const c10::IValue& e) { return e.toInt(); });
    case c10::TypeKind::FloatType:
        return listOf([](const c10::IValue& e) { return e.toDouble(); });
    case c10::TypeKind::BoolType:
        return listOf([](const c10::IValue& e) { return e.toBool(); });
    default:
        break;
    }
    return std::nullopt;
}

/// A non-tensor argument of the graph equals the captured one: a constant, described the way the
/// capture described the call's value (so 1 and 1.0 differ, as they do for type promotion).
bool constantMatches(Value* value, const ArgSpec& captured)
{
    const std::optional<c10::IValue> constant = constantValue(value);
    if (!constant)
        return false;
    const ArgSpec seen = torchinterop::argSpecOf(*constant, captured.name, captured.type);
    return seen.kind == captured.kind && seen.value.dump() == captured.value.dump();
}

class Search {
public:
    Search(Block& block, const RegionChain& chain, const std::function<bool(const RegionMatch&)>& accept)
        : m_block(block), m_chain(chain), m_accept(accept)
    {
        m_match.members.assign(chain.members.size(), nullptr);
        m_match.inputs.assign(regionInputCount(chain), nullptr);
    }

    std::optional<RegionMatch> run()
    {
        if (m_chain.members.empty() || m_chain.outputs.empty())
            return std::nullopt;
        if (extend(0))
            return m_match;
        return std::nullopt;
    }

private:
    bool extend(size_t m)
    {
        if (m == m_chain.members.size())
            return complete();
        const ChainMember& member = m_chain.members[m];
        for (Node* candidate : candidatesFor(member)) {
            if (++m_steps > kMaxSteps)
                return false;
            if (candidate->owningBlock() != &m_block || m_used.contains(candidate) ||
                !isMemberOperator(candidate, member))
                continue;
            const std::vector<Value*> saved = m_match.inputs;
            const std::size_t listsBefore = m_match.lists.size();
            if (bindArguments(candidate, member)) {
                m_match.members[m] = candidate;
                m_used.insert(candidate);
                for (std::size_t l = listsBefore; l < m_match.lists.size(); ++l)
                    m_used.insert(m_match.lists[l]);
                if (extend(m + 1))
                    return true;
                m_used.erase(candidate);
                for (std::size_t l = listsBefore; l < m_match.lists.size(); ++l)
                    m_used.erase(m_match.lists[l]);
            }
            m_match.inputs = saved;
            m_match.lists.resize(listsBefore);
        }
        return false;
    }

    // The readers of the member's first tensor that an earlier member produced (through a list
    // for a Tensor[] argument), else every node of the block (a member that reads only region inputs).
    std::vector<Node*> candidatesFor(const ChainMember& member) const
    {
        std::vector<Node*> nodes;
        const auto add = [&nodes](Node* node) {
            if (std::find(nodes.begin(), nodes.end(), node) == nodes.end())
                nodes.push_back(node);
        };
        for (const auto& sources : member.sources)
            for (const ChainSource& source : sources)
                if (source.fromMember) {
                    Value* produced = memberOutput(source);
                    if (!produced)
                        return nodes;
                    for (const torch::jit::Use& use : produced->uses()) {
                        if (use.user->kind() != c10::prim::ListConstruct) {
                            add(use.user);
                            continue;
                        }
                        for (const torch::jit::Use& listUse : use.user->output()->uses())
                            add(listUse.user);
                    }
                    return nodes;
                }
        for (Node* node : m_block.nodes())
            nodes.push_back(node);
        return nodes;
    }

    Value* memberOutput(const ChainSource& source) const
    {
        Node* node = m_match.members[static_cast<size_t>(source.index)];
        if (!node || static_cast<size_t>(source.output) >= node->outputs().size())
            return nullptr;
        return node->outputs()[static_cast<size_t>(source.output)];
    }

    bool bindSource(const ChainSource& source, Value* value)
    {
        if (source.fromMember)
            return memberOutput(source) == value;
        const auto index = static_cast<size_t>(source.index);
        if (index >= m_match.inputs.size())
            return false;
        if (m_match.inputs[index])
            return m_match.inputs[index] == value;
        if (std::find(m_match.inputs.begin(), m_match.inputs.end(), value) != m_match.inputs.end())
            return false; // another region input is already this value
        m_match.inputs[index] = value;
        return true;
    }

    bool bindArguments(Node* node, const ChainMember& member)
    {
        if (node->inputs().size() != member.args.size() || member.sources.size() != member.args.size() ||
            node->outputs().size() < member.outputs.size())
            return false;
        for (size_t a = 0; a < member.args.size(); ++a) {
            const ArgSpec& arg = member.args[a];
            Value* value = node->inputs()[a];
            const std::vector<ChainSource>& sources = member.sources[a];
            switch (arg.kind) {
            case ArgKind::Tensor:
                if (sources.size() != 1 || !bindSource(sources.front(), value))
                    return false;
                break;
            case ArgKind::TensorList: {
                Node* list = value->node();
                if (list->kind() != c10::prim::ListConstruct || list->inputs().size() != sources.size() ||
                    list->owningBlock() != &m_block || m_used.contains(list))
                    return false;
                for (size_t i = 0; i < sources.size(); ++i)
                    if (!bindSource(sources[i], list->inputs()[i]))
                        return false;
                m_match.lists.push_back(list);
                break;
            }
            case ArgKind::None: {
                const std::optional<c10::IValue> constant = torch::jit::toIValue(value);
                if (!constant || !constant->isNone())
                    return false;
                break;
            }
            case ArgKind::Value:
                if (!constantMatches(value, arg))
                    return false;
                break;
            case ArgKind::Opaque:
                return false;
            }
        }
        return true;
    }

    bool complete()
    {
        if (std::find(m_match.inputs.begin(), m_match.inputs.end(), nullptr) != m_match.inputs.end())
            return false;
        m_match.outputs.clear();
        for (const ChainSource& source : m_chain.outputs) {
            Value* output = source.fromMember ? memberOutput(source) : nullptr;
            if (!output)
                return false;
            m_match.outputs.push_back(output);
        }
        // Values the region keeps to itself (its lists too) must have no reader outside it.
        std::vector<Node*> nodes = m_match.members;
        nodes.insert(nodes.end(), m_match.lists.begin(), m_match.lists.end());
        for (Node* node : nodes)
            for (Value* value : node->outputs()) {
                if (std::find(m_match.outputs.begin(), m_match.outputs.end(), value) != m_match.outputs.end())
                    continue;
                for (const torch::jit::Use& use : value->uses())
                    if (!m_used.contains(use.user))
                        return false;
            }
        return m_accept(m_match);
    }

    Block& m_block;
    const RegionChain& m_chain;
    const std::function<bool(const RegionMatch&)>& m_accept;
    RegionMatch m_match;
    std::unordered_set<Node*> m_used;
    int m_steps = 0;
};

} // namespace

size_t regionInputCount(const RegionChain& chain)
{
    size_t count = 0;
    for (const ChainMember& member : chain.members)
        for (const auto& sources : member.sources)
            for (const ChainSource& source : sources)
                if (!source.fromMember)
                    count = std::max(count, static_cast<size_t>(source.index) + 1);
    return count;
}

std::optional<RegionMatch> findRegionMatch(Block& block, const RegionChain& chain,
                                           const std::function<bool(const RegionMatch&)>& accept)
{
    return Search(block, chain, accept).run();
}

} // namespace kforge::core
