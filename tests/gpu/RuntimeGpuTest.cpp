// libkforge_runtime on the GPU: a package with one built-in relu kernel for float32 [64,1000] is
// loaded into this process; a matching call is served by it (a hit) and equals eager bit for bit;
// another shape falls back (counted) and is still right; unloading restores eager; the same package
// loads from python3 into an eager nn.Module and hits. The package is built here from the built-in
// proposer's kernel, compiled with NVRTC, so the test needs no search run.

#include "builtin_proposer/BuiltinProposer.h"
#include "cast/CastReader.h"
#include "cast/CastWriter.h"
#include "kernel/NvrtcCompiler.h"
#include "model/OperatorCard.h"
#include "project/ProjectJson.h"
#include "runtime/CastRuntime.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDAGuard.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

using namespace kforge::core;
using nlohmann::json;

namespace {

std::filesystem::path scratchFile(const std::string& name)
{
    return std::filesystem::temp_directory_path() / ("kforge-runtime-" + std::to_string(::getpid()) + "-" + name);
}

OperatorCard reluCard()
{
    OperatorCard card;
    card.id = "relu-card";
    card.op = "aten::relu";
    const TensorSpec t{"float32", {64, 1000}, {1000, 1}, "cuda:0"};
    card.args.push_back(ArgSpec{"self", "Tensor", ArgKind::Tensor, {t}, nullptr});
    card.outputs = {t};
    return card;
}

// x * 0.125 as a trace records it: the number is a 0-dim float64 tensor constant on the GPU.
OperatorCard mulByNumberCard(const std::string& dtype = "float32")
{
    OperatorCard card;
    card.id = "mul-number-card-" + dtype;
    card.op = "aten::mul";
    card.overload = "Tensor";
    const TensorSpec x{dtype, {64, 1000}, {1000, 1}, "cuda:0"};
    card.args.push_back(ArgSpec{"self", "Tensor", ArgKind::Tensor, {x}, nullptr});
    card.args.push_back(
        ArgSpec{"other", "Tensor", ArgKind::Tensor, {TensorSpec{"float64", {}, {}, "cuda:0"}}, nullptr});
    card.outputs = {x};
    return card;
}

// A one-kernel package for `card` from the built-in proposer's root, compiled for this GPU.
CastPackage onePackage(const OperatorCard& card, const std::vector<TensorGuard>& guards, const std::string& arch)
{
    std::atomic<bool> stop{false};
    auto root = BuiltinProposer(card).proposeRoot(SearchTree(card.id, 1), stop);
    EXPECT_TRUE(root.ok());
    CompileOptions options;
    options.architecture = arch;
    auto compiled = NvrtcCompiler().compile(root->candidate.source, options);
    EXPECT_TRUE(compiled.ok() && compiled->ok);
    CastKernel kernel;
    kernel.id = "k0";
    kernel.cardId = card.id;
    kernel.op = card.op;
    kernel.overload = card.overload;
    kernel.args = json::array();
    for (const ArgSpec& arg : card.args)
        kernel.args.push_back(toJson(arg));
    kernel.guard.tensors = guards;
    kernel.guard.capabilityMajor = arch[3] - '0';
    kernel.guard.capabilityMinor = arch[4] - '0';
    kernel.cubins[arch] = std::string(compiled->cubin.begin(), compiled->cubin.end());
    kernel.ptx = compiled->ptx;
    kernel.ptxArch = "compute_" + arch.substr(3);
    kernel.source = root->candidate.source;
    kernel.launchPlan = root->candidate.launchPlan;
    kernel.launchPlan["outputs"] = json::array({toJson(card.outputs[0])});
    kernel.speedup = 1.2;
    kernel.medianUs = 5;
    kernel.validation = {{"passed", true}};
    CastPackage package;
    package.header.producer = "kforge test";
    package.header.createdUtc = "2026-12-01T00:00:00Z";
    package.header.architectures = {arch};
    package.header.minTorchVersion = "2.11";
    package.kernels = {kernel};
    package.audit = {{card.id, card.op, "custom", "1.20x"}};
    return package;
}

CastPackage reluPackage(const OperatorCard& card, const std::string& arch)
{
    return onePackage(card, {{"self", "float32", {64, 1000}, {1000, 1}, 16}}, arch);
}

json kernelStats()
{
    const json stats = kforge::runtime::runtimeStats();
    return stats["kernels"].empty() ? json() : stats["kernels"][0];
}

class RuntimeGpuTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        const cudaDeviceProp* props = at::cuda::getCurrentDeviceProperties();
        m_arch = "sm_" + std::to_string(props->major) + std::to_string(props->minor);
        m_cast = scratchFile("relu.cast");
        auto written = CastWriter::write(reluPackage(reluCard(), m_arch), m_cast);
        ASSERT_TRUE(written.ok()) << written.error().toString();
    }
    void TearDown() override { std::filesystem::remove(m_cast); }

    std::string m_arch;
    std::filesystem::path m_cast;
};

} // namespace

