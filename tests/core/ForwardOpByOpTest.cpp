// forwardOpByOp (core/capture/TorchModel.h): every forward pass runs the model's graph as written,
// without the optimizing executor's profiling, specialization and fusion, and leaves the thread's
// executor setting as it found it.

#include "capture/TorchModel.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace kforge::core;

namespace {

torch::jit::Module elementwiseChain()
{
    torch::jit::Module module("ElementwiseChain");
    module.define(R"(
def forward(self, x):
    return (x * 2.0 + 1.0).relu()
)");
    return module;
}

std::set<std::string> nodeKindsOfLastRun()
{
    std::set<std::string> kinds;
    for (const torch::jit::Node* node : torch::jit::lastExecutedOptimizedGraph()->nodes())
        kinds.insert(node->kind().toQualString());
    return kinds;
}

} // namespace

TEST(ForwardOpByOp, RunsTheGraphAsWrittenOnEveryCall)
{
    torch::jit::Module module = elementwiseChain();
    const at::Tensor x = at::arange(-4.0, 4.0);
    for (int call = 0; call < 3; ++call) {
        const at::Tensor y = forwardOpByOp(module, {x}).toTensor();
        EXPECT_TRUE(at::equal(y, (x * 2.0 + 1.0).relu())) << "call " << call;
        const std::set<std::string> kinds = nodeKindsOfLastRun();
        EXPECT_TRUE(kinds.count("aten::mul") && kinds.count("aten::add") && kinds.count("aten::relu")) << "call " << call;
        EXPECT_FALSE(kinds.count("prim::profile")) << "call " << call << ": the profiling executor ran";
        EXPECT_TRUE(torch::jit::getGraphExecutorOptimize()) << "the thread's setting was not restored";
    }
}

// The contrast that makes the test above mean something: a plain forward's first call runs the
// profiling executor's instrumented graph.
TEST(ForwardOpByOp, PlainForwardProfilesFirst)
{
    ASSERT_TRUE(torch::jit::getGraphExecutorOptimize());
    torch::jit::Module module = elementwiseChain();
    module.forward({at::arange(-4.0, 4.0)});
    EXPECT_TRUE(nodeKindsOfLastRun().count("prim::profile"));
}
