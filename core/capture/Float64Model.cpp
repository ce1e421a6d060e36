#include "capture/Float64Model.h"

#include "capture/TorchInterop.h"

#include <c10/core/InferenceMode.h>
#include <c10/core/ScalarType.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <memory>
#include <stdexcept>

namespace kforge::core {

namespace {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

bool isLowerFloating(c10::ScalarType type)
{
    return c10::isFloatingType(type) && type != c10::ScalarType::Double;
}

// Floating parameters and buffers to float64; integer ones (BatchNorm's num_batches_tracked,
// position-id buffers) keep their dtype. Module::to(dtype) would convert those too.
void convertStateToFloat64(torch::jit::Module& module)
{
    auto convert = [](const at::Tensor& tensor) {
        if (tensor.defined() && isLowerFloating(tensor.scalar_type()))
            tensor.set_data(tensor.to(at::kDouble));
    };
    for (const at::Tensor& parameter : module.parameters(/*recurse=*/true))
        convert(parameter);
    for (const at::Tensor& buffer : module.buffers(/*recurse=*/true))
        convert(buffer);
}

// The replacement for a constant the trace baked in at a lower floating precision, or nullptr
// when `value` is not one: a dtype constant (an int holding a ScalarType) when `isDtypeArgument`,
// a floating tensor constant otherwise.
Value* float64Constant(Graph& graph, Value* value, bool isDtypeArgument)
{
    if (value->node()->kind() != c10::prim::Constant)
        return nullptr;
    const std::optional<c10::IValue> constant = torch::jit::toIValue(value);
    if (!constant)
        return nullptr;
    if (isDtypeArgument && constant->isInt() && isLowerFloating(static_cast<c10::ScalarType>(constant->toInt())))
        return graph.insertConstant(static_cast<std::int64_t>(c10::ScalarType::Double));
    if (!isDtypeArgument && constant->isTensor() && isLowerFloating(constant->toTensor().scalar_type()))
        return graph.insertConstant(constant->toTensor().to(at::kDouble));
    return nullptr;
}

void promoteConstants(Graph& graph, Block* block)
{
    for (Node* node : block->nodes()) {
        for (Block* inner : node->blocks())
            promoteConstants(graph, inner);
        const c10::FunctionSchema* schema = node->maybeSchema();
        for (std::size_t i = 0; i < node->inputs().size(); ++i) {
            const bool isDtype = schema && i < schema->arguments().size() && schema->arguments()[i].name() == "dtype";
            torch::jit::WithInsertPoint insertBefore(node);
            if (Value* replacement = float64Constant(graph, node->input(i), isDtype))
                node->replaceInput(i, replacement);
        }
    }
}

bool callsAFunction(const Block* block)
{
    for (const Node* node : block->nodes()) {
        if (node->kind() == c10::prim::CallMethod || node->kind() == c10::prim::CallFunction)
            return true;
        for (const Block* inner : node->blocks())
            if (callsAFunction(inner))
                return true;
    }
    return false;
}

// Inlines every method and function call, however deep. One Inline pass is not always enough: it
// splices in each callee's cached "optimized" graph, and a module that already ran with the graph
// executor's optimizations off (forwardOpByOp, as the in-model check and `kforge run` do before
// this run) has cached those graphs without inlining their own calls. A call left in place runs
// the submodule's own code, whose dtype constants were never promoted (two decoder layers' RMSNorm
// cast back to bfloat16: "expected scalar type BFloat16 but found Double").
void inlineEveryCall(Graph& graph)
{
    constexpr int kMaxNesting = 64; // module nesting deeper than this is not a model we will meet
    for (int depth = 0; depth < kMaxNesting && callsAFunction(graph.block()); ++depth)
        torch::jit::Inline(graph);
    if (callsAFunction(graph.block()))
        throw std::runtime_error("calls nested more than 64 deep could not be inlined");
}

} // namespace

Result<c10::IValue> runModelInFloat64(const torch::jit::Module& module, const std::vector<c10::IValue>& inputs)
{
    try {
        c10::InferenceMode inferenceMode;
        torch::jit::Module copy = module.deepcopy();
        convertStateToFloat64(copy);

        std::shared_ptr<Graph> graph = copy.get_method("forward").graph()->copy();
        inlineEveryCall(*graph); // submodules' forward calls become part of this one graph
        promoteConstants(*graph, graph->block());

        torch::jit::Stack stack;
        stack.emplace_back(copy._ivalue());
        for (const c10::IValue& input : inputs) {
            const bool lowerFloating = input.isTensor() && isLowerFloating(input.toTensor().scalar_type());
            stack.push_back(lowerFloating ? c10::IValue(input.toTensor().to(at::kDouble)) : input);
        }
        torch::jit::GraphExecutor executor(graph, "forward_float64");
        executor.run(stack);
        if (stack.size() != 1)
            return makeError(ErrorCode::BadModel, "forward returned " + std::to_string(stack.size()) + " values",
                             "float64 run");
        return stack.front();
    } catch (const std::exception& e) {
        return makeError(ErrorCode::BadModel, "the model does not run in float64: " + torchinterop::oneLineError(e),
                         "float64 run");
    }
}

} // namespace kforge::core