TEST_F(RuntimeGpuTest, MatchingCallsHitOtherShapesFallBackAndUnloadRestoresEager)
{
    c10::InferenceMode inference;
    const auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
    const at::Tensor x = at::randn({64, 1000}, options);
    const at::Tensor other = at::randn({32, 1000}, options);
    const at::Tensor expected = at::relu(x);
    const at::Tensor expectedOther = at::relu(other);

    auto handle = kforge::runtime::loadPackage(m_cast.string());
    ASSERT_TRUE(handle.ok()) << handle.error().toString();
    EXPECT_FALSE(kforge::runtime::loadPackage(m_cast.string()).ok()) << "a second package while one is loaded";

    const at::Tensor served = at::relu(x);
    EXPECT_TRUE(at::equal(served, expected));
    json k = kernelStats();
    EXPECT_EQ(k.value("hits", 0), 1) << kforge::runtime::runtimeStats().dump();
    EXPECT_EQ(k.value("fallbacks", 0), 0);

    const at::Tensor fellBack = at::relu(other); // [32,1000]: the guard does not hold
    EXPECT_TRUE(at::equal(fellBack, expectedOther));
    k = kernelStats();
    EXPECT_EQ(k.value("hits", 0), 1);
    EXPECT_EQ(k.value("fallbacks", 0), 1);
    const json reasons = kforge::runtime::runtimeStats()["fallback_reasons"];
    EXPECT_NE(reasons.value("k0", std::string()).find("sizes"), std::string::npos) << reasons.dump();

    // A view with a misaligned data pointer (offset by one element) falls back too.
    const at::Tensor wide = at::randn({64 * 1000 + 1}, options);
    const at::Tensor shifted = wide.narrow(0, 1, 64 * 1000).view({64, 1000});
    EXPECT_TRUE(at::equal(at::relu(shifted), at::clamp_min(shifted, 0)));
    EXPECT_EQ(kernelStats().value("fallbacks", 0), 2);

    ASSERT_TRUE(kforge::runtime::unloadPackage(handle.value()).ok());
    EXPECT_TRUE(kforge::runtime::runtimeStats()["kernels"].empty());
    EXPECT_TRUE(at::equal(at::relu(x), expected));
    EXPECT_FALSE(kforge::runtime::unloadPackage(handle.value()).ok());
}

TEST_F(RuntimeGpuTest, AnOpenedPackageLoadsAgainAfterEachUnload)
{
    // `kforge run` and the in-model check open a package once and load it once per timed block.
    c10::InferenceMode inference;
    const at::Tensor x = at::randn({64, 1000}, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA));
    const at::Tensor expected = at::relu(x);
    auto package = kforge::core::openCast(m_cast);
    ASSERT_TRUE(package.ok()) << package.error().toString();
    for (int block = 0; block < 3; ++block) {
        auto handle = kforge::runtime::loadOpenedPackage(package.value(), m_cast.string());
        ASSERT_TRUE(handle.ok()) << handle.error().toString();
        EXPECT_FALSE(kforge::runtime::loadOpenedPackage(package.value(), m_cast.string()).ok())
            << "a second load while one is loaded";
        EXPECT_TRUE(at::equal(at::relu(x), expected));
        EXPECT_EQ(kernelStats().value("hits", 0), 1) << "each load counts from zero";
        ASSERT_TRUE(kforge::runtime::unloadPackage(handle.value()).ok());
        EXPECT_TRUE(kforge::runtime::runtimeStats()["kernels"].empty());
    }
}

