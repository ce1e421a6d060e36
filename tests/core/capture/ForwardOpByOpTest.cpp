// forwardOpByOp (core/capture/TorchModel.h): every forward pass runs the model's graph as written,
// without the optimizing executor's profiling and fusion, and leaves the thread's executor setting
// as it found it. On CUDA the executor fuses elementwise chains into NNC kernels by default; these
// tests turn NNC on for the CPU (its interpreter backend: no LLVM needed) to show the same fusion
// here, and that forwardOpByOp prevents it.

#include "capture/TorchModel.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/codegen/fuser/interface.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>

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

void collectKinds(const torch::jit::Block* block, std::set<std::string>& kinds)
{
    for (const torch::jit::Node* node : block->nodes()) {
        kinds.insert(node->kind().toQualString());
        for (const torch::jit::Block* inner : node->blocks()) // a fusion group sits in a type check's branch
            collectKinds(inner, kinds);
    }
}

std::set<std::string> nodeKindsOfLastRun()
{
    std::set<std::string> kinds;
    collectKinds(torch::jit::lastExecutedOptimizedGraph()->block(), kinds);
    return kinds;
}

// NNC fusion on the CPU for one test, as it is on CUDA by default.
class CpuFusion : public ::testing::Test {
protected:
    void SetUp() override
    {
        m_couldFuse = torch::jit::canFuseOnCPU();
        m_mustUseLlvm = torch::jit::tensorexpr::getTEMustUseLLVMOnCPU();
        torch::jit::overrideCanFuseOnCPU(true);
        torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = false;
    }
    void TearDown() override
    {
        torch::jit::overrideCanFuseOnCPU(m_couldFuse);
        torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = m_mustUseLlvm;
    }

private:
    bool m_couldFuse = false, m_mustUseLlvm = true;
};

} // namespace

TEST_F(CpuFusion, ForwardOpByOpRunsEveryOpOnEveryCall)
{
    torch::jit::Module module = elementwiseChain();
    const at::Tensor x = at::arange(-4.0, 4.0, at::kFloat);
    for (int call = 0; call < 3; ++call) {
        const at::Tensor y = forwardOpByOp(module, {x}).toTensor();
        EXPECT_TRUE(at::equal(y, (x * 2.0 + 1.0).relu())) << "call " << call;
        const std::set<std::string> kinds = nodeKindsOfLastRun();
        EXPECT_TRUE(kinds.count("aten::mul") && kinds.count("aten::add") && kinds.count("aten::relu"))
            << "call " << call;
        EXPECT_FALSE(kinds.count("prim::TensorExprGroup")) << "call " << call << ": the chain was fused";
        EXPECT_FALSE(kinds.count("prim::profile")) << "call " << call << ": the profiling executor ran";
        EXPECT_TRUE(torch::jit::getGraphExecutorOptimize()) << "the thread's setting was not restored";
    }
}

// The contrast that makes the test above mean something: a plain forward fuses the chain once
// the profiling run is behind it.
TEST_F(CpuFusion, PlainForwardFusesTheChain)
{
    ASSERT_TRUE(torch::jit::getGraphExecutorOptimize());
    torch::jit::Module module = elementwiseChain();
    const at::Tensor x = at::arange(-4.0, 4.0, at::kFloat);
    std::set<std::string> kinds;
    for (int call = 0; call < 3; ++call) {
        module.forward({x});
        const std::set<std::string> now = nodeKindsOfLastRun();
        kinds.insert(now.begin(), now.end());
    }
    EXPECT_TRUE(kinds.count("prim::profile"));
    EXPECT_TRUE(kinds.count("prim::TensorExprGroup"));
}
