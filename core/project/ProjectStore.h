#pragma once
// Reading and writing project directories (docs/project-format.md).
//
// Crash safety: a new project is assembled in a hidden staging directory beside the target and
// renamed into place in one step, so an interrupted capture leaves no half-written project. Later
// saves replace each JSON file atomically (temp file + rename).
//
// One writer per project: whatever writes into an existing project holds its writer lock
// (lockProjectForWriting, project/ProjectLock.h); a staging directory is locked by its capture the
// same way, which is how a later capture tells a live one from the leftover of a killed one.
// Thread: all functions are reentrant.

#include "model/Project.h"
#include "project/ProjectLock.h"
#include "util/Result.h"

#include <filesystem>
#include <string>
#include <vector>

namespace kforge::core {

/// The files of a project directory.
struct ProjectPaths {
    static constexpr const char* kProjectFile = "project.json";
    static constexpr const char* kCardsFile = "cards.json";
    static constexpr const char* kGraphFile = "graph.json"; // absent in projects captured before it
    static constexpr const char* kSamplesDir = "samples";
};

/// Loads a project. Errors: NotFound (no directory), InvalidArgument (not a project, damaged or
/// newer-format JSON), each naming the file.
Result<Project> openProject(const std::filesystem::path& dir);

/// Writes cards.json, graph.json (when the project has a graph) and project.json of `project` into
/// `dir` (which must exist), atomically each.
Result<void> saveProject(const std::filesystem::path& dir, const Project& project);

/// Takes the writer lock of the project `dir` for `activity` ("optimize"; errors as
/// ProjectLock::acquire) and, holding it, removes the temporaries of atomic writes that a killed
/// writer left (project.json.tmp-PID, cards.json.tmp-PID, search/.../*.tmp-PID): while the lock is
/// held no other writer can own one. Hold the returned lock for as long as the command may write.
Result<ProjectLock> lockProjectForWriting(const std::filesystem::path& dir, const std::string& activity);

/// Removes the stale atomic-write temporaries of the project `dir` (see lockProjectForWriting; the
/// caller holds the writer lock). Returns how many were removed.
int removeStaleTemporaries(const std::filesystem::path& dir);

/// A staging directory being filled by this process. It holds its own writer lock file, locked
/// until the directory is committed (where the file becomes the project's lock file) or discarded.
struct StagingDir {
    std::filesystem::path path;
    ProjectLock lock;
    /// One line per leftover staging directory of a dead capture that beginStaging removed.
    std::vector<std::string> removedLeftovers;
};

/// Checks that `target` can receive a new project (absent, or an empty directory; never a folder
/// that holds a project or anything else), removes the staging directories of dead captures beside
/// it (removeStaleStaging) and creates a locked, empty staging directory there.
Result<StagingDir> beginStaging(const std::filesystem::path& target);

/// Removes the staging directories ".NAME.kforge-staging-PID" in `parent` whose capture is gone:
/// their lock is free (the capture was killed; a directory younger than a few seconds whose pid
/// runs is spared, it may be being created), or they have no lock file and PID does not run.
/// A staging directory whose lock is held is never touched. Returns one line per removal.
std::vector<std::string> removeStaleStaging(const std::filesystem::path& parent);

/// Moves a complete staging directory to `target` (rename(2): it refuses a target that is no longer
/// empty, so a capture never replaces a project). On failure the staging directory is removed.
Result<void> commitStaging(const std::filesystem::path& staging, const std::filesystem::path& target);

/// Removes a staging directory after a failed capture (best effort).
void discardStaging(const std::filesystem::path& staging);

} // namespace kforge::core