TEST_F(RuntimeGpuTest, APackagedKernelIsCapturedIntoACudaGraphAndReplays)
{
    // A user of CUDA graphs captures a forward once and replays it: the packaged kernel must launch
    // inside the capture (its first launch there: lazy module loading included) and each replay must
    // compute from the captured buffers' new values. The guard runs once, at capture; replays run no
    // host code and count nothing.
    c10::InferenceMode inference;
    const auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
    const at::Tensor x = at::randn({64, 1000}, options);
    auto handle = kforge::runtime::loadPackage(m_cast.string());
    ASSERT_TRUE(handle.ok()) << handle.error().toString();
    {
        at::cuda::CUDAGraph graph;
        at::Tensor out;
        {
            const c10::cuda::CUDAStreamGuard sideStream(c10::cuda::getStreamFromPool()); // not the legacy stream
            graph.capture_begin();
            out = at::relu(x);
            graph.capture_end();
        }
        EXPECT_EQ(kernelStats().value("hits", 0), 1) << "the guard ran at capture";
        for (int replay = 0; replay < 3; ++replay) {
            x.copy_(at::randn({64, 1000}, options));
            graph.replay();
            torch::cuda::synchronize();
            EXPECT_TRUE(at::equal(out, at::clamp_min(x, 0))) << "replay " << replay;
        }
        EXPECT_EQ(kernelStats().value("hits", 0), 1) << "replays run no host code";
    } // the graph goes before the package: a replay after unloading would launch an unloaded kernel
    ASSERT_TRUE(kforge::runtime::unloadPackage(handle.value()).ok());
}

TEST_F(RuntimeGpuTest, APythonNumberOperandIsServedFromItsDeviceCopy)
{
    // Eager Python passes `x * 0.125` with the number as a wrapped 0-dim CPU tensor; the card (from a
    // trace) has a 0-dim float64 CUDA tensor there (HostScalars.h).
    c10::InferenceMode inference;
    const auto cast = scratchFile("mul-number.cast");
    auto written = CastWriter::write(
        onePackage(mulByNumberCard(), {{"self", "float32", {64, 1000}, {1000, 1}, 16}, {"other", "float64", {}, {}, 8}},
                   m_arch),
        cast);
    ASSERT_TRUE(written.ok()) << written.error().toString();
    const at::Tensor x = at::randn({64, 1000}, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA));
    auto number = [](double value) {
        at::Tensor wrapped = at::scalar_tensor(value, at::kDouble);
        wrapped.unsafeGetTensorImpl()->set_wrapped_number(true);
        return wrapped;
    };
    const at::Tensor expectedEighth = at::mul(x, number(0.125));
    const at::Tensor expectedThird = at::mul(x, number(1.0 / 3.0));
    const at::Tensor onDevice = at::scalar_tensor(0.125, at::TensorOptions().dtype(at::kDouble).device(at::kCUDA));
    const at::Tensor floatOnHost = at::scalar_tensor(0.125, at::kFloat);

    auto handle = kforge::runtime::loadPackage(cast.string());
    ASSERT_TRUE(handle.ok()) << handle.error().toString();
    // Compared with at::equal and sub/abs/max: at::allclose multiplies by its rtol, a Python number
    // the loaded kernel would serve too (and count).
    auto maxAbsDifference = [](const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); };
    EXPECT_TRUE(at::equal(at::mul(x, number(0.125)), expectedEighth));
    EXPECT_EQ(kernelStats().value("hits", 0), 1) << kforge::runtime::runtimeStats().dump();
    EXPECT_LE(maxAbsDifference(at::mul(x, number(1.0 / 3.0)), expectedThird), 1e-6); // another value, another copy
    EXPECT_TRUE(at::equal(at::mul(x, number(0.125)), expectedEighth));               // the first copy again
    EXPECT_TRUE(at::equal(at::mul(x, onDevice), expectedEighth));                    // as the trace calls it
    EXPECT_EQ(kernelStats().value("hits", 0), 4) << kforge::runtime::runtimeStats().dump();
    EXPECT_EQ(kernelStats().value("fallbacks", 0), 0) << kforge::runtime::runtimeStats().dump();
    EXPECT_TRUE(at::equal(at::mul(x, floatOnHost), expectedEighth)); // float32: not what was proven
    EXPECT_EQ(kernelStats().value("fallbacks", 0), 1);
    const json reasons = kforge::runtime::runtimeStats()["fallback_reasons"];
    EXPECT_NE(reasons.value("k0", std::string()).find("dtype"), std::string::npos) << reasons.dump();
    ASSERT_TRUE(kforge::runtime::unloadPackage(handle.value()).ok());
    std::filesystem::remove(cast);
}

