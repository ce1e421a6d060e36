#pragma once
// Shared by the .cast tests: a small but complete package (two custom kernels,
// one fallback, a model) and helpers to take archives apart and put them back
// together.

#include "cast/CastPackage.h"
#include "cast/ZipArchive.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kforge::core::test {

inline CastKernel sampleKernel(const std::string& id)
{
    CastKernel k;
    k.id = id;
    k.cardId = "card-" + id;
    k.op = "aten::add";
    k.overload = "Tensor";
    k.args = nlohmann::json::array({{{"name", "self"}, {"type", "Tensor"}, {"kind", "tensor"}}});
    k.guard.tensors = {{"self", "float16", {8, 512}, {512, 1}, 16}, {"other", "float16", {8, 512}, {512, 1}, 16}};
    k.guard.capabilityMajor = 9;
    k.guard.capabilityMinor = 0;
    k.cubins["sm_90"] = std::string("\x7f"
                                    "ELF cubin bytes for ") +
        id + std::string(1, '\0') + "tail";
    k.ptx = ".version 8.0\n.target sm_90\n// " + id + "\n";
    k.ptxArch = "compute_90";
    k.source = "extern \"C\" __global__ void " + id + "() {}\n";
    k.launchPlan = {{"kernel", id}, {"grid", {64, 1, 1}}, {"block", {256, 1, 1}}};
    k.speedup = 1.75;
    k.medianUs = 12.5;
    k.spreadPercent = 2.25;
    k.validation = {{"passed", true}, {"max_abs_error", 0.0009765625}, {"samples", 3}};
    return k;
}

inline CastPackage samplePackage()
{
    CastPackage p;
    p.header.producer = "kforge 0.1.0";
    p.header.createdUtc = "2026-11-29T16:55:57Z";
    p.header.architectures = {"sm_90"};
    p.header.minTorchVersion = "2.11";
    p.header.minCudaVersion = "12.8";
    p.kernels = {sampleKernel("k0"), sampleKernel("k1")};
    CastKernel fallback = sampleKernel("k2");
    fallback.kind = KernelKind::Fallback;
    fallback.cubins.clear();
    fallback.ptx.reset();
    fallback.ptxArch.clear();
    fallback.source.clear();
    fallback.fallbackReason = "no candidate beat eager by the minimum speedup";
    p.kernels.push_back(fallback);
    p.audit = {{"card-k0", "aten::add.Tensor", "custom", "1.75x"},
               {"card-k1", "aten::add.Tensor", "custom", "1.75x"},
               {"card-k2", "aten::add.Tensor", "fallback", "no candidate beat eager by the minimum speedup"}};
    p.model = std::string("PK fake torchscript\0\x01\x02", 22);
    return p;
}

/// The entries of a valid archive (fails the test on a bad one).
inline std::vector<ZipEntry> entriesOf(const std::string& archive)
{
    auto entries = readZip(archive, CastLimits{});
    EXPECT_TRUE(entries.ok()) << (entries.ok() ? "" : entries.error().toString());
    return entries.ok() ? entries.value() : std::vector<ZipEntry>{};
}

/// Offset of the data of entry `name` inside a stored archive written by
/// buildStoredZip().
inline std::size_t dataOffset(const std::string& archive, const std::string& name)
{
    // Local header: 30 bytes, then the name, then the data (no extra field).
    std::size_t at = 0;
    while (true) {
        at = archive.find(std::string("PK\x03\x04", 4), at);
        if (at == std::string::npos)
            return std::string::npos;
        const std::size_t nameLength =
            static_cast<unsigned char>(archive[at + 26]) | (static_cast<unsigned char>(archive[at + 27]) << 8);
        if (archive.compare(at + 30, nameLength, name) == 0 && nameLength == name.size())
            return at + 30 + nameLength;
        ++at;
    }
}

} // namespace kforge::core::test
