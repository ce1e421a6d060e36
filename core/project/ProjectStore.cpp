#include "project/ProjectStore.h"

#include "project/ProjectJson.h"
#include "util/AtomicFile.h"
#include "util/BoundedJson.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace kforge::core {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kFormatTag = "kforge-project";

// Project files are bounded like any file from outside (docs/project-format.md): a real cards.json
// is a few MiB for the largest models; a parsed value takes up to ~40 bytes per byte of text.
constexpr JsonLimits kProjectJsonLimits{64u << 20, 64};

Result<json> readJsonFile(const fs::path& path)
{
    auto text = readWholeFile(path);
    if (!text)
        return text.error();
    auto parsed = parseBoundedJson(text.value(), kProjectJsonLimits);
    if (!parsed) {
        std::string message = parsed.error().message;
        if (message.rfind("malformed JSON", 0) == 0)
            message.replace(0, 14, "damaged JSON");
        return makeError(ErrorCode::InvalidArgument, message, path.string());
    }
    return std::move(parsed.value());
}

constexpr const char* kStagingInfix = ".kforge-staging-";
constexpr const char* kSearchDir = "search";
// A staging directory is created, then locked: one younger than this whose process runs may be
// in between, and is left alone.
constexpr auto kStagingCreationGrace = std::chrono::seconds(10);

// The pid of ".NAME.kforge-staging-PID", or 0 when `name` is not a staging directory's name.
long stagingPid(const std::string& name)
{
    const std::size_t at = name.rfind(kStagingInfix);
    if (name.empty() || name[0] != '.' || at == std::string::npos || at < 2)
        return 0;
    const std::string digits = name.substr(at + std::strlen(kStagingInfix));
    if (digits.empty() || digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return 0;
    return std::stol(digits);
}

bool youngerThan(const fs::path& path, std::chrono::seconds age)
{
    std::error_code ec;
    const auto modified = fs::last_write_time(path, ec);
    return !ec && fs::file_time_type::clock::now() - modified < age;
}

bool removeTemporary(const fs::path& file)
{
    std::error_code ec;
    return fs::is_regular_file(fs::symlink_status(file, ec)) && isAtomicTemporaryName(file.filename().string()) &&
        fs::remove(file, ec);
}

} // namespace

namespace {

Result<Project> openProjectUnguarded(const fs::path& dir)
{
    std::error_code ec;
    if (!fs::exists(dir, ec))
        return makeError(ErrorCode::NotFound, "no such project directory", dir.string());
    if (!fs::is_directory(dir, ec))
        return makeError(ErrorCode::InvalidArgument, "not a directory", dir.string());
    const fs::path projectFile = dir / ProjectPaths::kProjectFile;
    if (!fs::exists(projectFile, ec))
        return makeError(ErrorCode::InvalidArgument, "not a Kernel Forge project (no project.json)", dir.string());

    auto header = readJsonFile(projectFile);
    if (!header)
        return header.error();
    const json& h = header.value();
    if (!h.is_object() || !h.contains("format") || !h.at("format").is_string() ||
        h.at("format").get<std::string>() != kFormatTag || !h.contains("format_version") ||
        !h.at("format_version").is_number_integer() || h.at("format_version").get<std::int64_t>() < 1 ||
        h.at("format_version").get<std::int64_t>() > 1000000)
        return makeError(ErrorCode::InvalidArgument, "not a Kernel Forge project file", projectFile.string());
    Project project;
    project.formatVersion = h.at("format_version").get<int>();
    if (project.formatVersion > Project::kFormatVersion)
        return makeError(ErrorCode::InvalidArgument,
                         "written by a newer Kernel Forge (format " + std::to_string(project.formatVersion) +
                             ", this build reads up to " + std::to_string(Project::kFormatVersion) + ")",
                         projectFile.string());
    if (!h.contains("capture"))
        return makeError(ErrorCode::InvalidArgument, "missing field 'capture'", projectFile.string());
    auto capture = captureInfoFromJson(h.at("capture"), projectFile.string() + ": capture");
    if (!capture)
        return capture.error();
    project.capture = std::move(capture.value());

    const fs::path cardsFile = dir / ProjectPaths::kCardsFile;
    auto cards = readJsonFile(cardsFile);
    if (!cards)
        return cards.error();
    if (!cards->is_object() || !cards->contains("cards") || !cards->at("cards").is_array())
        return makeError(ErrorCode::InvalidArgument, "missing 'cards' array", cardsFile.string());
    const json& list = cards->at("cards");
    for (size_t i = 0; i < list.size(); ++i) {
        auto card = cardFromJson(list[i], cardsFile.string() + ": cards[" + std::to_string(i) + "]");
        if (!card)
            return card.error();
        project.cards.push_back(std::move(card.value()));
    }

    // graph.json: optional (projects captured before it have none and simply find no regions).
    const fs::path graphFile = dir / ProjectPaths::kGraphFile;
    if (fs::exists(fs::symlink_status(graphFile, ec))) {
        auto graph = readJsonFile(graphFile);
        if (!graph)
            return graph.error();
        auto parsed = callGraphFromJson(graph.value(), project.cards, graphFile.string());
        if (!parsed)
            return parsed.error();
        project.graph = std::move(parsed.value());
    }
    return project;
}

} // namespace

Result<Project> openProject(const fs::path& dir)
{
    // The readers check types before every access; this is the net under them, so that no JSON
    // exception from a damaged or hostile file ever reaches a caller.
    try {
        return openProjectUnguarded(dir);
    } catch (const json::exception& e) {
        return makeError(ErrorCode::InvalidArgument, "damaged project file: " + jsonExceptionText(e), dir.string());
    }
}

