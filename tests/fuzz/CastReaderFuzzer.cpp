// libFuzzer harness of the .cast reader (readCast: container, checksums, header, manifest, audit)
// and of what the runtime and `kforge verify` do with a package it accepts.
//
// Input, two forms:
// - raw archive bytes, read as a package file would be. Mutations of these mostly exercise the ZIP
//   container: the CRC-32s and the SHA-256 chain refuse nearly every changed byte.
// - "E" then entries, each introduced by a line "\n--kforge-fuzz-entry:NAME\n" and followed by its
//   bytes: the harness seals them into a package with valid CRC-32s and checksums (HEADER.json's
//   first run of 64 '0' characters becomes the checksums digest), so that mutations reach the JSON
//   readers and the manifest's consistency rules.

#include "FuzzSupport.h"

#include "cast/CastReader.h"
#include "cast/CastWriter.h"
#include "cast/GuardMatch.h"
#include "cast/ZipArchive.h"
#include "model/LaunchPlan.h"
#include "project/ProjectJson.h"
#include "util/Sha256.h"

#include <cstdint>
#include <string>
#include <vector>

using namespace kforge::core;
using nlohmann::json;

namespace {

constexpr std::string_view kMarker = "\n--kforge-fuzz-entry:";

std::vector<ZipEntry> entriesOf(std::string_view text)
{
    std::vector<ZipEntry> entries;
    std::size_t at = text.find(kMarker);
    while (at != std::string_view::npos) {
        const std::size_t nameAt = at + kMarker.size();
        const std::size_t nameEnd = text.find('\n', nameAt);
        if (nameEnd == std::string_view::npos)
            break;
        const std::size_t next = text.find(kMarker, nameEnd + 1);
        const std::size_t dataEnd = next == std::string_view::npos ? text.size() : next;
        entries.push_back({std::string(text.substr(nameAt, nameEnd - nameAt)),
                           std::string(text.substr(nameEnd + 1, dataEnd - nameEnd - 1))});
        at = next;
    }
    return entries;
}

// What CastWriter::seal does, on entries as they come (HEADER.json among them, anywhere).
std::string seal(std::vector<ZipEntry> entries)
{
    std::erase_if(entries, [](const ZipEntry& e) { return e.name == kCastChecksumsEntry; });
    const std::string zeros(64, '0');
    std::string checksums;
    for (const ZipEntry& e : entries)
        checksums += Sha256::hex(e.data) + "  " + e.name + "\n";
    for (ZipEntry& e : entries) {
        if (e.name != kCastHeaderEntry)
            continue;
        if (const auto at = e.data.find(zeros); at != std::string::npos)
            e.data.replace(at, zeros.size(), Sha256::hex(checksums));
        break;
    }
    entries.push_back({kCastChecksumsEntry, checksums});
    if (entries.size() > 1000)
        return {};
    return buildStoredZip(entries);
}

// What the runtime (runtime/PackagedKernel.cpp) and `kforge verify` do with a package they accept.
void usePackage(const CastPackage& package)
{
    (void)checkCompatibility(package, "sm_90", "2.11.0", "13.0");
    (void)castHeaderToJson(package.header).dump();
    (void)castAuditToJson(package.audit, package.auditNotes).dump();
    for (const CastKernel& k : package.kernels) {
        CallSpec call;
        call.capabilityMajor = k.guard.capabilityMajor;
        call.capabilityMinor = k.guard.capabilityMinor;
        for (const TensorGuard& g : k.guard.tensors)
            call.tensors.push_back({g.dtype, g.sizes, g.strides, 256});
        (void)matchGuard(k.guard, call);
        if (k.kind != KernelKind::Custom || !k.launchPlan.is_object() || !k.launchPlan.contains("outputs"))
            continue;
        json outputs = k.launchPlan.at("outputs");
        if (!outputs.is_array())
            continue;
        for (json& output : outputs)
            if (output.is_object() && !output.contains("device"))
                output["device"] = "cuda";
        const json card{{"id", cardIdForKey("")},
                        {"key", ""},
                        {"op", k.op},
                        {"overload", k.overload},
                        {"schema", ""},
                        {"call_count", 0},
                        {"call_positions", json::array()},
                        {"vendor_backed", false},
                        {"samples_note", ""},
                        {"eager_note", ""},
                        {"time_share", 0.0},
                        {"args", k.args},
                        {"outputs", outputs},
                        {"samples", json::array()},
                        {"eager", nullptr}};
        auto parsed = cardFromJson(card, "kernel " + k.id + " card");
        if (!parsed)
            continue;
        parsed->key = variantKey(parsed->op, parsed->overload, parsed->args);
        auto plan = parseLaunchPlan(k.launchPlan, parsed.value());
        if (plan)
            (void)validateLaunchPlan(plan.value(), parsed.value());
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    std::string archive;
    if (!input.empty() && input.front() == 'E')
        archive = seal(entriesOf(input.substr(1)));
    else
        archive = std::string(input);
    auto package = readCast(archive, "fuzz.cast");
    if (package) {
        usePackage(package.value());
        // Whatever the reader accepts, the writer writes back and the reader accepts again.
        auto rebuilt = CastWriter::build(package.value());
        if (rebuilt) {
            auto again = readCast(rebuilt.value(), "rebuilt.cast");
            if (!again)
                __builtin_trap();
        }
    } else if (package.error().toString().find('\n') != std::string::npos) {
        __builtin_trap(); // every refusal is one line
    }
    return 0;
}