TEST_F(RuntimeGpuTest, AHostNumberServesA16BitKernelOnlyWhereItsValueSurvivesRounding)
{
    // The kernel, as eager with a 0-dim device operand, rounds the number to bfloat16 first; eager
    // with a host number computes with it unrounded. 0.0625 is a bfloat16, 1/sqrt(128) is not.
    c10::InferenceMode inference;
    const auto cast = scratchFile("mul-number-bf16.cast");
    auto written = CastWriter::write(
        onePackage(mulByNumberCard("bfloat16"),
                   {{"self", "bfloat16", {64, 1000}, {1000, 1}, 16}, {"other", "float64", {}, {}, 8}}, m_arch),
        cast);
    ASSERT_TRUE(written.ok()) << written.error().toString();
    const at::Tensor x = at::randn({64, 1000}, at::TensorOptions().dtype(at::kBFloat16).device(at::kCUDA));
    auto number = [](double value) {
        at::Tensor wrapped = at::scalar_tensor(value, at::kDouble);
        wrapped.unsafeGetTensorImpl()->set_wrapped_number(true);
        return wrapped;
    };
    const double unrepresentable = 1.0 / std::sqrt(128.0);
    const at::Tensor expectedSixteenth = at::mul(x, number(0.0625));
    const at::Tensor expectedScale = at::mul(x, number(unrepresentable));
    auto handle = kforge::runtime::loadPackage(cast.string());
    ASSERT_TRUE(handle.ok()) << handle.error().toString();
    EXPECT_TRUE(at::equal(at::mul(x, number(0.0625)), expectedSixteenth));
    EXPECT_EQ(kernelStats().value("hits", 0), 1) << kforge::runtime::runtimeStats().dump();
    EXPECT_TRUE(at::equal(at::mul(x, number(unrepresentable)), expectedScale)); // eager's own result
    EXPECT_EQ(kernelStats().value("hits", 0), 1);
    EXPECT_EQ(kernelStats().value("fallbacks", 0), 1);
    const json reasons = kforge::runtime::runtimeStats()["fallback_reasons"];
    EXPECT_NE(reasons.value("k0", std::string()).find("rounds this value differently"), std::string::npos)
        << reasons.dump();
    ASSERT_TRUE(kforge::runtime::unloadPackage(handle.value()).ok());
    std::filesystem::remove(cast);
}

TEST_F(RuntimeGpuTest, DamagedPackageIsRefusedAndNothingIsRegistered)
{
    std::string bytes;
    {
        std::ifstream in(m_cast, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    bytes[bytes.size() / 2] ^= 0x01;
    const auto damaged = scratchFile("damaged.cast");
    {
        std::ofstream out(damaged, std::ios::binary);
        out << bytes;
    }
    auto handle = kforge::runtime::loadPackage(damaged.string());
    EXPECT_FALSE(handle.ok());
    EXPECT_TRUE(kforge::runtime::runtimeStats()["kernels"].empty());
    EXPECT_TRUE(kforge::runtime::runtimeStats()["package"].is_null());
    std::filesystem::remove(damaged);
}

TEST_F(RuntimeGpuTest, Python3LoadsThePackageIntoAnEagerModule)
{
    const std::string command = std::string(KFORGE_PYTHON) + " " + KFORGE_RUNTIME_PY_TEST + " --library " +
        KFORGE_RUNTIME_LIBRARY + " --cast " + m_cast.string();
    const int status = std::system(command.c_str());
    EXPECT_EQ(status, 0) << command;
}
