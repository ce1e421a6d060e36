#pragma once
// Writes .cast packages (docs/cast-format.md). Stateless; every function may be
// called from any thread. The writer validates what it is given (kernel ids,
// architecture names, kinds) so that it never produces a package the reader
// would refuse.

#include "cast/CastPackage.h"
#include "cast/ZipArchive.h"
#include "util/Result.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace kforge::core {

class CastWriter {
public:
    /// The archive bytes for `package`. The header's counts, entry count, format
    /// version and checksum are computed here; the caller's values for them are
    /// ignored.
    static Result<std::string> build(const CastPackage& package);

    /// build() then writeFileAtomically(): `path` holds the old file or the whole
    /// new package.
    static Result<void> write(const CastPackage& package, const std::filesystem::path& path);

    /// The sealing step on its own: HEADER.json (from `header`, with
    /// "checksums_sha256" filled in) first, `entries` in order, checksums.sha256
    /// last. Does not check names or the manifest; tests use it to craft packages
    /// whose checksums are valid but whose contents are not.
    static std::string seal(nlohmann::json header, const std::vector<ZipEntry>& entries);
};

/// The JSON written to HEADER.json (with an empty checksum) / manifest.json /
/// audit.json.
nlohmann::json castHeaderToJson(const CastHeader& header);
nlohmann::json castManifestToJson(const CastPackage& package);
/// audit.json; "notes" is written only when `notes` is not empty.
nlohmann::json castAuditToJson(const std::vector<AuditEntry>& audit, const std::vector<std::string>& notes = {});

/// Entry paths of a kernel's files.
std::string castCubinPath(const std::string& kernelId, const std::string& arch);
std::string castPtxPath(const std::string& kernelId);
std::string castSourcePath(const std::string& kernelId);
/// True when `id` is 1-64 characters of [A-Za-z0-9_-].
bool isValidCastKernelId(const std::string& id);

/// Entry names fixed by the format.
inline constexpr const char* kCastHeaderEntry = "HEADER.json";
inline constexpr const char* kCastChecksumsEntry = "checksums.sha256";
inline constexpr const char* kCastManifestEntry = "manifest.json";
inline constexpr const char* kCastAuditEntry = "audit.json";
inline constexpr const char* kCastModelEntry = "model.pt";

} // namespace kforge::core
