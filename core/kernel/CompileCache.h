#pragma once
// Compiled candidates by cache key: a bounded in-memory LRU in front of an optional directory.

#include "kernel/KernelSource.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace kforge::core {

/// Stores CompiledKernel values (successful and failed compiles alike: the same source fails the
/// same way) under the key NvrtcCompiler::cacheKey() computes.
///
/// Memory: at most `capacity` entries; the least recently used one is evicted first.
/// Disk (optional): `<dir>/<key>.cubin`, `<key>.ptx` and `<key>.json` (ok flag, log, diagnostics and
/// the SHA-256 and size of the cubin and PTX). Each file is written with writeFileAtomically, the
/// .json last, so it is the commit record: an entry whose .json is missing or unreadable, names
/// another key, or whose .cubin/.ptx do not match the recorded digests (truncated, replaced, or from
/// a crash between writes) is a miss. A disk entry is never an error: unreadable entries are simply
/// misses and a failed write only counts in Stats::diskWriteFailures; the next store rewrites them.
///
/// Threads: every method may be called from any thread. One mutex guards the memory map (held only
/// for map operations and a pointer copy); a second one serializes disk reads and writes, so a slow
/// fsync never blocks memory hits. Several processes may share a directory: each file is replaced
/// atomically and a reader validates what it reads.
class CompileCache {
public:
    struct Stats {
        std::uint64_t memoryHits = 0;
        std::uint64_t diskHits = 0;
        std::uint64_t misses = 0;
        std::uint64_t stores = 0;
        std::uint64_t evictions = 0;
        std::uint64_t diskWriteFailures = 0;
    };

    static constexpr std::size_t kDefaultCapacity = 256;

    /// `diskDirectory` empty: memory only. The directory is created on the first store.
    explicit CompileCache(std::filesystem::path diskDirectory = {}, std::size_t capacity = kDefaultCapacity);

    CompileCache(const CompileCache&) = delete;
    CompileCache& operator=(const CompileCache&) = delete;

    /// The stored kernel with fromCache=true and compileMs=0, or nullopt. A disk hit is promoted to
    /// memory.
    std::optional<CompiledKernel> lookup(const std::string& key);

    /// Memory only (never touches the disk); does not count a miss.
    std::optional<CompiledKernel> lookupInMemory(const std::string& key);

    /// Stores `kernel` under `key` in memory and, when a directory is set, on disk.
    void store(const std::string& key, const CompiledKernel& kernel);

    Stats stats() const;
    std::size_t size() const;
    std::size_t capacity() const { return m_capacity; }
    const std::filesystem::path& diskDirectory() const { return m_diskDirectory; }

    /// The three files of an entry (for tests and tools).
    std::filesystem::path cubinPath(const std::string& key) const;
    std::filesystem::path ptxPath(const std::string& key) const;
    std::filesystem::path jsonPath(const std::string& key) const;

private:
    using Entry = std::shared_ptr<const CompiledKernel>;
    struct Slot {
        Entry kernel;
        std::list<std::string>::iterator recency; // position in m_recency
    };

    Entry findInMemoryLocked(const std::string& key);
    void insertInMemoryLocked(const std::string& key, Entry kernel);
    Entry readFromDisk(const std::string& key) const;
    bool writeToDisk(const std::string& key, const CompiledKernel& kernel) const;
    static CompiledKernel served(const Entry& entry);

    const std::filesystem::path m_diskDirectory;
    const std::size_t m_capacity;

    mutable std::mutex m_memoryMutex;
    std::unordered_map<std::string, Slot> m_entries; // guarded by m_memoryMutex
    std::list<std::string> m_recency;                // most recent first; guarded by m_memoryMutex
    Stats m_stats;                                   // guarded by m_memoryMutex

    mutable std::mutex m_diskMutex; // serializes disk I/O (writeFileAtomically's temp name is per process)
};

} // namespace kforge::core
