#pragma once
// Opens and verifies .cast packages (docs/cast-format.md). Everything is parsed
// in memory and nothing is extracted or executed: a package is returned only
// after the container, every CRC-32 and SHA-256, the format version and the
// manifest's consistency have been checked. Any failure is one Error whose
// toString() is a single line naming the file and the entry. Stateless and
// thread-safe.

#include "cast/CastPackage.h"
#include "util/Result.h"

#include <filesystem>
#include <string>
#include <vector>

namespace kforge::core {

/// Reads and verifies the package at `path`.
Result<CastPackage> openCast(const std::filesystem::path& path, const CastLimits& limits = {});

/// The same on archive bytes already in memory; `name` is the error context.
Result<CastPackage> readCast(const std::string& archive, const std::string& name, const CastLimits& limits = {});

/// Can this package run on a GPU of architecture `arch` ("sm_90") with this
/// torch and CUDA? Every custom kernel needs a cubin for `arch` or PTX no newer
/// than it (the driver JITs it); the versions must be at least the header's
/// minimums (an empty version is not checked). On success returns notes for the
/// user ("kernel k3: JIT from compute_80 PTX").
Result<std::vector<std::string>> checkCompatibility(const CastPackage& package, const std::string& arch,
                                                    const std::string& torchVersion, const std::string& cudaVersion);

} // namespace kforge::core