Result<void> saveProject(const fs::path& dir, const Project& project)
{
    json cards = json::array();
    for (const OperatorCard& card : project.cards)
        cards.push_back(toJson(card));
    // cards.json first: project.json is the marker that makes a directory a project.
    auto written = writeFileAtomically(dir / ProjectPaths::kCardsFile, json{{"cards", cards}}.dump(1) + "\n");
    if (!written)
        return written;
    if (!project.graph.empty()) {
        written = writeFileAtomically(dir / ProjectPaths::kGraphFile, toJson(project.graph).dump() + "\n");
        if (!written)
            return written;
    }
    const json header{
        {"format", kFormatTag}, {"format_version", project.formatVersion}, {"capture", toJson(project.capture)}};
    return writeFileAtomically(dir / ProjectPaths::kProjectFile, header.dump(1) + "\n");
}

Result<ProjectLock> lockProjectForWriting(const fs::path& dir, const std::string& activity)
{
    auto lock = ProjectLock::acquire(dir, activity);
    if (lock)
        removeStaleTemporaries(dir);
    return lock;
}

int removeStaleTemporaries(const fs::path& dir)
{
    int removed = 0;
    std::error_code ec;
    // The project's own files at the top; everything under search/ is written by writers only.
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string entry = it->path().filename().string();
        for (const char* name : {ProjectPaths::kProjectFile, ProjectPaths::kCardsFile, ProjectPaths::kGraphFile}) {
            if (entry.rfind(std::string(name) + ".tmp-", 0) == 0 && removeTemporary(it->path()))
                ++removed;
        }
    }
    const fs::path search = dir / kSearchDir;
    if (!fs::is_directory(fs::symlink_status(search, ec)))
        return removed;
    for (fs::recursive_directory_iterator it(search, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
        if (removeTemporary(it->path()))
            ++removed;
    }
    return removed;
}

std::vector<std::string> removeStaleStaging(const fs::path& parent)
{
    std::vector<std::string> removed;
    std::error_code ec;
    std::vector<fs::path> candidates;
    for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
        if (stagingPid(it->path().filename().string()) > 0 && fs::is_directory(fs::symlink_status(it->path(), ec)))
            candidates.push_back(it->path());
    }
    for (const fs::path& dir : candidates) {
        const long pid = stagingPid(dir.filename().string());
        ProjectLock probe; // held while the directory is removed
        if (fs::exists(fs::symlink_status(dir / ProjectLock::kFileName, ec))) {
            auto taken = ProjectLock::acquire(dir, "capture cleanup");
            if (!taken)
                continue; // a live capture holds it (or it cannot be locked: leave it)
            if (processIsAlive(pid) && youngerThan(dir, kStagingCreationGrace))
                continue;
            probe = std::move(taken.value());
        } else if (processIsAlive(pid)) {
            continue; // a capture of an older kforge (no lock file) may still run
        }
        fs::remove_all(dir, ec);
        if (!ec)
            removed.push_back("removed " + dir.string() + ", left by a capture that was stopped (pid " +
                              std::to_string(pid) + ")");
    }
    return removed;
}

Result<StagingDir> beginStaging(const fs::path& target)
{
    std::error_code ec;
    const fs::path absolute = fs::absolute(target, ec);
    if (ec || absolute.filename().empty())
        return makeError(ErrorCode::InvalidArgument, "not a usable project path", target.string());
    if (fs::exists(absolute, ec)) {
        if (!fs::is_directory(absolute, ec))
            return makeError(ErrorCode::AlreadyExists, "exists and is not a directory", target.string());
        if (fs::exists(absolute / ProjectPaths::kProjectFile, ec))
            return makeError(ErrorCode::AlreadyExists,
                             "already holds a Kernel Forge project (choose another folder or remove it first)",
                             target.string());
        if (!fs::is_empty(absolute, ec))
            return makeError(ErrorCode::AlreadyExists, "folder is not empty", target.string());
    }
    const fs::path parent = absolute.parent_path();
    if (!fs::is_directory(parent, ec))
        return makeError(ErrorCode::NotFound, "parent folder does not exist", parent.string());
    StagingDir staging;
    staging.removedLeftovers = removeStaleStaging(parent);
    staging.path = parent / ("." + absolute.filename().string() + kStagingInfix + std::to_string(::getpid()));
    fs::remove_all(staging.path, ec);
    if (!fs::create_directory(staging.path, ec) || ec)
        return makeError(ErrorCode::Io, "cannot create the project folder: " + ec.message(), target.string());
    auto lock = ProjectLock::acquire(staging.path, "capture");
    if (!lock) {
        discardStaging(staging.path);
        return makeError(lock.error().code, "cannot lock the project folder being written: " + lock.error().message,
                         target.string());
    }
    staging.lock = std::move(lock.value());
    return staging;
}

Result<void> commitStaging(const fs::path& staging, const fs::path& target)
{
    std::error_code ec;
    const fs::path absolute = fs::absolute(target, ec);
    // rename(2) replaces an empty directory atomically; anything else was refused by beginStaging.
    if (::rename(staging.c_str(), absolute.c_str()) != 0) {
        const std::string reason = std::strerror(errno);
        discardStaging(staging);
        return makeError(ErrorCode::Io, "cannot move the project into place: " + reason, target.string());
    }
    return syncDirectory(absolute.parent_path());
}

void discardStaging(const fs::path& staging)
{
    std::error_code ec;
    fs::remove_all(staging, ec);
}

} // namespace kforge::core
