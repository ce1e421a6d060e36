#include "region_rewrite/RegionRewrite.h"

#include "capture/TorchInterop.h"
#include "model/OperatorCard.h"
#include "region_rewrite/RegionMatch.h"

#include <torch/csrc/jit/ir/alias_analysis.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <algorithm>
#include <map>
#include <unordered_set>

namespace kforge::core {
namespace {

using torch::jit::AliasDb;
using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

// Rewrites of one chain in one block before the loop stops: far more places than a model runs one
// chain, and a bound on a loop whose every turn rebuilds the alias analysis.
constexpr int kMaxRewritesPerBlock = 4096;

std::string sourceText(const ChainSource& source)
{
    return source.fromMember ? "m" + std::to_string(source.index) + "." + std::to_string(source.output)
                             : "i" + std::to_string(source.index);
}

void collectBlocks(Block* block, std::vector<Block*>& blocks)
{
    blocks.push_back(block);
    for (Node* node : block->nodes())
        for (Block* inner : node->blocks())
            collectBlocks(inner, blocks);
}

std::vector<Value*> allValues(Block* block)
{
    std::vector<Value*> values(block->inputs().begin(), block->inputs().end());
    for (Node* node : block->nodes()) {
        values.insert(values.end(), node->outputs().begin(), node->outputs().end());
        for (Block* inner : node->blocks()) {
            const std::vector<Value*> nested = allValues(inner);
            values.insert(values.end(), nested.begin(), nested.end());
        }
    }
    return values;
}

/// A match's nodes (its members and their lists) in the graph's order.
std::vector<Node*> inGraphOrder(const RegionMatch& match)
{
    std::vector<Node*> order = match.members;
    order.insert(order.end(), match.lists.begin(), match.lists.end());
    std::sort(order.begin(), order.end(), [](const Node* a, const Node* b) { return a->isBefore(b); });
    return order;
}

/// Decides whether a match can become one call, bringing its nodes together on the way.
class MatchSafety {
public:
    MatchSafety(const std::shared_ptr<Graph>& graph, const RegionChain& chain)
        : m_graph(graph), m_chain(chain), m_aliasDb(graph)
    {
    }

    bool accept(const RegionMatch& match)
    {
        const std::vector<Node*> order = inGraphOrder(match);
        const std::unordered_set<const Node*> members(order.begin(), order.end());
        if (!inPlaceWritesStayInside(match, members))
            return false;
        for (size_t i = order.size() - 1; i-- > 0;)
            if (order[i]->next() != order[i + 1] && !m_aliasDb.moveBeforeTopologicallyValid(order[i], order[i + 1])) {
                m_lastRefusal = "its ops cannot be brought together without reordering a read or write of memory";
                return false;
            }
        for (size_t i = 0; i + 1 < order.size(); ++i)
            if (order[i]->next() != order[i + 1]) {
                m_lastRefusal = "its ops cannot be brought together";
                return false;
            }
        return true;
    }

    const std::string& lastRefusal() const { return m_lastRefusal; }

private:
    // An in-place member writing a region input: the kernel writes fresh outputs instead, so that
    // input must be something nobody else reads: not a model input, read by members only, and no
    // other value outside the region may share its memory.
    bool inPlaceWritesStayInside(const RegionMatch& match, const std::unordered_set<const Node*>& members)
    {
        for (size_t m = 0; m < m_chain.members.size(); ++m) {
            const ChainMember& member = m_chain.members[m];
            if (!isInPlaceOpName(member.op) || member.sources.empty() || member.sources.front().empty() ||
                member.sources.front().front().fromMember)
                continue;
            Value* written = match.inputs[static_cast<size_t>(member.sources.front().front().index)];
            const auto readOutside = [&](const Value* value) {
                return std::any_of(value->uses().begin(), value->uses().end(),
                                   [&](const torch::jit::Use& use) { return !members.contains(use.user); });
            };
            bool shared = written->node()->kind() == c10::prim::Param || readOutside(written);
            for (Value* other : allValues(m_graph->block())) {
                if (shared)
                    break;
                if (other != written && !members.contains(other->node()) && readOutside(other) &&
                    m_aliasDb.mayAlias(other, written))
                    shared = true;
            }
            if (shared) {
                m_lastRefusal = "member " + member.op + " writes in place a tensor that is read outside the region";
                return false;
            }
        }
        return true;
    }

