#include "model/OperatorCard.h"
#include "util/Hash.h"

#include <gtest/gtest.h>

using namespace kforge::core;

namespace {

ArgSpec tensorArg(std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides, std::string dtype = "float32")
{
    ArgSpec arg;
    arg.name = "self";
    arg.type = "Tensor";
    arg.kind = ArgKind::Tensor;
    arg.tensors.push_back(TensorSpec{std::move(dtype), std::move(sizes), std::move(strides), "cuda:0"});
    return arg;
}

ArgSpec valueArg(const char* name, nlohmann::json value)
{
    ArgSpec arg;
    arg.name = name;
    arg.type = "int";
    arg.kind = ArgKind::Value;
    arg.value = std::move(value);
    return arg;
}

} // namespace

TEST(Hash, Fnv1aMatchesReferenceValues)
{
    // Reference values of 64-bit FNV-1a.
    EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
    EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
    EXPECT_EQ(fnv1a64Hex("foobar"), "85944171f73967e8");
}

TEST(VariantKey, DistinguishesEveryPartOfTheVariant)
{
    const auto base = variantKey("aten::softmax", "int", {tensorArg({8, 512}, {512, 1}), valueArg("dim", -1)});
    EXPECT_EQ(base, "aten::softmax.int(tensor:(float32[8,512]{512,1}@cuda:0), value:-1)");
    EXPECT_NE(base, variantKey("aten::softmax", "int", {tensorArg({8, 512}, {1, 8}), valueArg("dim", -1)}));
    EXPECT_NE(base,
              variantKey("aten::softmax", "int", {tensorArg({8, 512}, {512, 1}, "float16"), valueArg("dim", -1)}));
    EXPECT_NE(base, variantKey("aten::softmax", "int", {tensorArg({8, 511}, {511, 1}), valueArg("dim", -1)}));
    EXPECT_NE(base, variantKey("aten::softmax", "int", {tensorArg({8, 512}, {512, 1}), valueArg("dim", 1)}));
    EXPECT_NE(base, variantKey("aten::softmax", "", {tensorArg({8, 512}, {512, 1}), valueArg("dim", -1)}));
    EXPECT_EQ(cardIdForKey(base), fnv1a64Hex(base));
    EXPECT_EQ(cardIdForKey(base).size(), 16u);
}

TEST(TensorSpec, ContiguityAndShortString)
{
    TensorSpec contiguous{"bfloat16", {8, 8, 512}, {4096, 512, 1}, "cuda:0"};
    EXPECT_TRUE(contiguous.isContiguous());
    EXPECT_EQ(contiguous.toShortString(), "bfloat16[8,8,512]");
    TensorSpec transposed{"float32", {4, 3}, {1, 4}, "cpu"};
    EXPECT_FALSE(transposed.isContiguous());
    EXPECT_EQ(transposed.toShortString(), "float32[4,3]{1,4}");
    EXPECT_EQ(transposed.numel(), 12);
    TensorSpec broadcastOne{"float32", {4, 1}, {1, 7}, "cpu"}; // size-1 dims may have any stride
    EXPECT_TRUE(broadcastOne.isContiguous());
}

TEST(VendorBacked, ClassifiesLibraryBackedOps)
{
    for (const char* op : {"aten::_convolution", "aten::conv2d", "aten::linear", "aten::addmm", "aten::matmul",
                           "aten::bmm", "aten::scaled_dot_product_attention", "aten::cudnn_convolution",
                           "aten::_scaled_dot_product_flash_attention", "aten::lstm"})
        EXPECT_TRUE(isVendorBackedOp(op)) << op;
    for (const char* op : {"aten::softmax", "aten::group_norm", "aten::layer_norm", "aten::relu", "aten::add",
                           "aten::batch_norm", "aten::adaptive_avg_pool2d", "aten::gelu", "aten::embedding"})
        EXPECT_FALSE(isVendorBackedOp(op)) << op;
}

TEST(OperatorCard, HostOpsHaveNoTensorOnAGpu)
{
    OperatorCard item;
    item.op = "aten::item";
    item.args = {tensorArg({}, {})};
    item.args[0].tensors[0].device = "cpu";
    EXPECT_TRUE(item.runsOnHost()); // a CPU scalar's item(): returns a number, no output tensor

    OperatorCard mul = item;
    mul.args.push_back(mul.args[0]);
    mul.outputs = {TensorSpec{"int64", {}, {}, "cpu"}};
    EXPECT_TRUE(mul.runsOnHost());
    mul.outputs[0].device = "cuda:0"; // a CPU operand moved to the GPU: not a host op
    EXPECT_FALSE(mul.runsOnHost());

    OperatorCard softmax;
    softmax.op = "aten::softmax";
    softmax.args = {tensorArg({8, 512}, {512, 1}), valueArg("dim", -1)};
    softmax.outputs = {TensorSpec{"float32", {8, 512}, {512, 1}, "cuda:0"}};
    EXPECT_FALSE(softmax.runsOnHost());
    softmax.args[0].tensors[0].device = "cpu"; // one GPU tensor anywhere is enough
    EXPECT_FALSE(softmax.runsOnHost());

    OperatorCard empty; // aten::empty.memory_format on cuda: no tensor argument, a GPU output
    empty.op = "aten::empty";
    empty.outputs = {TensorSpec{"float16", {2, 4}, {4, 1}, "cuda:1"}};
    EXPECT_FALSE(empty.runsOnHost());
}
