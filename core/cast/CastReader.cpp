#include "cast/CastReader.h"

#include "cast/CastWriter.h"
#include "cast/ZipArchive.h"
#include "model/RegionChain.h"
#include "model/TensorLayout.h"
#include "util/AtomicFile.h"
#include "util/BoundedJson.h"
#include "util/Sha256.h"
#include "util/Utf8Text.h"

#include <map>
#include <new>
#include <set>
#include <stdexcept>

namespace kforge::core {
namespace {

// Thrown by the field readers below and caught in readCast(): never leaves this
// file.
struct FormatError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

[[noreturn]] void bad(const std::string& message)
{
    throw FormatError(message);
}

// The JSON entries are bounded in size and nesting before they are parsed: a
// parsed value takes up to ~40 bytes per byte of text, and copying or
// comparing one recurses once per level.
nlohmann::json parseJsonEntry(const std::string& name, std::string_view bytes, std::uint64_t maxBytes,
                              const CastLimits& limits)
{
    if (bytes.size() > maxBytes)
        bad(quotedEntryName(name) + " is " + std::to_string(bytes.size()) + " bytes, over the limit of " +
            std::to_string(maxBytes) + " bytes for this entry");
    auto parsed = parseBoundedJson(bytes,
                                   JsonLimits{static_cast<std::size_t>(maxBytes), limits.maxJsonDepth,
                                              static_cast<std::size_t>(limits.maxJsonValues)});
    if (!parsed)
        bad(escapeForTerminal(name) + ": " + parsed.error().message);
    return std::move(parsed.value());
}

const nlohmann::json& field(const nlohmann::json& object, const char* key, const std::string& where)
{
    if (!object.is_object())
        bad(where + ": expected an object");
    const auto it = object.find(key);
    if (it == object.end())
        bad(where + ": missing field \"" + key + "\"");
    return *it;
}

std::string stringField(const nlohmann::json& object, const char* key, const std::string& where)
{
    const auto& v = field(object, key, where);
    if (!v.is_string())
        bad(where + "." + key + ": expected a string");
    return v.get<std::string>();
}

std::optional<std::string> optionalString(const nlohmann::json& object, const char* key, const std::string& where)
{
    const auto& v = field(object, key, where);
    if (v.is_null())
        return std::nullopt;
    if (!v.is_string())
        bad(where + "." + key + ": expected a string or null");
    return v.get<std::string>();
}

std::uint64_t countField(const nlohmann::json& object, const char* key, const std::string& where)
{
    const auto& v = field(object, key, where);
    if (!v.is_number_unsigned())
        bad(where + "." + key + ": expected a non-negative integer");
    return v.get<std::uint64_t>();
}

std::int64_t intField(const nlohmann::json& object, const char* key, const std::string& where)
{
    const auto& v = field(object, key, where);
    if (!v.is_number_integer())
        bad(where + "." + key + ": expected an integer");
    return v.get<std::int64_t>();
}

double numberField(const nlohmann::json& object, const char* key, const std::string& where)
{
    const auto& v = field(object, key, where);
    if (!v.is_number())
        bad(where + "." + key + ": expected a number");
    return v.get<double>();
}

std::vector<std::int64_t> intList(const nlohmann::json& object, const char* key, const std::string& where)
{
    const auto& v = field(object, key, where);
    if (!v.is_array())
        bad(where + "." + key + ": expected an array of integers");
    std::vector<std::int64_t> out;
    for (const auto& x : v) {
        if (!x.is_number_integer())
            bad(where + "." + key + ": expected an array of integers");
        out.push_back(x.get<std::int64_t>());
    }
    return out;
}

CastHeader headerFromJson(const nlohmann::json& json)
{
    const std::string where = kCastHeaderEntry;
    CastHeader h;
    const auto version = parseFormatVersion(stringField(json, "format_version", where));
    if (!version)
        bad(where + ".format_version: expected MAJOR.MINOR");
    h.formatMajor = version->first;
    h.formatMinor = version->second;
    h.producer = stringField(json, "producer", where);
    h.createdUtc = stringField(json, "created_utc", where);
    const auto& archs = field(json, "architectures", where);
    if (!archs.is_array())
        bad(where + ".architectures: expected an array of sm_NN names");
    for (const auto& a : archs) {
        if (!a.is_string() || !isArchName(a.get<std::string>()))
            bad(where + ".architectures: expected an array of sm_NN names");
        h.architectures.push_back(a.get<std::string>());
    }
    h.minTorchVersion = stringField(json, "min_torch_version", where);
    h.minCudaVersion = stringField(json, "min_cuda_version", where);
    const auto& counts = field(json, "counts", where);
    h.kernelCount = countField(counts, "kernels", where + ".counts");
    h.customCount = countField(counts, "custom", where + ".counts");
    h.fallbackCount = countField(counts, "fallback", where + ".counts");
    h.entryCount = countField(counts, "entries", where + ".counts");
    const auto& model = field(json, "model_included", where);
    if (!model.is_boolean())
        bad(where + ".model_included: expected true or false");
    h.modelIncluded = model.get<bool>();
    h.checksumsSha256 = stringField(json, "checksums_sha256", where);
    return h;
}

KernelGuard guardFromJson(const nlohmann::json& json, const std::string& where)
{
    KernelGuard g;
    const auto& tensors = field(json, "tensors", where);
    if (!tensors.is_array())
        bad(where + ".tensors: expected an array");
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const std::string at = where + ".tensors[" + std::to_string(i) + "]";
        TensorGuard t;
        t.arg = stringField(tensors[i], "arg", at);
        t.dtype = stringField(tensors[i], "dtype", at);
        t.sizes = intList(tensors[i], "sizes", at);
        t.strides = intList(tensors[i], "strides", at);
        if (t.sizes.size() != t.strides.size())
            bad(at + ": sizes and strides differ in rank");
        if (const std::string why = tensorLayoutProblem(t.sizes, t.strides); !why.empty())
            bad(at + ": " + why);
        t.alignmentBytes = intField(tensors[i], "alignment_bytes", at);
        if (t.alignmentBytes < 1 || (t.alignmentBytes & (t.alignmentBytes - 1)) != 0)
            bad(at + ".alignment_bytes: expected a power of two");
        g.tensors.push_back(std::move(t));
    }
    const auto cc = intList(json, "compute_capability", where);
    if (cc.size() != 2 || cc[0] < 1 || cc[0] > 99 || cc[1] < 0 || cc[1] > 9)
        bad(where + ".compute_capability: expected [major, minor]");
    g.capabilityMajor = static_cast<int>(cc[0]);
    g.capabilityMinor = static_cast<int>(cc[1]);
    return g;
}

using EntryMap = std::map<std::string, std::string_view, std::less<>>;

std::string entryOf(const std::string& path, const EntryMap& entries, std::set<std::string>& referenced,
                    const std::string& where)
{
    const auto it = entries.find(path);
    if (it == entries.end())
        bad(where + " references entry " + quotedEntryName(path) + ", which is missing from the package");
    referenced.insert(path);
    return std::string(it->second);
}

// Moves `key` out of `object` (checked by field() first): the manifest's
// free-form parts go to the package without a second copy.
nlohmann::json takeField(nlohmann::json& object, const char* key, const std::string& where)
{
    field(object, key, where);
    return std::move(object[key]);
}

// The sizes of the entries the reader parses, checked from the central
// directory before any of them is hashed or parsed.
void checkEntrySizes(const std::vector<ZipEntryRef>& zip, const CastLimits& limits)
{
    // A line of checksums.sha256 is at most 64 hex digits, two spaces, a name of
    // at most 1024 bytes and a newline, one per other entry.
    const std::uint64_t maxChecksums = zip.size() * (64 + 2 + 1024 + 1);
    for (const ZipEntryRef& e : zip) {
        std::uint64_t limit = 0;
        if (e.name == kCastHeaderEntry)
            limit = limits.maxHeaderBytes;
        else if (e.name == kCastManifestEntry)
            limit = limits.maxManifestBytes;
        else if (e.name == kCastAuditEntry)
            limit = limits.maxAuditBytes;
        else if (e.name == kCastChecksumsEntry)
            limit = maxChecksums;
        else
            continue;
        if (e.size > limit)
            bad("entry " + quotedEntryName(e.name) + " is " + std::to_string(e.size) + " bytes, over the limit of " +
                std::to_string(limit) + " bytes for this entry");
    }
}

CastPackage verify(std::string_view archive, const std::vector<ZipEntryRef>& zip, const CastLimits& limits)
{
    if (zip.empty() || zip.front().name != kCastHeaderEntry)
        bad(std::string("the first entry must be ") + kCastHeaderEntry);
    if (zip.back().name != kCastChecksumsEntry)
        bad(std::string("the last entry must be ") + kCastChecksumsEntry);
    checkEntrySizes(zip, limits);
    const auto bytesOf = [&](const ZipEntryRef& e) { return archive.substr(e.offset, e.size); };
    const std::string_view headerText = bytesOf(zip.front());
    const nlohmann::json headerJson = parseJsonEntry(kCastHeaderEntry, headerText, limits.maxHeaderBytes, limits);

    // The version decides how everything else is read, so a newer major is
    // refused first.
    const auto version = parseFormatVersion(stringField(headerJson, "format_version", kCastHeaderEntry));
    if (!version)
        bad(std::string(kCastHeaderEntry) + ".format_version: expected MAJOR.MINOR");
    if (version->first > kCastFormatMajor)
        bad("format version " + std::to_string(version->first) + "." + std::to_string(version->second) +
            " is newer than this kforge reads (" + std::to_string(kCastFormatMajor) + ".x); update kforge");
    if (version->first < 1)
        bad("format version " + std::to_string(version->first) + "." + std::to_string(version->second) +
            " is not a released .cast version");
    CastHeader header = headerFromJson(headerJson);
    // Counts before anything is hashed or parsed per kernel: a package that
    // declares more kernels than the reader builds is refused at once.
    if (header.kernelCount > limits.maxKernels)
        bad(std::string(kCastHeaderEntry) + ".counts.kernels is " + std::to_string(header.kernelCount) +
            ", over the limit of " + std::to_string(limits.maxKernels) + " kernels");

    // Checksums: HEADER -> checksums.sha256 -> every other entry (see
    // docs/cast-format.md).
    const std::string_view checksums = bytesOf(zip.back());
    if (Sha256::hex(checksums) != header.checksumsSha256)
        bad(std::string("entry '") + kCastChecksumsEntry + "': SHA-256 does not match HEADER.json (changed byte)");
    std::map<std::string, std::string, std::less<>> listed;
    std::size_t lineStart = 0;
    while (lineStart < checksums.size()) {
        const auto end = checksums.find('\n', lineStart);
        if (end == std::string::npos)
            bad(std::string(kCastChecksumsEntry) + ": last line is not terminated");
        const std::string_view line = checksums.substr(lineStart, end - lineStart);
        if (line.size() < 67 || line.substr(64, 2) != "  " || line.find_first_not_of("0123456789abcdef") < 64)
            bad(std::string(kCastChecksumsEntry) + ": malformed line at byte " + std::to_string(lineStart));
        if (listed.size() + 1 >= zip.size())
            bad(std::string(kCastChecksumsEntry) + ": more lines than the " + std::to_string(zip.size() - 1) +
                " other entries");
        if (!listed.emplace(line.substr(66), line.substr(0, 64)).second)
            bad(std::string(kCastChecksumsEntry) + ": entry " + quotedEntryName(line.substr(66)) + " listed twice");
        lineStart = end + 1;
    }
    EntryMap entries;
    for (const ZipEntryRef& e : zip) {
        const std::string_view data = bytesOf(e);
        entries.emplace(e.name, data);
        if (e.name == kCastChecksumsEntry)
            continue;
        const auto it = listed.find(e.name);
        if (it == listed.end())
            bad("entry " + quotedEntryName(e.name) + " is not listed in " + kCastChecksumsEntry);
        std::string digest;
        if (e.name == kCastHeaderEntry) {
            const std::string& h = header.checksumsSha256;
            const auto at = data.find(h);
            if (h.empty() || at == std::string::npos || data.find(h, at + 1) != std::string::npos)
                bad(std::string("entry '") + kCastHeaderEntry + "': checksums_sha256 must appear exactly once");
            std::string canonical(data);
            canonical.replace(at, h.size(), std::string(64, '0'));
            digest = Sha256::hex(canonical);
        } else {
            digest = Sha256::hex(data);
        }
        if (digest != it->second)
            bad("entry " + quotedEntryName(e.name) + ": SHA-256 mismatch (changed byte)");
        listed.erase(it);
    }
    if (!listed.empty())
        bad(std::string(kCastChecksumsEntry) + " lists entry " + quotedEntryName(listed.begin()->first) +
            ", which is missing from the package");

    // Manifest consistency.
    std::set<std::string> referenced{kCastHeaderEntry, kCastChecksumsEntry, kCastManifestEntry};
    const auto manifestIt = entries.find(kCastManifestEntry);
    if (manifestIt == entries.end())
        bad(std::string("entry '") + kCastManifestEntry + "' is missing");
    nlohmann::json manifest = parseJsonEntry(kCastManifestEntry, manifestIt->second, limits.maxManifestBytes, limits);
    const std::string mw = kCastManifestEntry;
    CastPackage package;
    const std::string auditPath = stringField(manifest, "audit", mw);
    const nlohmann::json audit =
        parseJsonEntry(auditPath, entryOf(auditPath, entries, referenced, mw + ".audit"), limits.maxAuditBytes, limits);
    const std::string aw = escapeForTerminal(auditPath);
    const auto& ops = field(audit, "ops", aw);
    if (!ops.is_array())
        bad(aw + ".ops: expected an array");
    if (ops.size() > limits.maxKernels)
        bad(aw + ".ops has " + std::to_string(ops.size()) + " entries, over the limit of " +
            std::to_string(limits.maxKernels));
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const std::string at = aw + ".ops[" + std::to_string(i) + "]";
        AuditEntry a{stringField(ops[i], "card", at), stringField(ops[i], "op", at),
                     stringField(ops[i], "decision", at), stringField(ops[i], "reason", at)};
        if (a.decision != "custom" && a.decision != "fallback")
            bad(at + ".decision: expected \"custom\" or \"fallback\"");
        package.audit.push_back(std::move(a));
    }
    // Optional (added in 1.0 for export remarks): a list of one-line strings.
    if (const auto notes = audit.find("notes"); notes != audit.end()) {
        if (!notes->is_array())
            bad(aw + ".notes: expected an array of strings");
        for (std::size_t i = 0; i < notes->size(); ++i) {
            if (!(*notes)[i].is_string())
                bad(aw + ".notes[" + std::to_string(i) + "]: expected a string");
            package.auditNotes.push_back((*notes)[i].get<std::string>());
        }
    }
    if (const auto model = optionalString(manifest, "model", mw))
        package.model = entryOf(*model, entries, referenced, mw + ".model");
    if (package.model.has_value() != header.modelIncluded)
        bad(std::string(kCastHeaderEntry) + ".model_included disagrees with the manifest");

