#include "search/TreeStore.h"

#include "search/SearchTreeJson.h"
#include "util/AtomicFile.h"

#include <nlohmann/json.hpp>

#include <system_error>

namespace kforge::core {

std::filesystem::path TreeStore::defaultPath(const std::filesystem::path& projectDir, const std::string& cardId)
{
    return projectDir / "search" / cardId / "tree.json";
}

bool TreeStore::exists() const
{
    std::error_code ec;
    return std::filesystem::is_regular_file(m_file, ec);
}

Result<void> TreeStore::save(const SearchTree& tree) const
{
    const std::string file = m_file.string();
    if (m_file.has_parent_path()) {
        std::error_code ec;
        std::filesystem::create_directories(m_file.parent_path(), ec);
        if (ec)
            return makeError(ErrorCode::Io, "cannot create the directory: " + ec.message(), m_file.parent_path().string());
    }
    std::string bytes = toJson(tree).dump(1) + "\n";
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
    auto bytes = readWholeFile(m_file);
    if (!bytes) {
        Error error = bytes.error();
        if (error.code == ErrorCode::NotFound)
            return makeError(ErrorCode::NotFound, "no search tree file", file);
        if (error.context.empty())
            error.context = file;
        return error;
    }
    nlohmann::json json;
    try {
        json = nlohmann::json::parse(bytes.value());
    } catch (const nlohmann::json::parse_error& e) {
        return makeError(ErrorCode::InvalidArgument,
                         "damaged search tree: not valid JSON at byte " + std::to_string(e.byte) +
                             (bytes->empty() ? " (the file is empty)" : ""),
                         file);
    }
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
        return makeError(ErrorCode::AlreadyExists, "a search tree exists already; resume it or remove the file",
                         m_file.string());
    auto tree = load();
    if (!tree)
        return tree.error();
    if (tree->cardId() != cardId)
        return makeError(ErrorCode::InvalidArgument,
                         "the search tree belongs to card '" + tree->cardId() + "', not '" + cardId + "'",
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
    return tree;
}

} // namespace kforge::core
