#include "search/TreeStore.h"

#include "model/SearchTreeJson.h"
#include "util/AtomicFile.h"
#include "util/BoundedJson.h"
#include "util/Utf8Text.h"

#include <nlohmann/json.hpp>

#include <ctime>
#include <exception>
#include <system_error>

namespace kforge::core {
namespace {

// A tree file stays far below these (text blobs live outside it, strings in it are cut: docs/search.md,
// "Bounded storage"); the depth cap keeps the recursive copies and dumps of a node's details shallow.
constexpr JsonLimits kTreeJsonLimits{.maxBytes = 256u << 20, .maxDepth = 64, .maxValues = 8000000};

} // namespace

std::filesystem::path TreeStore::defaultPath(const std::filesystem::path& projectDir, const std::string& cardId)
{
    return projectDir / "search" / cardId / "tree.json";
}

bool TreeStore::exists() const
{
    std::error_code ec;
    return std::filesystem::is_regular_file(m_file, ec);
}

TextBlobStore TreeStore::blobs() const
{
    return TextBlobStore(m_file.parent_path() / "blobs");
}

Result<void> TreeStore::save(const SearchTree& tree) const
{
    const std::string file = m_file.string();
    if (m_file.has_parent_path()) {
        std::error_code ec;
        std::filesystem::create_directories(m_file.parent_path(), ec);
        if (ec)
            return makeError(ErrorCode::Io, "cannot create the directory: " + ec.message(),
                             m_file.parent_path().string());
    }
    std::string bytes;
    try {
        bytes = dumpSearchTreeJson(toJson(tree), 1) + "\n";
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Io, std::string("cannot encode the search tree: ") + e.what(), file);
    }
    if (auto written = writeFileAtomically(m_file, bytes); !written) {
        Error error = written.error();
        if (error.context.empty())
            error.context = file;
        return error;
    }
    return {};
}

Result<SearchTree> TreeStore::load() const
{
    const std::string file = m_file.string();
    std::error_code ec;
    if (const auto size = std::filesystem::file_size(m_file, ec); !ec && size > kTreeJsonLimits.maxBytes)
        return makeError(ErrorCode::InvalidArgument,
                         "damaged search tree: " + std::to_string(size) + " bytes, over the limit of " +
                             std::to_string(kTreeJsonLimits.maxBytes) + " bytes",
                         file);
    auto bytes = readWholeFile(m_file);
    if (!bytes) {
        Error error = bytes.error();
        if (error.code == ErrorCode::NotFound)
            return makeError(ErrorCode::NotFound, "no search tree file", file);
        if (error.context.empty())
            error.context = file;
        return error;
    }
    if (bytes->empty())
        return makeError(ErrorCode::InvalidArgument, "damaged search tree: the file is empty", file);
    auto parsed = parseBoundedJson(bytes.value(), kTreeJsonLimits);
    if (!parsed)
        return makeError(ErrorCode::InvalidArgument, "damaged search tree: " + parsed.error().message, file);
    const nlohmann::json& json = parsed.value();
    auto tree = searchTreeFromJson(json, "");
    if (!tree) {
        Error error = tree.error();
        error.message = "damaged search tree: " + error.message;
        if (error.code == ErrorCode::Unsupported)
            error.message = "search tree " + tree.error().message;
        error.context = error.context.empty() ? file : file + " " + error.context;
        return error;
    }
    return tree;
}

Result<SearchTree> TreeStore::openForRun(const std::string& cardId, std::uint64_t seed, bool resume) const
{
    if (!exists())
        return SearchTree(cardId, seed);
    if (!resume)
        return makeError(ErrorCode::AlreadyExists,
                         "a search tree exists already: --resume continues it, --restart starts a new one (the old "
                         "file is kept)",
                         m_file.string());
    auto tree = load();
    if (!tree)
        return tree.error();
    if (tree->cardId() != cardId)
        return makeError(ErrorCode::InvalidArgument,
                         "the search tree belongs to card '" + excerptForMessage(tree->cardId(), 80) + "', not '" +
                             cardId + "'",
                         m_file.string());
    // Candidates a parallel search had in flight when it was killed: never evaluated, kept as such.
    for (const SearchNode& node : std::vector<SearchNode>(tree->nodes())) {
        if (!isInFlight(node.status))
            continue;
        Evaluation abandoned;
        abandoned.status = NodeStatus::Abandoned;
        abandoned.failureReason = "interrupted: the search ended before this candidate was evaluated";
        if (auto recorded = tree->recordEvaluation(node.id, abandoned); !recorded)
            return recorded.error();
    }
    // Nothing grows from a failed root: start again, keeping the failed one on record.
    if (tree->rootFailed()) {
        if (auto retried = tree->retryRoot(); !retried)
            return retried.error();
    }
    return tree;
}

Result<std::filesystem::path> TreeStore::moveAside() const
{
    if (!exists())
        return makeError(ErrorCode::NotFound, "no search tree file", m_file.string());
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    const std::string stem = m_file.stem().string() + "-" + stamp;
    const std::string extension = m_file.extension().string();
    std::error_code ec;
    std::filesystem::path target;
    for (int k = 1;; ++k) {
        target = m_file.parent_path() / (stem + (k == 1 ? std::string() : "-" + std::to_string(k)) + extension);
        if (!std::filesystem::exists(target, ec))
            break;
        if (k >= 1000)
            return makeError(ErrorCode::Io, "cannot find a free name to keep the old tree under", m_file.string());
    }
    std::filesystem::rename(m_file, target, ec);
    if (ec)
        return makeError(ErrorCode::Io, "cannot move the old tree aside to " + target.string() + ": " + ec.message(),
                         m_file.string());
    if (auto synced = syncDirectory(m_file.parent_path()); !synced)
        return synced.error();
    return target;
}

} // namespace kforge::core
