// deviceWaitsNote / waitsForTheGpu (core/capture/DeviceWaits.h): the captured calls that make the
// host wait for the GPU, counted per forward pass.

#include "capture/DeviceWaits.h"

#include <gtest/gtest.h>

using namespace kforge::core;

namespace {

TensorSpec scalarOn(const std::string& device)
{
    return TensorSpec{"int64", {}, {}, device};
}

TensorSpec matrixOn(const std::string& device)
{
    return TensorSpec{"float32", {4, 8}, {8, 1}, device};
}

OperatorCard card(const std::string& op, const std::string& overload,
                  std::vector<std::pair<std::string, TensorSpec>> args, std::vector<TensorSpec> outputs,
                  std::int64_t calls = 1)
{
    OperatorCard c;
    c.op = op;
    c.overload = overload;
    for (auto& [name, tensor] : args) {
        ArgSpec arg;
        arg.name = name;
        arg.kind = ArgKind::Tensor;
        arg.tensors = {tensor};
        c.args.push_back(arg);
    }
    c.outputs = std::move(outputs);
    c.callCount = calls;
    return c;
}

} // namespace

TEST(DeviceWaits, HostReadsOfGpuValuesWait)
{
    EXPECT_TRUE(waitsForTheGpu(card("aten::item", "", {{"self", scalarOn("cuda:0")}}, {})));
    EXPECT_TRUE(waitsForTheGpu(card("aten::nonzero", "", {{"self", matrixOn("cuda:0")}}, {matrixOn("cuda:0")})));
    EXPECT_TRUE(
        waitsForTheGpu(card("aten::equal", "", {{"self", matrixOn("cuda:0")}, {"other", matrixOn("cuda:0")}}, {})));
    // The same reads of host tensors (a trace's shape arithmetic on the CPU) do not.
    EXPECT_FALSE(waitsForTheGpu(card("aten::item", "", {{"self", scalarOn("cpu")}}, {})));
    EXPECT_FALSE(waitsForTheGpu(
        card("aten::floor_divide", "", {{"self", scalarOn("cpu")}, {"other", scalarOn("cpu")}}, {scalarOn("cpu")})));
}

TEST(DeviceWaits, OnlyCopiesFromTheGpuToTheHostWait)
{
    EXPECT_TRUE(waitsForTheGpu(card("aten::to", "device", {{"self", matrixOn("cuda:0")}}, {matrixOn("cpu")})));
    EXPECT_TRUE(waitsForTheGpu(card("aten::_to_copy", "", {{"self", matrixOn("cuda:0")}}, {matrixOn("cpu")})));
    EXPECT_TRUE(waitsForTheGpu(
        card("aten::copy_", "", {{"self", matrixOn("cpu")}, {"src", matrixOn("cuda:0")}}, {matrixOn("cpu")})));
    // A cast on the GPU, an upload, and a copy into a GPU tensor go on without the host.
    EXPECT_FALSE(waitsForTheGpu(card("aten::to", "dtype", {{"self", matrixOn("cuda:0")}}, {matrixOn("cuda:0")})));
    EXPECT_FALSE(waitsForTheGpu(card("aten::to", "device", {{"self", matrixOn("cpu")}}, {matrixOn("cuda:0")})));
    EXPECT_FALSE(waitsForTheGpu(
        card("aten::copy_", "", {{"self", matrixOn("cuda:0")}, {"src", matrixOn("cpu")}}, {matrixOn("cuda:0")})));
    EXPECT_FALSE(waitsForTheGpu(card("aten::relu", "", {{"self", matrixOn("cuda:0")}}, {matrixOn("cuda:0")})));
}

TEST(DeviceWaitsNote, CountsEveryWaitingCallOfTheForward)
{
    const std::vector<OperatorCard> cards = {
        card("aten::item", "", {{"self", scalarOn("cuda:0")}}, {}, 12),
        card("aten::item", "", {{"self", scalarOn("cpu")}}, {}, 4),
        card("aten::to", "device", {{"self", matrixOn("cuda:0")}}, {matrixOn("cpu")}, 1),
        card("aten::relu", "", {{"self", matrixOn("cuda:0")}}, {matrixOn("cuda:0")}, 30),
    };
    const auto note = deviceWaitsNote(cards);
    ASSERT_TRUE(note.has_value());
    EXPECT_EQ(note->rfind("the model waits for the GPU 13 times per forward (aten::item x12, aten::to.device x1 on GPU "
                          "tensors)",
                          0),
              0u)
        << *note;
}

TEST(DeviceWaitsNote, NoneWhenNothingWaits)
{
    EXPECT_FALSE(deviceWaitsNote({card("aten::relu", "", {{"self", matrixOn("cuda:0")}}, {matrixOn("cuda:0")}, 3),
                                  card("aten::item", "", {{"self", scalarOn("cpu")}}, {}, 2)})
                     .has_value());
    EXPECT_FALSE(deviceWaitsNote({}).has_value());
}
