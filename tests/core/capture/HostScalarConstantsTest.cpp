// keepIntegerScalarConstantsOn (core/capture/HostScalarConstants.h): a traced model's shape
// arithmetic constants (0-dim int64 tensors) move to the host; floating constants and the model's
// results do not change. A CPU-only machine has no second device to load onto, so the move is shown
// towards the meta device (it needs no data), and the forward on the CPU where nothing moves.

#include "CaptureTestSupport.h"

#include "capture/HostScalarConstants.h"
#include "capture/TorchModel.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>

#include <string>
#include <vector>

using namespace kforge::core;

namespace {

struct TensorConstant {
    std::string dtype;
    std::string device;
    std::int64_t dim = 0;
};

// Every tensor constant in the code of `module`, all functions of its compilation unit.
std::vector<TensorConstant> tensorConstants(torch::jit::Module& module)
{
    std::vector<TensorConstant> constants;
    for (torch::jit::Function* function : module._ivalue()->compilation_unit()->get_functions()) {
        for (const torch::jit::Node* node : torch::jit::toGraphFunction(*function).graph()->nodes()) {
            if (node->kind() != c10::prim::Constant || !node->hasAttribute(c10::attr::value) ||
                node->kindOf(c10::attr::value) != torch::jit::AttributeKind::t)
                continue;
            const at::Tensor& value = node->t(c10::attr::value);
            constants.push_back({c10::toString(value.scalar_type()), value.device().str(), value.dim()});
            // A type that names a device must name the value's (a loaded graph's name none).
            const auto type = node->output()->type()->cast<c10::TensorType>();
            EXPECT_TRUE(type) << node->output()->type()->str();
            EXPECT_TRUE(type && (!type->device() || *type->device() == value.device()))
                << node->output()->type()->str();
        }
    }
    return constants;
}

torch::jit::Module sizeArithmeticOnCpu()
{
    auto module = loadTorchScript(test::modelPath("size_arithmetic.pt"), c10::Device(c10::kCPU));
    EXPECT_TRUE(module.ok()) << module.error().toString();
    return module.value();
}

} // namespace

TEST(HostScalarConstants, MovesOnlyTheIntegerScalarConstants)
{
    torch::jit::Module module = sizeArithmeticOnCpu();
    // make_test_models.py SizeArithmetic: the submodule's forward keeps `// 2` as an int64 constant;
    // the top-level forward keeps `heads * 2` as another and the output scale as a float64 one. Both
    // functions are found: every method of every submodule is in the compilation unit.
    const std::vector<TensorConstant> before = tensorConstants(module);
    ASSERT_EQ(before.size(), 3u);

    EXPECT_EQ(keepIntegerScalarConstantsOn(module, c10::Device(c10::kMeta)), 2);
    for (const TensorConstant& constant : tensorConstants(module)) {
        EXPECT_EQ(constant.dim, 0);
        if (constant.dtype == "Long")
            EXPECT_EQ(constant.device, "meta");
        else
            EXPECT_EQ(constant.device, "cpu") << constant.dtype << ": floating constants stay where they were loaded";
    }
    EXPECT_EQ(keepIntegerScalarConstantsOn(module, c10::Device(c10::kMeta)), 0) << "nothing left to move";
}

TEST(HostScalarConstants, LoadingOnTheHostMovesNothingAndTheModelComputesTheSame)
{
    torch::jit::Module module = sizeArithmeticOnCpu(); // loadTorchScript applied it already
    EXPECT_EQ(keepIntegerScalarConstantsOn(module), 0);
    const at::Tensor x = at::randn({2, 4, 8, 16});
    auto out = runForward(module, {x}, c10::Device(c10::kCPU));
    ASSERT_TRUE(out.ok()) << out.error().toString();
    const at::Tensor rotated = at::cat({-x.slice(-1, 8), x.slice(-1, 0, 8)}, -1);
    const at::Tensor expected = rotated.unsqueeze(2).expand({2, 4, 2, 8, 16}).reshape({2, 8, 8, 16}) * 0.5;
    EXPECT_TRUE(at::equal(out->toTensor(), expected));
}
