#include "cast/CastWriter.h"

#include "util/AtomicFile.h"
#include "util/Sha256.h"

#include <cctype>
#include <set>

namespace kforge::core {
namespace {

const std::string kZeroDigest(64, '0');

nlohmann::json guardToJson(const KernelGuard& guard)
{
    nlohmann::json tensors = nlohmann::json::array();
    for (const TensorGuard& t : guard.tensors)
        tensors.push_back({{"arg", t.arg},
                           {"dtype", t.dtype},
                           {"sizes", t.sizes},
                           {"strides", t.strides},
                           {"alignment_bytes", t.alignmentBytes}});
    return {{"tensors", tensors}, {"compute_capability", {guard.capabilityMajor, guard.capabilityMinor}}};
}

Error writeError(std::string message)
{
    return makeError(ErrorCode::InvalidArgument, std::move(message), "cast writer");
}

} // namespace

std::string castCubinPath(const std::string& kernelId, const std::string& arch)
{
    return "kernels/" + kernelId + "/" + arch + ".cubin";
}

std::string castPtxPath(const std::string& kernelId)
{
    return "kernels/" + kernelId + "/kernel.ptx";
}

std::string castSourcePath(const std::string& kernelId)
{
    return "kernels/" + kernelId + "/kernel.cu";
}

bool isValidCastKernelId(const std::string& id)
{
    if (id.empty() || id.size() > 64)
        return false;
    for (char c : id) {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
            return false;
    }
    return true;
}

nlohmann::json castHeaderToJson(const CastHeader& header)
{
    return {{"format_version", std::to_string(header.formatMajor) + "." + std::to_string(header.formatMinor)},
            {"producer", header.producer},
            {"created_utc", header.createdUtc},
            {"architectures", header.architectures},
            {"min_torch_version", header.minTorchVersion},
            {"min_cuda_version", header.minCudaVersion},
            {"counts",
             {{"kernels", header.kernelCount},
              {"custom", header.customCount},
              {"fallback", header.fallbackCount},
              {"entries", header.entryCount}}},
            {"model_included", header.modelIncluded},
            {"checksums_sha256", header.checksumsSha256}};
}

nlohmann::json castManifestToJson(const CastPackage& package)
{
    nlohmann::json kernels = nlohmann::json::array();
    for (const CastKernel& k : package.kernels) {
        nlohmann::json cubins = nlohmann::json::object();
        for (const auto& [arch, bytes] : k.cubins)
            cubins[arch] = castCubinPath(k.id, arch);
        nlohmann::json ptx = nullptr;
        if (k.ptx)
            ptx = {{"path", castPtxPath(k.id)}, {"arch", k.ptxArch}};
        nlohmann::json card{{"id", k.cardId}, {"op", k.op}, {"overload", k.overload}, {"args", k.args}};
        if (!k.region.is_null())
            card["region"] = k.region;
        kernels.push_back({{"id", k.id},
                           {"card", card},
                           {"kind", kernelKindName(k.kind)},
                           {"guard", guardToJson(k.guard)},
                           {"cubins", cubins},
                           {"ptx", ptx},
                           {"source", k.kind == KernelKind::Custom ? nlohmann::json(castSourcePath(k.id)) : nullptr},
                           {"launch_plan", k.launchPlan},
                           {"speedup", k.speedup},
                           {"timing", {{"median_us", k.medianUs}, {"spread_percent", k.spreadPercent}}},
                           {"validation", k.validation},
                           {"fallback_reason", k.fallbackReason}});
    }
    return {{"kernels", kernels},
            {"model", package.model ? nlohmann::json(kCastModelEntry) : nullptr},
            {"audit", kCastAuditEntry}};
}

nlohmann::json castAuditToJson(const std::vector<AuditEntry>& audit, const std::vector<std::string>& notes)
{
    nlohmann::json ops = nlohmann::json::array();
    for (const AuditEntry& a : audit)
        ops.push_back({{"card", a.cardId}, {"op", a.op}, {"decision", a.decision}, {"reason", a.reason}});
    nlohmann::json result = {{"ops", ops}};
    if (!notes.empty())
        result["notes"] = notes;
    return result;
}

std::string CastWriter::seal(nlohmann::json header, const std::vector<ZipEntry>& entries)
{
    // Checksum scheme (docs/cast-format.md): checksums.sha256 lists every other
    // entry; HEADER.json's line is the digest of its canonical form, the file
    // with the 64 digits of its own "checksums_sha256" value written as zeros.
    // HEADER then stores the digest of checksums.sha256.
    header["checksums_sha256"] = kZeroDigest;
    std::string headerText = header.dump(2) + "\n";
    std::string checksums = Sha256::hex(headerText) + "  " + kCastHeaderEntry + "\n";
    for (const ZipEntry& entry : entries)
        checksums += Sha256::hex(entry.data) + "  " + entry.name + "\n";
    const std::string checksumsDigest = Sha256::hex(checksums);
    headerText.replace(headerText.find(kZeroDigest), kZeroDigest.size(), checksumsDigest);

    std::vector<ZipEntry> all;
    all.reserve(entries.size() + 2);
    all.push_back({kCastHeaderEntry, std::move(headerText)});
    all.insert(all.end(), entries.begin(), entries.end());
    all.push_back({kCastChecksumsEntry, std::move(checksums)});
    return buildStoredZip(all);
}

Result<std::string> CastWriter::build(const CastPackage& package)
{
    CastHeader header = package.header;
    header.formatMajor = kCastFormatMajor;
    header.formatMinor = kCastFormatMinor;
    header.kernelCount = package.kernels.size();
    header.customCount = 0;
    header.fallbackCount = 0;
    header.modelIncluded = package.model.has_value();

    std::set<std::string> archs(header.architectures.begin(), header.architectures.end());
    for (const std::string& arch : header.architectures) {
        if (!isArchName(arch))
            return writeError("header architecture '" + arch + "' is not an sm_NN name");
    }
    std::vector<ZipEntry> entries;
    std::set<std::string> ids;
    entries.push_back({kCastManifestEntry, castManifestToJson(package).dump(2) + "\n"});
    entries.push_back({kCastAuditEntry, castAuditToJson(package.audit, package.auditNotes).dump(2) + "\n"});
    if (package.model)
        entries.push_back({kCastModelEntry, *package.model});
    for (const CastKernel& k : package.kernels) {
        if (!isValidCastKernelId(k.id))
            return writeError("kernel id '" + k.id + "' must be 1-64 characters of [A-Za-z0-9_-]");
        if (!ids.insert(k.id).second)
            return writeError("kernel id '" + k.id + "' is used twice");
        if (k.kind == KernelKind::Fallback) {
            ++header.fallbackCount;
            if (!k.cubins.empty() || k.ptx || !k.source.empty())
                return writeError("kernel " + k.id + ": a fallback carries no code");
            continue;
        }
        ++header.customCount;
        if (k.cubins.empty() && !k.ptx)
            return writeError("kernel " + k.id + ": no cubin and no PTX");
        for (const auto& [arch, bytes] : k.cubins) {
            if (!isArchName(arch))
                return writeError("kernel " + k.id + ": cubin architecture '" + arch + "' is not an sm_NN name");
            if (!archs.count(arch))
                return writeError("kernel " + k.id + ": cubin architecture " + arch +
                                  " is not listed in the header's architectures");
            entries.push_back({castCubinPath(k.id, arch), bytes});
        }
        if (k.ptx) {
            if (archNumber(k.ptxArch) < 0 || k.ptxArch.rfind("compute_", 0) != 0)
                return writeError("kernel " + k.id + ": PTX architecture '" + k.ptxArch + "' is not compute_NN");
            entries.push_back({castPtxPath(k.id), *k.ptx});
        }
        entries.push_back({castSourcePath(k.id), k.source});
    }
    header.entryCount = entries.size() + 2;
    if (header.entryCount >= 0xFFFF)
        return writeError("too many entries for one package");
    std::uint64_t total = 0;
    for (const ZipEntry& e : entries) {
        if (e.data.size() > CastLimits{}.maxEntryBytes)
            return writeError("entry '" + e.name + "' exceeds " + std::to_string(CastLimits{}.maxEntryBytes) +
                              " bytes");
        total += e.data.size();
    }
    if (total >= (CastLimits{}.maxTotalBytes))
        return writeError("package contents exceed " + std::to_string(CastLimits{}.maxTotalBytes) + " bytes");
    return seal(castHeaderToJson(header), entries);
}

Result<void> CastWriter::write(const CastPackage& package, const std::filesystem::path& path)
{
    auto bytes = build(package);
    if (!bytes)
        return Error{bytes.error().code, bytes.error().message, path.string()};
    return writeFileAtomically(path, bytes.value());
}

} // namespace kforge::core