    auto& kernels = field(manifest, "kernels", mw);
    if (!kernels.is_array())
        bad(mw + ".kernels: expected an array");
    // The kernel count is checked before a kernel is read.
    if (kernels.size() != header.kernelCount)
        bad(std::string(kCastHeaderEntry) + ".counts.kernels is " + std::to_string(header.kernelCount) +
            " but the package has " + std::to_string(kernels.size()));
    const std::set<std::string> archs(header.architectures.begin(), header.architectures.end());
    std::set<std::string> ids;
    std::uint64_t custom = 0;
    std::uint64_t fallback = 0;
    package.kernels.reserve(kernels.size());
    for (std::size_t i = 0; i < kernels.size(); ++i) {
        nlohmann::json& kj = manifest["kernels"][i];
        std::string where = mw + ".kernels[" + std::to_string(i) + "]";
        CastKernel k;
        k.id = stringField(kj, "id", where);
        if (!isValidCastKernelId(k.id))
            bad(where + ".id: expected 1-64 characters of [A-Za-z0-9_-]");
        if (!ids.insert(k.id).second)
            bad(where + ": kernel id '" + k.id + "' is used twice");
        where = mw + " kernel " + k.id;
        auto& card = field(kj, "card", where);
        k.cardId = stringField(card, "id", where + ".card");
        k.op = stringField(card, "op", where + ".card");
        k.overload = stringField(card, "overload", where + ".card");
        k.args = takeField(kj["card"], "args", where + ".card");
        if (!k.args.is_array())
            bad(where + ".card.args: expected an array");
        // A region kernel's chain is checked against its card where the card is rebuilt (the
        // runtime's load); here only that it is there exactly for region kernels.
        if (card.contains("region")) {
            k.region = takeField(kj["card"], "region", where + ".card");
            if (!k.region.is_object())
                bad(where + ".card.region: expected an object");
        }
        if ((k.op == kRegionOp) != k.region.is_object())
            bad(where + ".card: a " + std::string(kRegionOp) + " card has a \"region\" chain, and only it");
        const std::string kind = stringField(kj, "kind", where);
        if (kind == "custom")
            k.kind = KernelKind::Custom;
        else if (kind == "fallback")
            k.kind = KernelKind::Fallback;
        else
            bad(where + ".kind: expected \"custom\" or \"fallback\"");
        k.guard = guardFromJson(field(kj, "guard", where), where + ".guard");
        const auto& cubins = field(kj, "cubins", where);
        if (!cubins.is_object())
            bad(where + ".cubins: expected an object");
        for (const auto& [arch, path] : cubins.items()) {
            if (!isArchName(arch) || !archs.count(arch))
                bad(where + ".cubins: architecture " + quotedEntryName(arch) +
                    " is not one of the header's architectures");
            if (!path.is_string() || path.get<std::string>() != castCubinPath(k.id, arch))
                bad(where + ".cubins." + arch + ": expected \"" + castCubinPath(k.id, arch) + "\"");
            k.cubins[arch] = entryOf(castCubinPath(k.id, arch), entries, referenced, where);
        }
        const auto& ptx = field(kj, "ptx", where);
        if (!ptx.is_null()) {
            if (stringField(ptx, "path", where + ".ptx") != castPtxPath(k.id))
                bad(where + ".ptx.path: expected \"" + castPtxPath(k.id) + "\"");
            k.ptxArch = stringField(ptx, "arch", where + ".ptx");
            if (k.ptxArch.rfind("compute_", 0) != 0 || archNumber(k.ptxArch) < 0)
                bad(where + ".ptx.arch: expected compute_NN");
            k.ptx = entryOf(castPtxPath(k.id), entries, referenced, where);
        }
        const auto source = optionalString(kj, "source", where);
        if (k.kind == KernelKind::Custom) {
            ++custom;
            if (!source || *source != castSourcePath(k.id))
                bad(where + ".source: expected \"" + castSourcePath(k.id) + "\"");
            k.source = entryOf(*source, entries, referenced, where);
            if (k.cubins.empty() && !k.ptx)
                bad(where + ": a custom kernel without any cubin or PTX");
        } else {
            ++fallback;
            if (source || !k.cubins.empty() || k.ptx)
                bad(where + ": a fallback kernel must not carry code");
        }
        k.launchPlan = takeField(kj, "launch_plan", where);
        k.speedup = numberField(kj, "speedup", where);
        const auto& timing = field(kj, "timing", where);
        k.medianUs = numberField(timing, "median_us", where + ".timing");
        k.spreadPercent = numberField(timing, "spread_percent", where + ".timing");
        k.validation = takeField(kj, "validation", where);
        k.fallbackReason = stringField(kj, "fallback_reason", where);
        package.kernels.push_back(std::move(k));
    }
    for (const ZipEntryRef& e : zip) {
        if (!referenced.count(e.name))
            bad("entry " + quotedEntryName(e.name) + " is not referenced by the manifest");
    }
    const auto countMismatch = [](const char* what, std::uint64_t declared, std::uint64_t actual) {
        bad(std::string(kCastHeaderEntry) + ".counts." + what + " is " + std::to_string(declared) +
            " but the package has " + std::to_string(actual));
    };
    if (header.kernelCount != package.kernels.size())
        countMismatch("kernels", header.kernelCount, package.kernels.size());
    if (header.customCount != custom)
        countMismatch("custom", header.customCount, custom);
    if (header.fallbackCount != fallback)
        countMismatch("fallback", header.fallbackCount, fallback);
    if (header.entryCount != zip.size())
        countMismatch("entries", header.entryCount, zip.size());
    package.header = std::move(header);
    return package;
}

} // namespace

