#include "cast_export/SanitizerVerdictCache.h"

#include "project/ProjectStore.h"
#include "util/AtomicFile.h"
#include "util/Hash.h"
#include "util/UtcTime.h"
#include "util/Version.h"

#include <algorithm>
#include <vector>

namespace kforge::core {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kFormat = 1;

// "call-0.pt 1048576 1764600000123456789" per sample file, in name order; "" when there are none.
std::string sampleFiles(const fs::path& dir)
{
    std::vector<std::string> lines;
    std::error_code ec;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
        std::error_code statError;
        const auto size = entry.file_size(statError);
        const auto modified = entry.last_write_time(statError);
        if (statError)
            continue;
        lines.push_back(entry.path().filename().string() + " " + std::to_string(size) + " " +
                        std::to_string(modified.time_since_epoch().count()));
    }
    std::sort(lines.begin(), lines.end());
    std::string text;
    for (const std::string& line : lines)
        text += line + "\n";
    return text;
}

} // namespace

SanitizerVerdictInputs sanitizerVerdictInputs(const OperatorCard& card, const SearchNode& node,
                                              const fs::path& projectDir, const json& workerInfo,
                                              const std::string& nvrtcVersion, const std::string& sanitizerPath)
{
    // The worker's pid changes with every start and says nothing about the verdict.
    json worker = workerInfo;
    if (worker.is_object())
        worker.erase("pid");
    const json material{{"format", kFormat},
                        {"card", card.key},
                        {"source", node.candidate.source},
                        {"plan", node.candidate.launchPlan},
                        {"samples", sampleFiles(projectDir / ProjectPaths::kSamplesDir / card.id)},
                        {"worker", worker},
                        {"nvrtc", nvrtcVersion},
                        {"kforge", kKforgeVersion},
                        {"sanitizer", sanitizerPath}};
    return SanitizerVerdictInputs{material.dump()};
}

fs::path SanitizerVerdictCache::fileFor(const SanitizerVerdictInputs& inputs) const
{
    return m_dir / (fnv1a64Hex(inputs.material) + ".json");
}

std::optional<json> SanitizerVerdictCache::find(const SanitizerVerdictInputs& inputs) const
{
    auto text = readWholeFile(fileFor(inputs));
    if (!text)
        return std::nullopt;
    try {
        const json stored = json::parse(text.value());
        // Same file name, other inputs (a hash collision) or a damaged entry: not this verdict.
        if (stored.value("inputs", std::string()) != inputs.material || !stored.contains("record") ||
            !stored["record"].is_object() || stored["record"].value("passed", false) != true)
            return std::nullopt;
        json record = stored["record"];
        record["reused"] = json{{"checked_utc", stored.value("checked_utc", std::string())}};
        return record;
    } catch (const json::exception&) {
        return std::nullopt;
    }
}

void SanitizerVerdictCache::storePassed(const SanitizerVerdictInputs& inputs, const json& record) const
{
    if (!record.is_object() || record.value("passed", false) != true)
        return;
    std::error_code ec;
    fs::create_directories(m_dir, ec);
    const json stored{{"inputs", inputs.material}, {"checked_utc", utcNowIso8601()}, {"record", record}};
    (void)writeFileAtomically(fileFor(inputs), stored.dump());
}

} // namespace kforge::core