    std::shared_ptr<Graph> m_graph;
    const RegionChain& m_chain;
    AliasDb m_aliasDb;
    std::string m_lastRefusal;
};

/// Replaces `match` (its members contiguous) with the guarded call.
void replaceMatch(Graph& graph, const RegionMatch& match, const std::vector<std::string>& kernelIds,
                  const std::string& callOp)
{
    const std::vector<Node*> order = inGraphOrder(match);
    const std::unordered_set<const Node*> members(order.begin(), order.end());
    const size_t outputCount = match.outputs.size();

    torch::jit::WithInsertPoint insertBeforeFirst(order.front());
    std::vector<Value*> ids;
    for (const std::string& id : kernelIds)
        ids.push_back(graph.insertConstant(id));
    Value* idList = graph.insertNode(graph.createList(c10::StringType::get(), ids))->output();
    Value* inputList = graph.insertNode(graph.createList(c10::TensorType::get(), match.inputs))->output();
    Node* call = graph.insertNode(graph.create(c10::Symbol::fromQualString(callOp), {idList, inputList}, 2));
    call->output(0)->setType(c10::BoolType::get());
    call->output(1)->setType(c10::ListType::ofTensors());

    Node* branch = graph.insertNode(graph.create(c10::prim::If, {call->output(0)}, outputCount));
    Block* served = branch->addBlock();
    Block* original = branch->addBlock();
    {
        torch::jit::WithInsertPoint insertInServed(served);
        Node* unpack = graph.insertNode(graph.createListUnpack(call->output(1), outputCount));
        for (size_t i = 0; i < outputCount; ++i) {
            unpack->output(i)->setType(match.outputs[i]->type());
            served->registerOutput(unpack->output(i));
        }
    }
    for (size_t i = 0; i < outputCount; ++i) {
        Value* value = match.outputs[i];
        branch->output(i)->setType(value->type());
        const std::vector<torch::jit::Use> uses = value->uses();
        for (const torch::jit::Use& use : uses)
            if (!members.contains(use.user))
                use.user->replaceInput(use.offset, branch->output(i));
    }
    for (Node* node : order)
        node->moveBefore(original->return_node());
    for (Value* value : match.outputs)
        original->registerOutput(value);
}

} // namespace

std::string regionStructureKey(const RegionChain& chain)
{
    std::string key;
    for (const ChainMember& member : chain.members) {
        key += member.op + "." + member.overload + "(";
        for (size_t a = 0; a < member.args.size(); ++a) {
            const ArgSpec& arg = member.args[a];
            key += std::string(argKindName(arg.kind)) + ":";
            if (arg.kind == ArgKind::Value || arg.kind == ArgKind::Opaque)
                key += arg.value.dump();
            if (a < member.sources.size())
                for (const ChainSource& source : member.sources[a])
                    key += sourceText(source) + " ";
            key += ",";
        }
        key += ");";
    }
    key += "->";
    for (const ChainSource& output : chain.outputs)
        key += sourceText(output) + " ";
    return key;
}

std::vector<RegionRewriteGroup> rewriteRegions(const std::shared_ptr<Graph>& graph,
                                               const std::vector<RegionKernelChain>& kernels, const std::string& callOp)
{
    std::vector<RegionRewriteGroup> groups;
    std::vector<const RegionChain*> chains;
    std::map<std::string, size_t> groupOfKey;
    for (const RegionKernelChain& kernel : kernels) {
        const std::string key = regionStructureKey(kernel.chain);
        auto [it, added] = groupOfKey.emplace(key, groups.size());
        if (added) {
            groups.push_back(RegionRewriteGroup{{}, kernel.chain.text(), 0, ""});
            chains.push_back(&kernel.chain);
        }
        groups[it->second].kernelIds.push_back(kernel.kernelId);
    }

    // The blocks as they are before any rewrite: the original ops a rewrite keeps as its fallback
    // are never matched again.
    std::vector<Block*> blocks;
    collectBlocks(graph->block(), blocks);
    for (size_t g = 0; g < groups.size(); ++g) {
        std::string refusal;
        for (Block* block : blocks)
            for (int turn = 0; turn < kMaxRewritesPerBlock; ++turn) {
                MatchSafety safety(graph, *chains[g]);
                const auto match =
                    findRegionMatch(*block, *chains[g], [&](const RegionMatch& found) { return safety.accept(found); });
                if (!safety.lastRefusal().empty())
                    refusal = safety.lastRefusal();
                if (!match)
                    break;
                replaceMatch(*graph, *match, groups[g].kernelIds, callOp);
                ++groups[g].replaced;
            }
        if (groups[g].replaced == 0)
            groups[g].note = refusal.empty() ? "its chain does not occur in the model's graph"
                                             : "its chain occurs in the model's graph, but " + refusal;
    }
    return groups;
}

Result<std::vector<RegionRewriteGroup>> addRegionMethod(torch::jit::Module& module,
                                                        const std::vector<RegionKernelChain>& kernels,
                                                        const std::string& callOp, const std::string& methodName)
{
    try {
        const c10::ClassTypePtr type = module.type();
        if (type->findMethod(methodName))
            return makeError(ErrorCode::AlreadyExists, "the model already has a method " + methodName, "forward");
        torch::jit::Method forward = module.get_method("forward");
        std::shared_ptr<Graph> graph = torch::jit::toGraphFunction(forward.function()).graph()->copy();
        torch::jit::Inline(*graph);
        std::vector<RegionRewriteGroup> groups = rewriteRegions(graph, kernels, callOp);
        const c10::QualifiedName name(*type->name(), methodName);
        torch::jit::Function* method = module._ivalue()->compilation_unit()->create_function(name, graph);
        type->addMethod(method);
        return groups;
    } catch (const std::exception& e) {
        return makeError(ErrorCode::InvalidArgument,
                         "cannot rewrite the model's regions: " + torchinterop::oneLineError(e), "forward");
    }
}

} // namespace kforge::core