Result<CastPackage> readCast(const std::string& archive, const std::string& name, const CastLimits& limits)
{
    try {
        auto zip = scanZip(archive, limits);
        if (!zip)
            return makeError(ErrorCode::InvalidArgument, zip.error().message, name);
        return verify(archive, zip.value(), limits);
    } catch (const FormatError& e) {
        return makeError(ErrorCode::InvalidArgument, e.what(), name);
    } catch (const nlohmann::json::exception& e) {
        return makeError(ErrorCode::InvalidArgument,
                         std::string("unexpected JSON value: ") + escapeForTerminal(e.what()), name);
    } catch (const std::bad_alloc&) {
        return makeError(ErrorCode::InvalidArgument, "out of memory while reading the package", name);
    }
}

Result<CastPackage> openCast(const std::filesystem::path& path, const CastLimits& limits)
{
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec)
        return makeError(ErrorCode::NotFound, "cannot read the package: " + ec.message(), path.string());
    // Entries, their local and central headers (names of at most 1024 bytes)
    // and the end record: a larger file can only be refused, and is, before it
    // is read.
    const std::uint64_t maxFile = limits.maxTotalBytes + limits.maxEntries * (30 + 46 + 2 * 1024) + 22;
    if (size > maxFile)
        return makeError(ErrorCode::InvalidArgument,
                         "file of " + std::to_string(size) + " bytes exceeds the package size limit of " +
                             std::to_string(maxFile) + " bytes",
                         path.string());
    auto bytes = readWholeFile(path);
    if (!bytes)
        return bytes.error();
    return readCast(bytes.value(), path.string(), limits);
}

