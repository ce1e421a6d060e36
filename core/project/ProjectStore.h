#pragma once
// Reading and writing project directories (docs/project-format.md).
//
// Crash safety: a new project is assembled in a hidden staging directory beside the target and
// renamed into place in one step, so an interrupted capture leaves no half-written project. Later
// saves replace each JSON file atomically (temp file + rename).
// Thread: all functions are reentrant; callers serialize writes to the same project.

#include "project/Project.h"
#include "util/Result.h"

#include <filesystem>

namespace kforge::core {

/// The files of a project directory.
struct ProjectPaths {
    static constexpr const char* kProjectFile = "project.json";
    static constexpr const char* kCardsFile = "cards.json";
    static constexpr const char* kSamplesDir = "samples";
};

/// Loads a project. Errors: NotFound (no directory), InvalidArgument (not a project, damaged or
/// newer-format JSON), each naming the file.
Result<Project> openProject(const std::filesystem::path& dir);

/// Writes cards.json and project.json of `project` into `dir` (which must exist), atomically each.
Result<void> saveProject(const std::filesystem::path& dir, const Project& project);

/// Checks that `target` can receive a new project (absent, or an empty directory; never a folder
/// that holds a project or anything else) and creates an empty staging directory beside it.
Result<std::filesystem::path> beginStaging(const std::filesystem::path& target);

/// Moves a complete staging directory to `target`. On failure the staging directory is removed.
Result<void> commitStaging(const std::filesystem::path& staging, const std::filesystem::path& target);

/// Removes a staging directory after a failed capture (best effort).
void discardStaging(const std::filesystem::path& staging);

} // namespace kforge::core
