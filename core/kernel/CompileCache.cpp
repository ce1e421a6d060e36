#include "kernel/CompileCache.h"

#include "util/AtomicFile.h"
#include "util/Sha256.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <system_error>

namespace kforge::core {
namespace {

constexpr int kDiskFormat = 1;

// Keys become file names, so only plain hex digests go to disk.
bool isDiskSafeKey(const std::string& key)
{
    return !key.empty() && key.size() <= 128 &&
        std::all_of(key.begin(), key.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::optional<DiagnosticSeverity> severityFromName(const std::string& name)
{
    for (DiagnosticSeverity severity :
         {DiagnosticSeverity::Error, DiagnosticSeverity::Warning, DiagnosticSeverity::Remark}) {
        if (name == diagnosticSeverityName(severity))
            return severity;
    }
    return std::nullopt;
}

std::string_view bytesOf(const std::vector<std::uint8_t>& bytes)
{
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

nlohmann::json metadataJson(const std::string& key, const CompiledKernel& kernel)
{
    nlohmann::json diagnostics = nlohmann::json::array();
    for (const Diagnostic& d : kernel.diagnostics) {
        diagnostics.push_back({{"file", d.file},
                               {"line", d.line},
                               {"column", d.column},
                               {"severity", diagnosticSeverityName(d.severity)},
                               {"message", d.message}});
    }
    return {{"format", kDiskFormat},
            {"key", key},
            {"ok", kernel.ok},
            {"log", kernel.log},
            {"diagnostics", std::move(diagnostics)},
            {"cubinSize", kernel.cubin.size()},
            {"cubinSha256", Sha256::hex(bytesOf(kernel.cubin))},
            {"ptxSize", kernel.ptx.size()},
            {"ptxSha256", Sha256::hex(kernel.ptx)}};
}

} // namespace

CompileCache::CompileCache(std::filesystem::path diskDirectory, std::size_t capacity)
    : m_diskDirectory(std::move(diskDirectory)), m_capacity(std::max<std::size_t>(capacity, 1))
{
}

std::filesystem::path CompileCache::cubinPath(const std::string& key) const
{
    return m_diskDirectory / (key + ".cubin");
}

std::filesystem::path CompileCache::ptxPath(const std::string& key) const
{
    return m_diskDirectory / (key + ".ptx");
}

std::filesystem::path CompileCache::jsonPath(const std::string& key) const
{
    return m_diskDirectory / (key + ".json");
}

CompiledKernel CompileCache::served(const Entry& entry)
{
    CompiledKernel kernel = *entry;
    kernel.fromCache = true;
    kernel.compileMs = 0;
    return kernel;
}

CompileCache::Entry CompileCache::findInMemoryLocked(const std::string& key)
{
    auto it = m_entries.find(key);
    if (it == m_entries.end())
        return nullptr;
    m_recency.splice(m_recency.begin(), m_recency, it->second.recency);
    return it->second.kernel;
}

void CompileCache::insertInMemoryLocked(const std::string& key, Entry kernel)
{
    if (auto it = m_entries.find(key); it != m_entries.end()) {
        it->second.kernel = std::move(kernel);
        m_recency.splice(m_recency.begin(), m_recency, it->second.recency);
        return;
    }
    while (m_entries.size() >= m_capacity && !m_recency.empty()) {
        m_entries.erase(m_recency.back());
        m_recency.pop_back();
        ++m_stats.evictions;
    }
    m_recency.push_front(key);
    m_entries.emplace(key, Slot{std::move(kernel), m_recency.begin()});
}

std::optional<CompiledKernel> CompileCache::lookupInMemory(const std::string& key)
{
    Entry entry;
    {
        std::lock_guard lock(m_memoryMutex);
        entry = findInMemoryLocked(key);
        if (entry)
            ++m_stats.memoryHits;
    }
    if (!entry)
        return std::nullopt;
    return served(entry);
}

std::optional<CompiledKernel> CompileCache::lookup(const std::string& key)
{
    if (std::optional<CompiledKernel> hit = lookupInMemory(key))
        return hit;
    Entry entry = readFromDisk(key);
    std::lock_guard lock(m_memoryMutex);
    if (!entry) {
        ++m_stats.misses;
        return std::nullopt;
    }
    ++m_stats.diskHits;
    insertInMemoryLocked(key, entry);
    return served(entry);
}

void CompileCache::store(const std::string& key, const CompiledKernel& kernel)
{
    auto entry = std::make_shared<CompiledKernel>(kernel);
    entry->fromCache = false;
    entry->cacheKey = key;
    const bool written = writeToDisk(key, *entry);
    std::lock_guard lock(m_memoryMutex);
    ++m_stats.stores;
    if (!written)
        ++m_stats.diskWriteFailures;
    insertInMemoryLocked(key, std::move(entry));
}

CompileCache::Stats CompileCache::stats() const
{
    std::lock_guard lock(m_memoryMutex);
    return m_stats;
}

std::size_t CompileCache::size() const
{
    std::lock_guard lock(m_memoryMutex);
    return m_entries.size();
}

CompileCache::Entry CompileCache::readFromDisk(const std::string& key) const
{
    if (m_diskDirectory.empty() || !isDiskSafeKey(key))
        return nullptr;
    std::lock_guard lock(m_diskMutex);
    Result<std::string> jsonText = readWholeFile(jsonPath(key));
    if (!jsonText)
        return nullptr;
    const nlohmann::json meta = nlohmann::json::parse(*jsonText, nullptr, /*allow_exceptions=*/false);
    if (!meta.is_object())
        return nullptr;
    try {
        if (meta.at("format").get<int>() != kDiskFormat || meta.at("key").get<std::string>() != key)
            return nullptr;
        auto kernel = std::make_shared<CompiledKernel>();
        kernel->cacheKey = key;
        kernel->ok = meta.at("ok").get<bool>();
        kernel->log = meta.at("log").get<std::string>();
        for (const nlohmann::json& d : meta.at("diagnostics")) {
            Diagnostic diagnostic;
            diagnostic.file = d.at("file").get<std::string>();
            diagnostic.line = d.at("line").get<int>();
            diagnostic.column = d.at("column").get<int>();
            std::optional<DiagnosticSeverity> severity = severityFromName(d.at("severity").get<std::string>());
            if (!severity)
                return nullptr;
            diagnostic.severity = *severity;
            diagnostic.message = d.at("message").get<std::string>();
            kernel->diagnostics.push_back(std::move(diagnostic));
        }
        Result<std::string> cubin = readWholeFile(cubinPath(key));
        Result<std::string> ptx = readWholeFile(ptxPath(key));
        if (!cubin || !ptx)
            return nullptr;
        if (cubin->size() != meta.at("cubinSize").get<std::size_t>() ||
            ptx->size() != meta.at("ptxSize").get<std::size_t>() ||
            Sha256::hex(*cubin) != meta.at("cubinSha256").get<std::string>() ||
            Sha256::hex(*ptx) != meta.at("ptxSha256").get<std::string>()) {
            return nullptr;
        }
        if (kernel->ok && cubin->empty())
            return nullptr;
        kernel->cubin.assign(cubin->begin(), cubin->end());
        kernel->ptx = std::move(*ptx);
        return kernel;
    } catch (const nlohmann::json::exception&) {
        // A field is missing or has the wrong type: a damaged entry, i.e. a miss.
        return nullptr;
    }
}

bool CompileCache::writeToDisk(const std::string& key, const CompiledKernel& kernel) const
{
    if (m_diskDirectory.empty())
        return true;
    if (!isDiskSafeKey(key))
        return false;
    std::lock_guard lock(m_diskMutex);
    std::error_code ec;
    std::filesystem::create_directories(m_diskDirectory, ec);
    if (ec)
        return false;
    // Payloads first, the .json commit record last (see the class comment).
    return writeFileAtomically(cubinPath(key), bytesOf(kernel.cubin)).ok() &&
        writeFileAtomically(ptxPath(key), kernel.ptx).ok()
        // Invalid UTF-8 in the log (echoed source bytes) is replaced rather than thrown on.
        && writeFileAtomically(jsonPath(key),
                               metadataJson(key, kernel).dump(1, ' ', false, nlohmann::json::error_handler_t::replace))
               .ok();
}

} // namespace kforge::core