Result<std::vector<std::string>> checkCompatibility(const CastPackage& package, const std::string& arch,
                                                    const std::string& torchVersion, const std::string& cudaVersion)
{
    const int target = archNumber(arch);
    if (!isArchName(arch))
        return makeError(ErrorCode::InvalidArgument, "'" + arch + "' is not an architecture name like sm_90", "--arch");
    const CastHeader& h = package.header;
    if (!torchVersion.empty() && compareVersions(torchVersion, h.minTorchVersion) < 0)
        return makeError(ErrorCode::Unsupported,
                         "the package needs torch >= " + h.minTorchVersion + ", this is " + torchVersion);
    if (!cudaVersion.empty() && compareVersions(cudaVersion, h.minCudaVersion) < 0)
        return makeError(ErrorCode::Unsupported,
                         "the package needs CUDA >= " + h.minCudaVersion + ", this is " + cudaVersion);
    std::vector<std::string> notes;
    for (const CastKernel& k : package.kernels) {
        if (k.kind != KernelKind::Custom || k.cubins.count(arch))
            continue;
        if (k.ptx && archNumber(k.ptxArch) <= target) {
            notes.push_back("kernel " + k.id + ": no " + arch + " cubin; the driver JIT-compiles its " + k.ptxArch +
                            " PTX");
            continue;
        }
        std::string has;
        for (const auto& [a, bytes] : k.cubins)
            has += (has.empty() ? "" : ", ") + a;
        if (k.ptx)
            has += (has.empty() ? "" : ", ") + k.ptxArch + " PTX (too new)";
        return makeError(ErrorCode::Unsupported,
                         "kernel " + k.id + " has no cubin for " + arch + " and no PTX to JIT (it has " +
                             (has.empty() ? "nothing" : has) + ")");
    }
    return notes;
}

} // namespace kforge::core
