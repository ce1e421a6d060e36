// kforge verify: checks a .cast package (container, checksums, format version,
// manifest, compatibility) without loading or extracting anything, and prints
// its audit.

#include "Commands.h"
#include "util/ArgParser.h"

#include "cast/CastReader.h"
#include "cast/CastWriter.h"
#include "util/Utf8Text.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace kforge::cli {
namespace {

// The CLI does not query the GPU for verify (that would start CUDA for a file
// check); without
// --arch it assumes the architecture the project targets first and says so.
constexpr const char* kDefaultArch = "sm_90";

} // namespace

int runVerifyCommand(const std::vector<std::string>& args)
{
    core::ArgParser parser;
    parser.option("--arch").option("--torch-version").option("--cuda-version").flag("--json");
    if (auto error = parser.parse(args))
        return fail("verify: " + *error + " (see 'kforge verify --help')", 2);
    if (parser.positionals().size() != 1)
        return fail("verify: expected one FILE.cast (see 'kforge verify --help')", 2);
    const std::string file = parser.positionals().front();
    const bool archAssumed = !parser.has("--arch");
    const std::string arch = parser.value("--arch").value_or(kDefaultArch);
    const std::string torchVersion = parser.value("--torch-version").value_or("");
    const std::string cudaVersion = parser.value("--cuda-version").value_or("");

    auto package = core::openCast(file);
    if (!package)
        return fail(package.error().toString());
    auto notes = core::checkCompatibility(package.value(), arch, torchVersion, cudaVersion);
    if (!notes)
        return fail(file + ": not compatible with " + arch + (archAssumed ? " (assumed)" : "") + ": " +
                    notes.error().message);

    const core::CastHeader& h = package->header;
    if (parser.has("--json")) {
        nlohmann::json kernels = nlohmann::json::array();
        for (const core::CastKernel& k : package->kernels) {
            nlohmann::json archs = nlohmann::json::array();
            for (const auto& [a, bytes] : k.cubins)
                archs.push_back(a);
            kernels.push_back({{"id", k.id},
                               {"card", k.cardId},
                               {"op", k.op + (k.overload.empty() ? "" : "." + k.overload)},
                               {"kind", core::kernelKindName(k.kind)},
                               {"speedup", k.speedup},
                               {"cubins", archs},
                               {"ptx", k.ptx ? nlohmann::json(k.ptxArch) : nullptr}});
        }
        const nlohmann::json report = {{"file", file},
                                       {"ok", true},
                                       {"header", core::castHeaderToJson(h)},
                                       {"architecture", arch},
                                       {"architecture_assumed", archAssumed},
                                       {"torch_version_checked", !torchVersion.empty()},
                                       {"cuda_version_checked", !cudaVersion.empty()},
                                       {"notes", notes.value()},
                                       {"kernels", kernels},
                                       {"audit", core::castAuditToJson(package->audit)["ops"]},
                                       {"audit_notes", package->auditNotes}};
        std::cout << report.dump(2) << "\n";
        return 0;
    }

    // Text from the package is printed escaped: a package must not be able to
    // send raw bytes or control sequences to the terminal.
    const auto shown = [](const std::string& text) { return core::escapeForTerminal(text); };
    std::cout << file << ": .cast format " << h.formatMajor << "." << h.formatMinor << ", " << shown(h.producer)
              << ", created " << shown(h.createdUtc) << "\n";
    std::cout << "  " << h.kernelCount << " kernels (" << h.customCount << " custom, " << h.fallbackCount
              << " fallback), " << h.entryCount << " entries, every checksum verified, model "
              << (h.modelIncluded ? "included" : "not included") << "\n";
    std::cout << "  compatible with " << arch
              << (archAssumed ? " (assumed: no --arch given; verify does not query the GPU)" : "") << "; torch "
              << (torchVersion.empty() ? "not checked" : torchVersion) << " (needs >= " << shown(h.minTorchVersion)
              << "), CUDA " << (cudaVersion.empty() ? "not checked" : cudaVersion)
              << " (needs >= " << shown(h.minCudaVersion) << ")\n";
    for (const std::string& note : notes.value())
        std::cout << "  note: " << shown(note) << "\n";
    std::cout << "audit:\n";
    char line[512];
    std::snprintf(line, sizeof line, "  %-18s %-28s %-9s %s\n", "card", "op", "decision", "reason");
    std::cout << line;
    for (const core::AuditEntry& a : package->audit) {
        std::snprintf(line, sizeof line, "  %-18s %-28s %-9s ", shown(a.cardId).c_str(), shown(a.op).c_str(),
                      shown(a.decision).c_str());
        std::cout << line << shown(a.reason) << "\n";
    }
    for (const std::string& note : package->auditNotes)
        std::cout << "  " << shown(note) << "\n";
    return 0;
}

} // namespace kforge::cli
